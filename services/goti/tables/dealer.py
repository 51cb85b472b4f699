"""The dealer runs every table: it seats players, asks the referee about every change to a
game, and commits each change to the store in one compare-and-set.

A command goes: load the table (one Redis call, skipped when this replica committed the
seq the command names: :mod:`goti.tables.recent`), check who may act, ask the referee (one
call), commit the new state with its events (one Lua script).  Anything the server itself
must do later — the computer's reply, a turn timer running out, a waiting table to clear
away, a finished game to count in a player's streaks — is an entry in the store's timers,
and :meth:`Dealer.handle_due` does it, whichever replica claimed it.  The replica that
commits a move against the computer claims the computer's turn in the same commit and
starts it at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, Final

import grpc

from goti.api.v1 import ai_pb2, errors_pb2, game_pb2, referee_pb2, tables_pb2
from goti.tables import events, keys, seating, validation
from goti.tables.background import cancel_and_wait
from goti.tables.options import TablesOptions
from goti.tables.peers import ComputerPlayer, PeerRefusedError, PeerUnavailableError, Referee
from goti.tables.players import RATE_WINDOW_MS, Players
from goti.tables.recent import RecentTables
from goti.tables.refusals import CallRefusedError
from goti.tables.store import (
    Change,
    Committed,
    LobbyUpdate,
    RequestReusedError,
    StaleSeqError,
    StoredTable,
    StoreUnavailableError,
    TableExistsError,
    TableNotFoundError,
    TableStore,
    TimerUpdate,
    request_key,
)

log = logging.getLogger(__name__)

_CODE_ATTEMPTS: Final = 8
_JOIN_ATTEMPTS: Final = 4
# The referee's names for the move fields, and the names a PlayRequest gives them.
_REFEREE_FIELDS: Final = {"move_path.squares": "path.squares", "move_notation": "notation"}


@dataclass(frozen=True, slots=True)
class LoadedTable:
    """A table as read from the store."""

    table_id: str
    seq: int
    record: tables_pb2.Table
    state: bytes
    """The game, as GameState bytes."""

    @classmethod
    def of(cls, table_id: str, stored: StoredTable) -> LoadedTable:
        return cls(
            table_id,
            stored.seq,
            tables_pb2.Table.FromString(stored.fields["table"]),
            stored.fields["game"],
        )


@dataclass(frozen=True, slots=True)
class SeatedTable:
    """A table as the API shows it, and the caller's role there."""

    table: tables_pb2.Table
    role: tables_pb2.Role.ValueType


@dataclass(frozen=True, slots=True)
class Rematch:
    """What a rematch request did: the events it appended, and the new table once started."""

    events: list[tables_pb2.TableEvent]
    table: SeatedTable | None


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A table's game record."""

    game: game_pb2.GameView
    pdn: str
    white: tables_pb2.Seat
    black: tables_pb2.Seat


@dataclass(frozen=True, slots=True)
class _Change:
    """A change to a game, as the referee ruled it."""

    events: list[tables_pb2.TableEvent]
    response: referee_pb2.ApplyResponse | None = None
    """The referee's answer (new state and view); None when the game itself did not change."""
    new_turn: bool = False
    """Whether a new turn starts (its timer starts again)."""


def _refused_by_peer(error: PeerRefusedError) -> CallRefusedError:
    status = error.status
    field = status.metadata.get("field")
    if field in _REFEREE_FIELDS:
        metadata = dict(status.metadata)
        metadata["field"] = _REFEREE_FIELDS[field]
        status = status._replace(metadata=metadata)
    return CallRefusedError(status)


def _unavailable(error: Exception) -> CallRefusedError:
    return CallRefusedError.unavailable(f"{error}; nothing was changed, retry shortly")


def _now_ms() -> int:
    return int(time.time() * 1000)


