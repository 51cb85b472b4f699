"""Tables opened and joined: a new table (drawing a free code), a seat taken at one, a code
looked up for a watcher, and the new table of a rematch.

Creation and joining are rate-limited per player; a retried CreateTable returns the table
its first try made.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import Final

from goti.api.v1 import errors_pb2, game_pb2, referee_pb2, tables_pb2
from goti.tables import events, keys, seating
from goti.tables.commands import Ruling
from goti.tables.committing import Committer, ComputerTurn
from goti.tables.followups import FollowUps
from goti.tables.loading import LoadedTable, SeatedTable, TableReader
from goti.tables.peer_errors import peer_refusals, peer_unavailable
from goti.tables.peers import PeerUnavailableError, Referee
from goti.tables.players import Players
from goti.tables.recent import RecentTables
from goti.tables.refusals import CallRefusedError
from goti.tables.store import (
    CodeTakenError,
    LobbyUpdate,
    StaleSeqError,
    TableExistsError,
    TableStore,
)

log = logging.getLogger(__name__)

_CODE_ATTEMPTS: Final = 8
_JOIN_ATTEMPTS: Final = 4


class TableOpener:
    """Opens tables and seats players at them."""

    def __init__(
        self,
        store: TableStore,
        referee: Referee,
        players: Players,
        reader: TableReader,
        committer: Committer,
        follow_ups: FollowUps,
        recent: RecentTables[LoadedTable],
        *,
        clock_ms: Callable[[], int],
    ) -> None:
        self._store = store
        self._referee = referee
        self._players = players
        self._reader = reader
        self._committer = committer
        self._follow_ups = follow_ups
        self._recent = recent
        self._options = reader.options
        self._clock_ms = clock_ms
        self._lease_ms = round(self._options.timer_lease_seconds * 1000)

    # -- creating -----------------------------------------------------------------------------

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
            # A rating is shown only where it could count: a game between two people.
            seat = await self._players.seat(
                player_id,
                rated_in=variant or game_pb2.VARIANT_ENGLISH
                if opponent in (tables_pb2.OPPONENT_UNSPECIFIED, tables_pb2.OPPONENT_HUMAN)
                else None,
            )
            with peer_refusals():
                started = await self._referee.start_game(variant or game_pb2.VARIANT_ENGLISH)
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
            loaded = await self._open(table_id, record, started, now)
        except BaseException:
            await self._forget_creation(player_id, request_id)
            raise
        return self._reader.shown(table_id, loaded.record, started.view, player_id, seq=0)

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
            return await self._reader.get_table(table_id.decode(), player_id)
        except CallRefusedError as refusal:
            if refusal.status.reason == "TABLE_NOT_FOUND":
                raise CallRefusedError.unavailable(
                    "the table this request creates is not ready yet; retry shortly"
                ) from None
            raise

    async def _open(
        self,
        table_id: str,
        record: tables_pb2.Table,
        started: referee_pb2.StartGameResponse,
        now: int,
    ) -> LoadedTable:
        """Store a new table (drawing a free code), list it and arm its timer."""
        state = started.state.SerializeToString()
        to_move = started.view.turn.side
        for _ in range(_CODE_ATTEMPTS):
            # The code's key shares the table's slot on a cluster.
            record.code = self._store.keys.code_for(table_id, seating.new_code)
            listing = events.lobby_table(table_id, record) if seating.is_listed(record) else None
            timer_due, deadline = self._first_timer(record, to_move, now)
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
            except CodeTakenError:
                continue
            except TableExistsError:
                # The id was drawn for this call alone, so what took it is this very script:
                # redis-py sent it again after its first answer was lost, and the table
                # stands as this call wrote it.
                pass
            loaded = LoadedTable(table_id, 0, record, state, to_move)
            self._recent.remember(table_id, loaded)
            if timer_due is not None and seating.computer_color(record) is not None:
                await self._follow_ups.run(ComputerTurn(loaded, timer_due))
            return loaded
        raise CallRefusedError.unavailable("could not draw a free table code; retry")

    def _first_timer(
        self, record: tables_pb2.Table, to_move: int, now: int
    ) -> tuple[int | None, int | None]:
        """When a new table first needs the server, and its first turn deadline."""
        if record.status == tables_pb2.TABLE_STATUS_WAITING:
            return now + self._options.waiting_table_seconds * 1000, None
        if seating.computer_color(record) == to_move:
            return now + self._lease_ms, None
        if record.turn_timer_seconds:
            deadline = now + record.turn_timer_seconds * 1000
            return deadline, deadline
        return None, None

    async def open_rematch(self, record: tables_pb2.Table, player_id: str) -> SeatedTable:
        """Open the rematch of a finished table, colours swapped."""
        try:
            started = await self._referee.start_game(record.variant)
        except PeerUnavailableError as error:
            raise peer_unavailable(error) from error
        now = self._clock_ms()
        table_id = seating.new_table_id()
        rematch = seating.rematch_table(record, code="", created_ms=now)
        await self._reseat_rated(rematch, rated=record.rated)
        loaded = await self._open(table_id, rematch, started, now)
        return self._reader.shown(table_id, loaded.record, started.view, player_id, seq=0)

    async def _reseat_rated(self, rematch: tables_pb2.Table, *, rated: bool) -> None:
        """A rematch keeps its table's ``rated`` flag, and its seats show the players'
        ratings as the game just finished left them."""
        rematch.rated = rated
        for color in seating.COLORS:
            seat = seating.seat(rematch, color)
            if not seat.HasField("rating"):
                continue
            try:
                fresh = await self._players.seat(seat.player.player_id, rated_in=rematch.variant)
            except CallRefusedError:
                continue  # a player gone meanwhile keeps the rating the last game showed
            seat.rating.CopyFrom(fresh.rating)

    async def discard_quietly(self, table: tables_pb2.Table) -> None:
        """Discard a new table nobody will use (a rematch whose change did not land)."""
        try:
            await self._store.discard(table.table_id, 0, table.code)
        except Exception:
            log.warning("could not discard an unused rematch table", exc_info=True)

    # -- joining ------------------------------------------------------------------------------

    async def join_table(self, player_id: str, code: str) -> SeatedTable:
        """Take the open seat of the table with this code (or the caller's seat there)."""
        await self._rate_limit(player_id, "join", self._options.joins_per_minute)
        table_id = await self._table_for_code(code)
        for _ in range(_JOIN_ATTEMPTS):
            loaded = await self._reader.load(table_id, field="code")
            record = loaded.record
            if seating.colors_of(record, player_id):
                return await self._reader.seated(loaded, player_id)
            color = seating.open_color(record)
            if record.status != tables_pb2.TABLE_STATUS_WAITING or color is None:
                raise CallRefusedError.of(
                    errors_pb2.ERROR_REASON_TABLE_FULL,
                    "both seats of this table are taken: you may watch it instead",
                )
            seat = await self._players.seat(player_id, rated_in=record.variant)
            seat.color = color
            joined = tables_pb2.Table()
            joined.CopyFrom(record)
            seating.seat(joined, color).CopyFrom(seat)
            joined.status = tables_pb2.TABLE_STATUS_PLAYING
            try:
                settled = await self._committer.commit(
                    loaded,
                    Ruling([events.player_joined(color, seat)], new_turn=True),
                    record=joined,
                    lobby=LobbyUpdate.UNLIST,
                )
            except StaleSeqError:
                continue
            await self._follow_ups.run(settled.follow_up)
            return await self._reader.seated(
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
        await self._players.enforce_rate_limit(
            counter, self._options.joins_per_minute, "too many lookups in a minute"
        )
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
        await self._players.enforce_rate_limit(
            keys.rate_limit(player_id, action),
            per_minute,
            f"too many {action}s in a minute",
        )


def _creation_digest(fingerprint: bytes) -> bytes:
    """A short digest of what a CreateTable request asked, to tell a retry from a reuse."""
    return hashlib.blake2b(fingerprint, digest_size=8).hexdigest().encode()
