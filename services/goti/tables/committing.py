"""The commit: one compare-and-set writes a change to a table — new state, events, timer,
expiry — hands its events to this process's watchers, and says what must happen next,
without doing it.

What follows a commit is a :data:`FollowUp`: the computer's turn, claimed in the same commit,
a finished game to count in a player's streaks, or a rated game to count in both players'
ratings.  :mod:`goti.tables.followups` runs them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from goti.api.v1 import game_pb2, tables_pb2
from goti.tables import events, rated_games, seating
from goti.tables.commands import Ruling
from goti.tables.fanout import Fanout
from goti.tables.loading import LoadedTable
from goti.tables.options import TablesOptions
from goti.tables.peers import Referee
from goti.tables.recent import RecentTables
from goti.tables.store import Change, Committed, LobbyUpdate, TableStore, TimerUpdate


@dataclass(frozen=True, slots=True)
class ComputerTurn:
    """The computer is to move: this replica holds the table's timer entry until
    ``lease_until_ms`` and plays the turn on ``table`` as committed, without reading it."""

    table: LoadedTable
    lease_until_ms: int


@dataclass(frozen=True, slots=True)
class CountResult:
    """A game against the computer ended: count it in the player's streaks."""

    table_id: str
    record: tables_pb2.Table
    outcome: game_pb2.Outcome
    lease_until_ms: int


@dataclass(frozen=True, slots=True)
class RateGame:
    """A rated game between two people ended: count it in both players' ratings.  The
    commit set the table's timer entry, held until ``lease_until_ms``, in case this replica
    stops before it does."""

    table_id: str
    record: tables_pb2.Table
    outcome: game_pb2.Outcome
    lease_until_ms: int


FollowUp = ComputerTurn | CountResult | RateGame


@dataclass(frozen=True, slots=True)
class Settled:
    """A commit's result, and what it calls for next."""

    committed: Committed
    follow_up: FollowUp | None = None


class Committer:
    """Commits changes to tables at the seq they were read at."""

    def __init__(
        self,
        store: TableStore,
        referee: Referee,
        recent: RecentTables[LoadedTable],
        options: TablesOptions,
        fanout: Fanout,
        *,
        clock_ms: Callable[[], int],
    ) -> None:
        self._store = store
        self._fanout = fanout
        self._referee = referee
        self._recent = recent
        self._options = options
        self._clock_ms = clock_ms
        self._lease_ms = round(options.timer_lease_seconds * 1000)

    async def commit(
        self,
        loaded: LoadedTable,
        ruling: Ruling,
        *,
        record: tables_pb2.Table | None = None,
        request: bytes | None = None,
        lobby: LobbyUpdate = LobbyUpdate.KEEP,
    ) -> Settled:
        """Commit a change at the seq it was read at: new state, events, timers, expiry.

        A change without events (nothing to do) commits nothing.  ``record`` is the table's
        record as the caller changed it (it is completed in place), else the loaded one.
        """
        if not ruling.events:
            return Settled(Committed(loaded.seq + 1, loaded.seq, duplicate=False))
        now = self._clock_ms()
        response = ruling.response
        view = response.view if response is not None else None
        fields: dict[str, bytes] = {}
        state = loaded.state
        if response is not None:
            state = response.state.SerializeToString()
            fields["game"] = state
            self._referee.remember_view(state, response.view)
        updated = _updated_record(loaded, ruling, record, view)
        to_move = view.turn.side if view is not None and view.HasField("turn") else None
        if to_move is None:
            to_move = game_pb2.GameState.FromString(state).position.turn
        timer, due, deadline = self.timer_after(updated, to_move, now, new_turn=ruling.new_turn)
        if deadline is None:
            updated.ClearField("turn_deadline")
        else:
            updated.turn_deadline.FromMilliseconds(deadline)
        fields["table"] = updated.SerializeToString()
        numbered = events.number(
            ruling.events, after_seq=loaded.seq, time_ms=now, deadline_ms=deadline
        )
        published = events.serialized(numbered)
        change = self._change(
            loaded.table_id, updated, fields, numbered, published, timer, due, request, lobby
        )
        committed = await self._store.commit(loaded.table_id, loaded.seq, change)
        if committed.duplicate:
            return Settled(committed)
        self._fanout.deliver(self._store.keys.table(loaded.table_id).channel, published)
        after = LoadedTable(loaded.table_id, committed.last_seq, updated, state, to_move)
        self._recent.remember(loaded.table_id, after)
        computer = seating.computer_color(updated)
        if computer is not None and view is not None and view.HasField("outcome"):
            return Settled(committed, CountResult(loaded.table_id, updated, view.outcome, due))
        if view is not None and view.HasField("outcome") and rated_games.rated_players(updated):
            return Settled(committed, RateGame(loaded.table_id, updated, view.outcome, due))
        if timer is TimerUpdate.SET and computer == to_move:
            return Settled(committed, ComputerTurn(after, due))
        return Settled(committed)

    def _change(
        self,
        table_id: str,
        updated: tables_pb2.Table,
        fields: dict[str, bytes],
        numbered: list[tables_pb2.TableEvent],
        published: list[bytes],
        timer: TimerUpdate,
        due: int,
        request: bytes | None,
        lobby: LobbyUpdate,
    ) -> Change:
        finished = updated.status == tables_pb2.TABLE_STATUS_FINISHED
        return Change(
            fields,
            events.serialized([events.lean(event) for event in numbered]),
            published=published,
            request_key=request,
            timer=timer,
            timer_due_ms=due,
            lobby=lobby,
            lobby_message=events.lobby_closed(table_id) if lobby is LobbyUpdate.UNLIST else b"",
            expire_seconds=self._options.finished_table_seconds
            if finished
            else self._options.idle_table_seconds,
            code=updated.code,
        )

    def timer_after(
        self, record: tables_pb2.Table, to_move: int, now: int, *, new_turn: bool
    ) -> tuple[TimerUpdate, int, int | None]:
        """The timer entry after a change (what to do with it, when it falls due) and the
        turn deadline."""
        computer = seating.computer_color(record)
        if record.status == tables_pb2.TABLE_STATUS_FINISHED:
            if computer is not None or rated_games.rated_players(record) is not None:
                # The game still has to be counted in the player's streaks or the ratings.
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


def _updated_record(
    loaded: LoadedTable,
    ruling: Ruling,
    record: tables_pb2.Table | None,
    view: game_pb2.GameView | None,
) -> tables_pb2.Table:
    """The table's record after ``ruling``: the caller's ``record`` completed in place, else a
    copy of the loaded one (which stays as it was read)."""
    updated = record
    if updated is None:
        updated = tables_pb2.Table()
        updated.CopyFrom(loaded.record)
    if view is not None and view.HasField("outcome"):
        updated.status = tables_pb2.TABLE_STATUS_FINISHED
    kinds = {event.WhichOneof("kind") for event in ruling.events}
    if "rematch_offered" in kinds:
        updated.rematch_offered_by = ruling.events[-1].rematch_offered.by
    if "rematch_started" in kinds:
        updated.rematch_table_id = ruling.events[-1].rematch_started.table_id
    return updated