class Dealer:
    """Creates, seats and plays tables through the referee, the computer player and the
    store."""

    def __init__(
        self,
        store: TableStore,
        referee: Referee,
        computer: ComputerPlayer,
        players: Players,
        options: TablesOptions,
        *,
        clock_ms: Callable[[], int] = _now_ms,
    ) -> None:
        self._store = store
        self._referee = referee
        self._computer = computer
        self._players = players
        self._options = options
        self._clock_ms = clock_ms
        self._lease_ms = round(options.timer_lease_seconds * 1000)
        self._background: set[asyncio.Task[None]] = set()
        self._variants: dict[str, int] = {}
        self._recent: RecentTables[LoadedTable] = RecentTables(options.recent_tables_kept)

    @property
    def options(self) -> TablesOptions:
        return self._options

    @property
    def store(self) -> TableStore:
        return self._store

    # -- reading ------------------------------------------------------------------------------

    async def load(self, table_id: str, field: str = "table_id") -> LoadedTable:
        """The table with this id; refuses an unknown one."""
        try:
            return LoadedTable.of(table_id, await self._store.load(table_id))
        except TableNotFoundError:
            raise CallRefusedError.of(
                errors_pb2.ERROR_REASON_TABLE_NOT_FOUND,
                f"no table has the id {table_id!r}: it never existed or was cleared away",
                field=field,
            ) from None

    async def view(self, state: bytes) -> game_pb2.GameView:
        """The game as players see it."""
        try:
            return await self._referee.describe(state)
        except PeerUnavailableError as error:
            raise _unavailable(error) from error
        except PeerRefusedError as error:
            raise _refused_by_peer(error) from error

    async def seated(self, loaded: LoadedTable, player_id: str | None) -> SeatedTable:
        """The table as the API shows it, for ``player_id``."""
        view = await self.view(loaded.state)
        table = events.table_message(
            loaded.table_id,
            loaded.record,
            seq=loaded.seq,
            view=view,
            join_base_url=self._options.join_base_url,
        )
        return SeatedTable(table, seating.role_of(loaded.record, player_id))

    async def get_table(self, table_id: str, player_id: str | None) -> SeatedTable:
        """A table as of now."""
        return await self.seated(await self.load(table_id), player_id)

    async def variant_of(self, table_id: str) -> int:
        """A table's variant (it never changes, so it is remembered)."""
        variant = self._variants.get(table_id)
        if variant is None:
            variant = (await self.load(table_id)).record.variant
            if len(self._variants) > 100_000:
                self._variants.clear()
            self._variants[table_id] = variant
        return variant

    async def restore(
        self, variant: int, lean_events: Sequence[bytes]
    ) -> list[tables_pb2.TableEvent]:
        """Events from the log in their full form (the referee describes their boards)."""
        parsed = [tables_pb2.TableEvent.FromString(event) for event in lean_events]
        needed = [
            (event, events.position_state(variant, board, events.ending_of(parsed, index)))
            for index, event in enumerate(parsed)
            if (board := events.board_of(event)) is not None
        ]
        if needed:
            views = await asyncio.gather(*(self.view(state) for _, state in needed))
            for (event, _), view in zip(needed, views, strict=True):
                events.restore(event, view)
        return parsed

    async def get_record(self, table_id: str) -> GameRecord:
        """A table's game, with its PDN."""
        loaded = await self.load(table_id)
        record = loaded.record
        created = record.created_at.ToDatetime()
        tags = {
            "Event": "Goti",
            "Date": created.strftime("%Y.%m.%d"),
            "White": record.white.player.display_name or "?",
            "Black": record.black.player.display_name or "?",
        }
        try:
            view, pdn = await asyncio.gather(
                self._referee.describe(loaded.state),
                self._referee.export_pdn(loaded.state, tags),
            )
        except PeerUnavailableError as error:
            raise _unavailable(error) from error
        except PeerRefusedError as error:
            raise _refused_by_peer(error) from error
        return GameRecord(view, pdn, record.white, record.black)

    async def list_tables(
        self, variant: int, page_size: int, after: tuple[int, str] | None
    ) -> tuple[list[tables_pb2.LobbyTable], str]:
        """A page of open public tables, newest first, and the next page's token."""
        found: list[tables_pb2.LobbyTable] = []
        cursor = after
        last: tuple[int, str] | None = None
        more = False
        # Read on until one more matching table shows that another page follows.
        while not more:
            batch = await self._store.lobby_page(cursor, validation.MAX_PAGE_SIZE)
            for entry in batch:
                listing = tables_pb2.LobbyTable.FromString(entry.listing)
                cursor = (entry.opened_ms, entry.table_id)
                if variant and listing.variant != variant:
                    continue
                if len(found) == page_size:
                    more = True
                    break
                found.append(listing)
                last = cursor
            if len(batch) < validation.MAX_PAGE_SIZE:
                break
        token = validation.next_page_token(*last) if more and last is not None else ""
        return found, token

    # -- creating and joining -----------------------------------------------------------------

    async def create_table(
        self,
        player_id: str,
        request_id: str,
        fingerprint: bytes,
        *,
        variant: game_pb2.Variant.ValueType,
        starting_player: int,
        opponent: tables_pb2.Opponent.ValueType,
        visibility: tables_pb2.Visibility.ValueType,
        turn_timer_seconds: int,
    ) -> SeatedTable:
        """Create a table with the caller at it; a retried request returns the same table."""
        table_id = seating.new_table_id()
        marker = table_id.encode() + b"|" + _creation_digest(fingerprint)
        earlier = await self._store.remember_creation(
            player_id, request_id, marker, self._options.creation_memory_seconds
        )
        if earlier is not None:
            return await self._created_before(player_id, earlier, marker)
        try:
            await self._rate_limit(player_id, "create", self._options.tables_per_minute)
            seat = await self._players.seat(player_id)
            try:
                started = await self._referee.start_game(variant or game_pb2.VARIANT_ENGLISH)
            except PeerUnavailableError as error:
                raise _unavailable(error) from error
            except PeerRefusedError as error:
                raise _refused_by_peer(error) from error
            now = self._clock_ms()
            record = seating.new_table(
                creator=seat,
                creator_color=seating.creator_color(started.view.variant, starting_player),
                variant=started.view.variant,
                opponent=opponent,
                visibility=visibility,
                turn_timer_seconds=turn_timer_seconds,
                code="",
                created_ms=now,
            )
            state = started.state.SerializeToString()
            loaded = await self._open(table_id, record, state, now)
        except BaseException:
            await self._forget_creation(player_id, request_id)
            raise
        return SeatedTable(
            events.table_message(
                table_id,
                loaded.record,
                seq=0,
                view=started.view,
                join_base_url=self._options.join_base_url,
            ),
            seating.role_of(loaded.record, player_id),
        )

    async def _forget_creation(self, player_id: str, request_id: str) -> None:
        try:
            await self._store.forget_creation(player_id, request_id)
        except Exception:
            log.warning("could not forget a failed table creation", exc_info=True)

    async def _created_before(self, player_id: str, earlier: bytes, marker: bytes) -> SeatedTable:
        table_id, _, digest = earlier.partition(b"|")
        if digest != marker.partition(b"|")[2]:
            raise CallRefusedError.of(
                errors_pb2.ERROR_REASON_REQUEST_ID_REUSED,
                "this request_id was used for another table: use a fresh one per command",
                field="request_id",
            )
        try:
            return await self.seated(await self.load(table_id.decode()), player_id)
        except CallRefusedError as refusal:
            if refusal.status.reason == "TABLE_NOT_FOUND":
                raise CallRefusedError.unavailable(
                    "the table this request creates is not ready yet; retry shortly"
                ) from None
            raise

    async def _open(
        self, table_id: str, record: tables_pb2.Table, state: bytes, now: int
    ) -> LoadedTable:
        """Store a new table (drawing a free code), list it and arm its timer."""
        for _ in range(_CODE_ATTEMPTS):
            record.code = seating.new_code()
            listing = events.lobby_table(table_id, record) if seating.is_listed(record) else None
            timer_due, deadline = self._first_timer(record, state, now)
            if deadline is not None:
                record.turn_deadline.FromMilliseconds(deadline)
            waiting = record.status == tables_pb2.TABLE_STATUS_WAITING
            expire = (
                self._options.waiting_table_seconds + self._options.idle_table_seconds
                if waiting
                else self._options.idle_table_seconds
            )
            try:
                await self._store.create(
                    table_id,
                    record.code,
                    {"table": record.SerializeToString(), "game": state},
                    expire_seconds=expire,
                    lobby_score=now if listing is not None else None,
                    lobby_listing=b"" if listing is None else listing.SerializeToString(),
                    lobby_message=b"" if listing is None else events.lobby_opened(listing),
                    timer_due_ms=timer_due,
                )
            except TableExistsError:
                continue
            loaded = LoadedTable(table_id, 0, record, state)
            self._recent.remember(table_id, loaded)
            if timer_due is not None and seating.computer_color(record) is not None:
                self._in_background(self.handle_due(table_id, timer_due, committed=loaded))
            return loaded
        raise CallRefusedError.unavailable("could not draw a free table code; retry")

    def _first_timer(
        self, record: tables_pb2.Table, state: bytes, now: int
    ) -> tuple[int | None, int | None]:
        """When a new table first needs the server, and its first turn deadline."""
        if record.status == tables_pb2.TABLE_STATUS_WAITING:
            return now + self._options.waiting_table_seconds * 1000, None
        to_move = game_pb2.GameState.FromString(state).position.turn
        if seating.computer_color(record) == to_move:
            return now + self._lease_ms, None
        if record.turn_timer_seconds:
            deadline = now + record.turn_timer_seconds * 1000
            return deadline, deadline
        return None, None

    async def join_table(self, player_id: str, code: str) -> SeatedTable:
        """Take the open seat of the table with this code (or the caller's seat there)."""
        await self._rate_limit(player_id, "join", self._options.joins_per_minute)
        table_id = await self._table_for_code(code)
        for _ in range(_JOIN_ATTEMPTS):
            loaded = await self.load(table_id, field="code")
            record = loaded.record
            if seating.colors_of(record, player_id):
                return await self.seated(loaded, player_id)
            color = seating.open_color(record)
            if record.status != tables_pb2.TABLE_STATUS_WAITING or color is None:
                raise CallRefusedError.of(
                    errors_pb2.ERROR_REASON_TABLE_FULL,
                    "both seats of this table are taken: you may watch it instead",
                )
            seat = await self._players.seat(player_id)
            seat.color = color
            joined = tables_pb2.Table()
            joined.CopyFrom(record)
            seating.seat(joined, color).CopyFrom(seat)
            joined.status = tables_pb2.TABLE_STATUS_PLAYING
            try:
                await self._settle(
                    loaded,
                    _Change([events.player_joined(color, seat)], new_turn=True),
                    record=joined,
                    lobby=LobbyUpdate.UNLIST,
                )
            except StaleSeqError:
                continue
            return await self.seated(
                LoadedTable(table_id, loaded.seq + 1, joined, loaded.state), player_id
            )
        raise CallRefusedError.unavailable("the table kept changing while joining; retry")

    async def find_table(self, code: str, player_id: str | None, address: str) -> str:
        """The id of the table with this code, for a caller who wants to watch it: looked up
        at the join rate, per player or, without a token, per client address, so that codes
        cannot be tried one after another."""
        counter = (
            keys.address_rate_limit(address, "find")
            if player_id is None
            else keys.rate_limit(player_id, "find")
        )
        await self._hit_rate_limit(counter, "lookup", self._options.joins_per_minute)
        return await self._table_for_code(code)

    async def _table_for_code(self, code: str) -> str:
        table_id = await self._store.table_for_code(code)
        if table_id is None:
            raise CallRefusedError.of(
                errors_pb2.ERROR_REASON_TABLE_NOT_FOUND,
                f"no table has the code {code}: check it, or the table has ended",
                field="code",
            )
        return table_id

    async def _rate_limit(self, player_id: str, action: str, per_minute: int) -> None:
        await self._hit_rate_limit(keys.rate_limit(player_id, action), action, per_minute)

    async def _hit_rate_limit(self, counter: str, action: str, per_minute: int) -> None:
        if not per_minute:
            return
        wait_ms = await self._store.hit_rate_limit(counter, per_minute, RATE_WINDOW_MS)
        if wait_ms:
            raise CallRefusedError.of(
                errors_pb2.ERROR_REASON_RATE_LIMITED,
                f"too many {action}s in a minute; wait before trying again",
                retryAfterMs=wait_ms,
            )

    # -- commands on a game -------------------------------------------------------------------

    async def command(
        self,
        player_id: str,
        table_id: str,
        *,
        request_id: str,
        expected_seq: int,
        fingerprint: bytes,
        act: Callable[[LoadedTable, list[game_pb2.Color.ValueType]], Awaitable[_Change]],
    ) -> list[tables_pb2.TableEvent]:
        """Run one command: only a seated player may act, only on the seq they saw; a
        retried request returns the events it appended the first time."""
        key = request_key(player_id, request_id, fingerprint)
        recent = self._recent.at(table_id, expected_seq)
        if recent is not None:
            try:
                return await self._act_on(recent, player_id, key, act)
            except CallRefusedError as refusal:
                # A refusal judged on this replica's copy stands only while the table is
                # still at that seq; otherwise the caller hears what the table says now.
                if (
                    refusal.status.code == grpc.StatusCode.UNAVAILABLE
                    or await self._store.seq(table_id) == expected_seq
                ):
                    raise
                self._recent.forget(table_id)
        loaded = await self.load(table_id)
        if loaded.seq != expected_seq:
            # Spectators are refused before anything else, whatever seq they name.
            seating.acting_color(
                seating.colors_of(loaded.record, player_id),
                game_pb2.COLOR_UNSPECIFIED,
                game_pb2.COLOR_UNSPECIFIED,
            )
            try:
                found = await self._store.find_request(table_id, key)
            except RequestReusedError:
                raise _request_reused() from None
            if found is not None:
                return await self._committed_events(loaded, found)
            raise _stale(loaded.seq)
        return await self._act_on(loaded, player_id, key, act)

    async def _act_on(
        self,
        loaded: LoadedTable,
        player_id: str,
        key: bytes,
        act: Callable[[LoadedTable, list[game_pb2.Color.ValueType]], Awaitable[_Change]],
    ) -> list[tables_pb2.TableEvent]:
        colors = seating.colors_of(loaded.record, player_id)
        seating.acting_color(colors, game_pb2.COLOR_UNSPECIFIED, game_pb2.COLOR_UNSPECIFIED)
        change = await act(loaded, colors)
        try:
            committed = await self._settle(loaded, change, request=key)
        except StaleSeqError as error:
            raise _stale(error.current_seq) from None
        except RequestReusedError:
            raise _request_reused() from None
        if committed.duplicate:
            return await self._committed_events(loaded, committed)
        return change.events

    async def _committed_events(
        self, loaded: LoadedTable, committed: Committed
    ) -> list[tables_pb2.TableEvent]:
        stored = await self._store.events_between(
            loaded.table_id, committed.first_seq, committed.last_seq
        )
        return [] if stored is None else await self.restore(loaded.record.variant, stored)

    async def _apply(
        self, loaded: LoadedTable, action: referee_pb2.ApplyRequest, state: bytes | None = None
    ) -> referee_pb2.ApplyResponse:
        try:
            return await self._referee.apply(loaded.state if state is None else state, action)
        except PeerUnavailableError as error:
            raise _unavailable(error) from error
        except PeerRefusedError as error:
            raise _refused_by_peer(error) from error

    @staticmethod
    def _turn(loaded: LoadedTable) -> game_pb2.Color.ValueType:
        return game_pb2.GameState.FromString(loaded.state).position.turn

    def play(
        self, request: tables_pb2.PlayRequest
    ) -> Callable[[LoadedTable, list[game_pb2.Color.ValueType]], Awaitable[_Change]]:
        """The action of a PlayRequest (checked by :func:`validation.move`)."""

        async def act(loaded: LoadedTable, colors: list[game_pb2.Color.ValueType]) -> _Change:
            seating.require_playing(loaded.record)
            to_move = self._turn(loaded)
            side = seating.acting_color(colors, request.side, to_move)
            seating.require_turn(side, to_move)
            action = referee_pb2.ApplyRequest(side=side)
            if request.WhichOneof("move") == "path":
                action.move_path.CopyFrom(request.path)
            else:
                action.move_notation = request.notation
            response = await self._apply(loaded, action)
            return _Change(
                events.move_played(response, tables_pb2.MOVE_SOURCE_PLAYER),
                response,
                new_turn=True,
            )

        return act

    def game_action(
        self, requested_side: int, action: referee_pb2.GameAction.ValueType
    ) -> Callable[[LoadedTable, list[game_pb2.Color.ValueType]], Awaitable[_Change]]:
        """The action of an OfferDraw, AnswerDraw or Resign request."""

        async def act(loaded: LoadedTable, colors: list[game_pb2.Color.ValueType]) -> _Change:
            seating.require_playing(loaded.record)
            to_move = self._turn(loaded)
            side = seating.acting_color(colors, requested_side, to_move)
            response = await self._apply(
                loaded, referee_pb2.ApplyRequest(side=side, game_action=action)
            )
            if action == referee_pb2.GAME_ACTION_OFFER_DRAW:
                return _Change(events.draw_offered(side), response)
            if action == referee_pb2.GAME_ACTION_RESIGN:
                return _Change(events.resigned(side, response), response)
            accepted = action == referee_pb2.GAME_ACTION_ACCEPT_DRAW
            return _Change(events.draw_answered(side, response, accepted=accepted), response)

        return act

    def take_back(
        self,
    ) -> Callable[[LoadedTable, list[game_pb2.Color.ValueType]], Awaitable[_Change]]:
        """The action of a TakeBack request: against the computer only."""

        async def act(loaded: LoadedTable, colors: list[game_pb2.Color.ValueType]) -> _Change:
            if seating.computer_color(loaded.record) is None:
                raise CallRefusedError.of(
                    errors_pb2.ERROR_REASON_TAKE_BACK_NOT_ALLOWED,
                    "moves can be taken back only against the computer; between people "
                    "moves are final",
                )
            seating.require_playing(loaded.record)
            side = colors[0]
            response = await self._apply(
                loaded,
                referee_pb2.ApplyRequest(side=side, game_action=referee_pb2.GAME_ACTION_TAKE_BACK),
            )
            return _Change(events.taken_back(side, response), response, new_turn=True)

        return act

    async def rematch(
        self,
        player_id: str,
        table_id: str,
        *,
        request_id: str,
        expected_seq: int,
        fingerprint: bytes,
    ) -> Rematch:
        """Ask for a rematch of a finished table; it starts, colours swapped, once both
        players have asked (at once against the computer and in pass-and-play)."""
        started: list[SeatedTable] = []
        created: list[SeatedTable] = []

        async def act(loaded: LoadedTable, colors: list[game_pb2.Color.ValueType]) -> _Change:
            record = loaded.record
            if record.status != tables_pb2.TABLE_STATUS_FINISHED:
                raise CallRefusedError.of(
                    errors_pb2.ERROR_REASON_GAME_IN_PROGRESS,
                    "a rematch can be asked for once the game is over",
                )
            mine = colors[0]
            if record.rematch_table_id:
                started.append(await self.get_table(record.rematch_table_id, player_id))
                return _Change([])
            both_asked = (
                len(colors) == 2
                or seating.computer_color(record) is not None
                or record.rematch_offered_by == seating.opponent_color(mine)
            )
            if not both_asked:
                if record.rematch_offered_by == mine:
                    return _Change([])
                return _Change(events.rematch_offered(mine))
            rematch = await self._start_rematch(record, player_id)
            created.append(rematch)
            started.append(rematch)
            return _Change(events.rematch_started(rematch.table.table_id, rematch.table.code))

        try:
            appended = await self.command(
                player_id,
                table_id,
                request_id=request_id,
                expected_seq=expected_seq,
                fingerprint=fingerprint,
                act=act,
            )
        except BaseException:
            # The rematch table made for a change that did not land would be a stray.
            for rematch in created:
                await self._discard_quietly(rematch.table)
            raise
        if not started:
            for event in appended:
                if event.WhichOneof("kind") == "rematch_started":
                    started.append(await self.get_table(event.rematch_started.table_id, player_id))
        return Rematch(appended, started[0] if started else None)

    async def _discard_quietly(self, table: tables_pb2.Table) -> None:
        try:
            await self._store.discard(table.table_id, 0, table.code)
        except Exception:
            log.warning("could not discard an unused rematch table", exc_info=True)

    async def _start_rematch(self, record: tables_pb2.Table, player_id: str) -> SeatedTable:
        try:
            started = await self._referee.start_game(record.variant)
        except PeerUnavailableError as error:
            raise _unavailable(error) from error
        now = self._clock_ms()
        table_id = seating.new_table_id()
        rematch = seating.rematch_table(record, code="", created_ms=now)
        state = started.state.SerializeToString()
        loaded = await self._open(table_id, rematch, state, now)
        table = events.table_message(
            table_id,
            loaded.record,
            seq=0,
            view=started.view,
            join_base_url=self._options.join_base_url,
        )
        return SeatedTable(table, seating.role_of(loaded.record, player_id))

    # -- committing ---------------------------------------------------------------------------

    async def _settle(
        self,
        loaded: LoadedTable,
        change: _Change,
        *,
        record: tables_pb2.Table | None = None,
        request: bytes | None = None,
        lobby: LobbyUpdate = LobbyUpdate.KEEP,
    ) -> Committed:
        """Commit a change at the seq it was read at: new state, events, timers, expiry.

        A change without events (nothing to do) commits nothing.
        """
        if not change.events:
            return Committed(loaded.seq + 1, loaded.seq, duplicate=False)
        now = self._clock_ms()
        # A record the caller made for this change is completed in place; the loaded one is
        # left as it was read.
        updated = record
        if updated is None:
            updated = tables_pb2.Table()
            updated.CopyFrom(loaded.record)
        response = change.response
        view = response.view if response is not None else None
        fields: dict[str, bytes] = {}
        state = loaded.state
        if response is not None:
            state = response.state.SerializeToString()
            fields["game"] = state
            self._referee.remember_view(state, response.view)
        over = view is not None and view.HasField("outcome")
        kinds = {event.WhichOneof("kind") for event in change.events}
        if over:
            updated.status = tables_pb2.TABLE_STATUS_FINISHED
        if "rematch_offered" in kinds:
            updated.rematch_offered_by = change.events[-1].rematch_offered.by
        if "rematch_started" in kinds:
            updated.rematch_table_id = change.events[-1].rematch_started.table_id
        to_move = (
            view.turn.side
            if view is not None and view.HasField("turn")
            else game_pb2.GameState.FromString(state).position.turn
        )
        timer, due, deadline = self._timer_after(updated, to_move, now, new_turn=change.new_turn)
        if deadline is None:
            updated.ClearField("turn_deadline")
        else:
            updated.turn_deadline.FromMilliseconds(deadline)
        fields["table"] = updated.SerializeToString()
        numbered = events.number(
            change.events, after_seq=loaded.seq, time_ms=now, deadline_ms=deadline
        )
        finished = updated.status == tables_pb2.TABLE_STATUS_FINISHED
        committed = await self._store.commit(
            loaded.table_id,
            loaded.seq,
            Change(
                fields,
                events.serialized([events.lean(event) for event in numbered]),
                published=events.serialized(numbered),
                request_key=request,
                timer=timer,
                timer_due_ms=due,
                lobby=lobby,
                lobby_message=events.lobby_closed(loaded.table_id)
                if lobby is LobbyUpdate.UNLIST
                else b"",
                expire_seconds=self._options.finished_table_seconds
                if finished
                else self._options.idle_table_seconds,
                code=updated.code,
            ),
        )
        if committed.duplicate:
            return committed
        now_loaded = LoadedTable(loaded.table_id, committed.last_seq, updated, state)
        self._recent.remember(loaded.table_id, now_loaded)
        if over and seating.computer_color(updated) is not None and view is not None:
            await self._count_result(loaded.table_id, updated, view.outcome, due)
        elif timer is TimerUpdate.SET and seating.computer_color(updated) == to_move:
            self._in_background(self.handle_due(loaded.table_id, due, committed=now_loaded))
        return committed

    def _timer_after(
        self, record: tables_pb2.Table, to_move: int, now: int, *, new_turn: bool
    ) -> tuple[TimerUpdate, int, int | None]:
        """The timer entry after a change (what to do with it, when it falls due) and the
        turn deadline."""
        computer = seating.computer_color(record)
        if record.status == tables_pb2.TABLE_STATUS_FINISHED:
            if computer is not None:
                # The game still has to be counted in the player's streaks.
                return TimerUpdate.SET, now + self._lease_ms, None
            return TimerUpdate.CLEAR, 0, None
        if record.status == tables_pb2.TABLE_STATUS_WAITING:
            return TimerUpdate.KEEP, 0, None
        if computer == to_move:
            return TimerUpdate.SET, now + self._lease_ms, None
        if record.turn_timer_seconds:
            if new_turn or not record.HasField("turn_deadline"):
                deadline = now + record.turn_timer_seconds * 1000
            else:
                deadline = record.turn_deadline.ToMilliseconds()
            return TimerUpdate.SET, deadline, deadline
        return TimerUpdate.CLEAR, 0, None

    async def _count_result(
        self, table_id: str, record: tables_pb2.Table, outcome: game_pb2.Outcome, lease: int
    ) -> None:
        computer = seating.computer_color(record)
        if computer is None:
            return
        human = seating.opponent_color(computer)
        player_id = seating.seat(record, human).player.player_id
        try:
            await self._store.record_result(
                player_id,
                table_id,
                won=outcome.winner == human,
                remember_seconds=self._options.finished_table_seconds,
            )
            await self._store.release(table_id, lease)
        except Exception:
            # The timer entry stays: whichever replica claims it counts the game then.
            log.warning("could not count a finished game in the streaks yet", exc_info=True)

    # -- what the server does by itself -------------------------------------------------------

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def finish(self) -> None:
        """Wait for the work started in the background (computer turns) to end."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    async def stop(self) -> None:
        """Cancel the work started in the background (computer turns); their timer entries
        stay for another replica."""
        await cancel_and_wait(list(self._background))

    async def handle_due(
        self, table_id: str, lease_until_ms: int, *, committed: LoadedTable | None = None
    ) -> None:
        """Do what a table's due timer entry is for, under the lease this replica holds.

        ``committed`` is the table as this replica has just committed it, when it starts the
        computer's turn itself, so that the turn needs no read.  Failures leave the entry to
        be claimed again when the lease ends.
        """
        try:
            await self._handle_due(table_id, lease_until_ms, committed)
        except asyncio.CancelledError:
            raise
        except (
            StaleSeqError,
            CallRefusedError,
            PeerUnavailableError,
            StoreUnavailableError,
        ) as error:
            # The table moved on (its own change set its timer), or a peer failed: the entry
            # is left for the lease to run out unless nothing changed it.
            if isinstance(error, StaleSeqError):
                await self._release_quietly(table_id, lease_until_ms)
            else:
                log.warning("timer of table %s: %s", table_id, error)
        except Exception:
            log.exception("timer of table %s failed", table_id)

    async def _release_quietly(self, table_id: str, lease_until_ms: int, **kwargs: Any) -> None:
        try:
            await self._store.release(table_id, lease_until_ms, **kwargs)
        except Exception:
            log.warning("could not release the timer of table %s", table_id, exc_info=True)

    async def _handle_due(
        self, table_id: str, lease_until_ms: int, committed: LoadedTable | None
    ) -> None:
        try:
            loaded = committed or LoadedTable.of(table_id, await self._store.load(table_id))
        except TableNotFoundError:
            await self._store.release(table_id, lease_until_ms)
            return
        record = loaded.record
        now = self._clock_ms()
        if record.status == tables_pb2.TABLE_STATUS_WAITING:
            clear_at = (
                record.created_at.ToMilliseconds() + self._options.waiting_table_seconds * 1000
            )
            if now < clear_at:
                await self._store.release(table_id, lease_until_ms, reschedule_ms=clear_at)
                return
            await self._store.discard(
                table_id, loaded.seq, record.code, lobby_message=events.lobby_closed(table_id)
            )
            return
        if record.status == tables_pb2.TABLE_STATUS_FINISHED:
            state = game_pb2.GameState.FromString(loaded.state)
            if state.HasField("outcome"):
                await self._count_result(table_id, record, state.outcome, lease_until_ms)
            await self._store.release(table_id, lease_until_ms)
            return
        state = game_pb2.GameState.FromString(loaded.state)
        to_move = state.position.turn
        if seating.computer_color(record) == to_move:
            await self._computer_turn(loaded, state)
        elif record.turn_timer_seconds and record.HasField("turn_deadline"):
            deadline = record.turn_deadline.ToMilliseconds()
            if now < deadline:
                await self._store.release(table_id, lease_until_ms, reschedule_ms=deadline)
                return
            await self._timer_move(loaded, to_move)
        else:
            await self._store.release(table_id, lease_until_ms)
            return
        # The commit set the table's next timer; a lease nobody replaced is dropped.
        await self._store.release(table_id, lease_until_ms)

    async def _computer_turn(self, loaded: LoadedTable, state: game_pb2.GameState) -> None:
        record = loaded.record
        computer = seating.computer_color(record)
        assert computer is not None
        level = seating.computer_level(record)
        appended: list[tables_pb2.TableEvent] = []
        current = loaded.state
        if state.draw_offer == seating.opponent_color(computer):
            if await self._computer.accepts_draw(current, level):
                response = await self._apply(
                    loaded,
                    referee_pb2.ApplyRequest(
                        side=computer, game_action=referee_pb2.GAME_ACTION_ACCEPT_DRAW
                    ),
                )
                await self._settle(
                    loaded,
                    _Change(events.draw_answered(computer, response, accepted=True), response),
                )
                return
            declined = await self._apply(
                loaded,
                referee_pb2.ApplyRequest(
                    side=computer, game_action=referee_pb2.GAME_ACTION_DECLINE_DRAW
                ),
            )
            appended += events.draw_answered(computer, declined, accepted=False)
            current = declined.state.SerializeToString()
        choice = await self._computer.choose_move(current, level)
        if choice.proven_loss:
            # Every move loses by force: the computer resigns, as a player would, rather
            # than make the player take its last piece.
            response = await self._apply(
                loaded,
                referee_pb2.ApplyRequest(side=computer, game_action=referee_pb2.GAME_ACTION_RESIGN),
                state=current,
            )
            appended += events.resigned(computer, response)
            await self._settle(loaded, _Change(appended, response))
            return
        response = await self._apply(
            loaded,
            referee_pb2.ApplyRequest(
                side=computer, move_path=game_pb2.MovePath(squares=choice.move.path)
            ),
            state=current,
        )
        appended += events.move_played(response, tables_pb2.MOVE_SOURCE_COMPUTER)
        await self._settle(loaded, _Change(appended, response, new_turn=True))

    async def _timer_move(self, loaded: LoadedTable, side: game_pb2.Color.ValueType) -> None:
        try:
            choice = await self._computer.choose_move(loaded.state, ai_pb2.LEVEL_QUICK)
            path = list(choice.move.path)
        except (PeerUnavailableError, PeerRefusedError) as error:
            # A player whose time ran out must not hold the game up: any legal move will do.
            log.warning(
                "quick move for table %s: %s; playing the first legal move", loaded.table_id, error
            )
            view = await self.view(loaded.state)
            path = list(view.turn.legal_moves[0].path)
        response = await self._apply(
            loaded,
            referee_pb2.ApplyRequest(side=side, move_path=game_pb2.MovePath(squares=path)),
        )
        await self._settle(
            loaded,
            _Change(
                events.move_played(response, tables_pb2.MOVE_SOURCE_TIMER), response, new_turn=True
            ),
        )


def _creation_digest(fingerprint: bytes) -> bytes:
    """A short digest of what a CreateTable request asked, to tell a retry from a reuse."""
    return hashlib.blake2b(fingerprint, digest_size=8).hexdigest().encode()


def _stale(current_seq: int) -> CallRefusedError:
    return CallRefusedError.of(
        errors_pb2.ERROR_REASON_STALE_SEQ,
        f"the table is at seq {current_seq}: catch up from its events, then act again",
        currentSeq=current_seq,
    )


def _request_reused() -> CallRefusedError:
    return CallRefusedError.of(
        errors_pb2.ERROR_REASON_REQUEST_ID_REUSED,
        "this request_id was already used for another command: use a fresh one",
        field="request_id",
    )
