"""What the server does by itself: the computer's turn, a move for a player whose time ran
out, a waiting table cleared away, a finished game counted in a player's streaks, a rated
game counted in both players' ratings.

Each is an entry in the store's timers, done by :meth:`FollowUps.handle_due` under the lease
of whichever replica claimed it; a commit that calls for one (:data:`FollowUp`) hands it to
:meth:`FollowUps.run`.  What these do commits through the same compare-and-set as any
command, so a late human move, a timer move and a slow computer reply never all land.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Coroutine
from typing import Final

from goti.api.v1 import ai_pb2, game_pb2, referee_pb2, tables_pb2
from goti.ratings import both_after_game
from goti.tables import events, rated_games, seating
from goti.tables.background import cancel_and_wait
from goti.tables.commands import Ruling
from goti.tables.committing import Committer, ComputerTurn, CountResult, FollowUp, RateGame
from goti.tables.loading import LoadedTable, TableReader
from goti.tables.options import TablesOptions
from goti.tables.peer_errors import peer_refusals
from goti.tables.peers import ComputerPlayer, PeerRefusedError, PeerUnavailableError, Referee
from goti.tables.player_store import GameRatings, PlayerStore, RatedGameOutcome
from goti.tables.redis_calls import StoreUnavailableError
from goti.tables.refusals import CallRefusedError
from goti.tables.store import StaleSeqError, TableNotFoundError, TableStore

log = logging.getLogger(__name__)

_RATING_ATTEMPTS: Final = 8
"""Reads and writes of a rated game's ratings before leaving it to the timer: each retry
follows a rating that moved meanwhile (the same player's other game ending at once)."""


class FollowUps:
    """Runs what commits call for and what the timers hold, some of it in the background."""

    def __init__(
        self,
        store: TableStore,
        player_store: PlayerStore,
        reader: TableReader,
        committer: Committer,
        referee: Referee,
        computer: ComputerPlayer,
        options: TablesOptions,
        *,
        clock_ms: Callable[[], int],
    ) -> None:
        self._store = store
        self._player_store = player_store
        self._reader = reader
        self._committer = committer
        self._referee = referee
        self._computer = computer
        self._options = options
        self._clock_ms = clock_ms
        self._background: set[asyncio.Task[None]] = set()

    async def run(self, follow_up: FollowUp | None) -> None:
        """Do what a commit called for: count a finished game now, or start the computer's
        turn in the background."""
        if isinstance(follow_up, CountResult):
            await self._count_result(
                follow_up.table_id, follow_up.record, follow_up.outcome, follow_up.lease_until_ms
            )
        elif isinstance(follow_up, RateGame):
            await self._rate_game(
                follow_up.table_id, follow_up.record, follow_up.outcome, follow_up.lease_until_ms
            )
        elif isinstance(follow_up, ComputerTurn):
            table = follow_up.table
            self._in_background(
                self.handle_due(table.table_id, follow_up.lease_until_ms, committed=table)
            )

    def _in_background(self, work: Coroutine[object, object, None]) -> None:
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

    async def _release_quietly(self, table_id: str, lease_until_ms: int) -> None:
        try:
            await self._store.release(table_id, lease_until_ms)
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
        state = loaded.game()
        if record.status == tables_pb2.TABLE_STATUS_FINISHED:
            if state.HasField("outcome"):
                await self._count_result(table_id, record, state.outcome, lease_until_ms)
                await self._rate_game(table_id, record, state.outcome, lease_until_ms)
            await self._store.release(table_id, lease_until_ms)
            return
        to_move = state.position.turn
        if seating.computer_color(record) == to_move:
            await self._computer_turn(loaded, state)
        elif record.turn_timer_seconds and record.HasField("turn_deadline"):
            deadline = record.turn_deadline.ToMilliseconds()
            if now < deadline:
                await self._store.release(table_id, lease_until_ms, reschedule_ms=deadline)
                return
            await self._timer_move(loaded, to_move)
        # The commit set the table's next timer; a lease nobody replaced is dropped.
        await self._store.release(table_id, lease_until_ms)

    async def _commit(self, loaded: LoadedTable, ruling: Ruling) -> None:
        settled = await self._committer.commit(loaded, ruling)
        await self.run(settled.follow_up)

    async def _apply(
        self, action: referee_pb2.ApplyRequest, state: bytes
    ) -> referee_pb2.ApplyResponse:
        with peer_refusals():
            return await self._referee.apply(state, action)

    async def _computer_turn(self, loaded: LoadedTable, state: game_pb2.GameState) -> None:
        computer = seating.computer_color(loaded.record)
        assert computer is not None
        level = seating.computer_level(loaded.record)
        appended: list[tables_pb2.TableEvent] = []
        current = loaded.state
        if state.draw_offer == seating.opponent_color(computer):
            if await self._computer.accepts_draw(current, level):
                response = await self._apply(
                    referee_pb2.ApplyRequest(
                        side=computer, game_action=referee_pb2.GAME_ACTION_ACCEPT_DRAW
                    ),
                    current,
                )
                answered = events.draw_answered(computer, response, accepted=True)
                await self._commit(loaded, Ruling(answered, response))
                return
            declined = await self._apply(
                referee_pb2.ApplyRequest(
                    side=computer, game_action=referee_pb2.GAME_ACTION_DECLINE_DRAW
                ),
                current,
            )
            appended += events.draw_answered(computer, declined, accepted=False)
            current = declined.state.SerializeToString()
        choice = await self._computer.choose_move(current, level)
        if choice.proven_loss:
            # Every move loses by force: the computer resigns, as a player would, rather
            # than make the player take its last piece.
            response = await self._apply(
                referee_pb2.ApplyRequest(side=computer, game_action=referee_pb2.GAME_ACTION_RESIGN),
                current,
            )
            appended += events.resigned(computer, response)
            await self._commit(loaded, Ruling(appended, response))
            return
        response = await self._apply(
            referee_pb2.ApplyRequest(
                side=computer, move_path=game_pb2.MovePath(squares=choice.move.path)
            ),
            current,
        )
        appended += events.move_played(response, tables_pb2.MOVE_SOURCE_COMPUTER)
        await self._commit(loaded, Ruling(appended, response, new_turn=True))

    async def _timer_move(self, loaded: LoadedTable, side: game_pb2.Color.ValueType) -> None:
        try:
            choice = await self._computer.choose_move(loaded.state, ai_pb2.LEVEL_QUICK)
            path = list(choice.move.path)
        except (PeerUnavailableError, PeerRefusedError) as error:
            # A player whose time ran out must not hold the game up: any legal move will do.
            log.warning(
                "quick move for table %s: %s; playing the first legal move", loaded.table_id, error
            )
            view = await self._reader.view(loaded.state)
            path = list(view.turn.legal_moves[0].path)
        response = await self._apply(
            referee_pb2.ApplyRequest(side=side, move_path=game_pb2.MovePath(squares=path)),
            loaded.state,
        )
        played = events.move_played(response, tables_pb2.MOVE_SOURCE_TIMER)
        await self._commit(loaded, Ruling(played, response, new_turn=True))

    async def _count_result(
        self, table_id: str, record: tables_pb2.Table, outcome: game_pb2.Outcome, lease: int
    ) -> None:
        computer = seating.computer_color(record)
        if computer is None:
            return
        human = seating.opponent_color(computer)
        player_id = seating.seat(record, human).player.player_id
        try:
            await self._player_store.record_result(
                player_id,
                table_id,
                won=outcome.winner == human,
                remember_seconds=self._options.finished_table_seconds,
            )
            await self._store.release(table_id, lease)
        except Exception:
            # The timer entry stays: whichever replica claimed it counts the game then.
            log.warning("could not count a finished game in the streaks yet", exc_info=True)

    async def _rate_game(
        self, table_id: str, record: tables_pb2.Table, outcome: game_pb2.Outcome, lease: int
    ) -> None:
        """Count a rated game between people in both ratings, once: computed from the ratings
        as read, written only if neither moved since (else read again)."""
        players = rated_games.rated_players(record)
        if players is None:
            return
        try:
            for _ in range(_RATING_ATTEMPTS):
                before = await self._player_store.rating_fields(players, record.variant)
                white, black = (rated_games.StoredRating.decode(value) for value in before)
                white_after, black_after = both_after_game(
                    white.rating, black.rating, rated_games.white_score(outcome)
                )
                done = await self._player_store.rate_game(
                    GameRatings(
                        table_id,
                        record.variant,
                        players,
                        (before[0], before[1]),
                        (white.after(white_after), black.after(black_after)),
                    ),
                    # A finished table is kept this long after its last change, and may
                    # hand its timer over for a lease after that change.
                    remember_seconds=self._options.finished_table_seconds
                    + 2 * math.ceil(self._options.timer_lease_seconds),
                    lease_until_ms=lease,
                    now_ms=self._clock_ms(),
                )
                if done is not RatedGameOutcome.MOVED:
                    return
            log.warning("the ratings of table %s kept moving; the timer retries", table_id)
        except Exception:
            # The timer entry stays: whichever replica claimed it rates the game then.
            log.warning("could not count a rated game in the ratings yet", exc_info=True)
