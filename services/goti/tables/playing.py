"""A command on a table, from start to finish: load the table, judge the command, ask the
referee, commit, then start what the commit calls for.

The table comes from :mod:`goti.tables.recent` when this replica committed the seq the
command names, else from the store (one Redis call); the referee rules in one call and the
commit is one Lua script.  A retried request returns the events it appended the first time,
restored from the log.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from goti.api.v1 import errors_pb2, game_pb2, tables_pb2
from goti.tables import commands, events, seating
from goti.tables.commands import AskRematch, Command, Envelope, GameCommand, RematchStep, Ruling
from goti.tables.committing import Committer
from goti.tables.followups import FollowUps
from goti.tables.loading import LoadedTable, SeatedTable, TableReader
from goti.tables.opening import TableOpener
from goti.tables.peer_errors import peer_refusals
from goti.tables.peers import Referee
from goti.tables.recent import RecentTables
from goti.tables.refusals import CallRefusedError
from goti.tables.restoring import Restorer
from goti.tables.store import (
    Committed,
    RequestReusedError,
    StaleSeqError,
    TableStore,
    request_key,
)


@dataclass(frozen=True, slots=True)
class Rematch:
    """What a rematch request did: the events it appended, and the new table once started."""

    events: list[tables_pb2.TableEvent]
    table: SeatedTable | None


@dataclass(frozen=True, slots=True)
class _Done:
    """A command's events, the table it was judged on, and its ruling (None for a retry
    answered from the log)."""

    events: list[tables_pb2.TableEvent]
    loaded: LoadedTable
    ruling: Ruling | None


class CommandRunner:
    """Runs players' commands on tables."""

    def __init__(
        self,
        store: TableStore,
        referee: Referee,
        reader: TableReader,
        restorer: Restorer,
        committer: Committer,
        follow_ups: FollowUps,
        opener: TableOpener,
        recent: RecentTables[LoadedTable],
    ) -> None:
        self._store = store
        self._referee = referee
        self._reader = reader
        self._restorer = restorer
        self._committer = committer
        self._follow_ups = follow_ups
        self._opener = opener
        self._recent = recent

    async def run(self, envelope: Envelope, command: GameCommand) -> list[tables_pb2.TableEvent]:
        """Run a move, a draw offer or answer, a resignation or a take-back; returns the
        events it appended."""
        return (await self._run(envelope, command)).events

    async def rematch(self, envelope: Envelope) -> Rematch:
        """Ask for a rematch of a finished table; it starts, colours swapped, once both
        players have asked (at once against the computer and in pass-and-play)."""
        done = await self._run(envelope, AskRematch())
        started = ""
        if done.ruling is None:
            # A retry: the rematch it started, if it started one.
            for event in done.events:
                if event.WhichOneof("kind") == "rematch_started":
                    started = event.rematch_started.table_id
        elif done.ruling.opened is not None:
            return Rematch(done.events, done.ruling.opened)
        else:
            started = done.loaded.record.rematch_table_id
        if not started:
            return Rematch(done.events, None)
        return Rematch(done.events, await self._reader.get_table(started, envelope.player_id))

    async def _run(self, envelope: Envelope, command: Command) -> _Done:
        """Only a seated player may act, only on the seq they saw; a retried request
        returns the events it appended the first time."""
        table_id = envelope.table_id
        key = request_key(envelope.player_id, envelope.request_id, envelope.fingerprint)
        recent = self._recent.at(table_id, envelope.expected_seq)
        if recent is not None:
            try:
                return await self._act_on(recent, envelope.player_id, key, command)
            except CallRefusedError as refusal:
                # A refusal judged on this replica's copy stands only while the table is
                # still at that seq; otherwise the caller hears what the table says now.
                if (
                    refusal.status.code == grpc.StatusCode.UNAVAILABLE
                    or await self._store.seq(table_id) == envelope.expected_seq
                ):
                    raise
                self._recent.forget(table_id)
        loaded = await self._reader.load(table_id)
        if loaded.seq != envelope.expected_seq:
            # Spectators are refused before anything else, whatever seq they name.
            _refuse_spectator(seating.colors_of(loaded.record, envelope.player_id))
            try:
                found = await self._store.find_request(table_id, key)
            except RequestReusedError:
                raise _request_reused() from None
            if found is not None:
                return _Done(await self._committed_events(loaded, found), loaded, None)
            raise _stale(loaded.seq)
        return await self._act_on(loaded, envelope.player_id, key, command)

    async def _act_on(
        self, loaded: LoadedTable, player_id: str, key: bytes, command: Command
    ) -> _Done:
        colors = seating.colors_of(loaded.record, player_id)
        _refuse_spectator(colors)
        if isinstance(command, AskRematch):
            ruling = await self._rule_rematch(loaded, colors, player_id)
        else:
            asked = commands.judge(command, loaded, colors)
            with peer_refusals():
                response = await self._referee.apply(loaded.state, asked)
            ruling = commands.ruled(command, asked, response)
        try:
            settled = await self._committer.commit(loaded, ruling, request=key)
        except BaseException as error:
            if ruling.opened is not None:
                # The rematch table made for a change that did not land would be a stray.
                await self._opener.discard_quietly(ruling.opened.table)
            if isinstance(error, StaleSeqError):
                raise _stale(error.current_seq) from None
            if isinstance(error, RequestReusedError):
                raise _request_reused() from None
            raise
        if settled.committed.duplicate:
            if ruling.opened is not None:
                await self._opener.discard_quietly(ruling.opened.table)
            return _Done(await self._committed_events(loaded, settled.committed), loaded, None)
        await self._follow_ups.run(settled.follow_up)
        return _Done(ruling.events, loaded, ruling)

    async def _rule_rematch(
        self, loaded: LoadedTable, colors: list[game_pb2.Color.ValueType], player_id: str
    ) -> Ruling:
        step = commands.judge_rematch(loaded.record, colors)
        if step is RematchStep.OFFER:
            return Ruling(events.rematch_offered(colors[0]))
        if step is RematchStep.START:
            opened = await self._opener.open_rematch(loaded.record, player_id)
            started = events.rematch_started(opened.table.table_id, opened.table.code)
            return Ruling(started, opened=opened)
        return Ruling([])

    async def _committed_events(
        self, loaded: LoadedTable, committed: Committed
    ) -> list[tables_pb2.TableEvent]:
        return await self._restorer.committed_events(
            loaded.table_id, loaded.record.variant, committed
        )


def _refuse_spectator(colors: list[game_pb2.Color.ValueType]) -> None:
    seating.acting_color(colors, game_pb2.COLOR_UNSPECIFIED, game_pb2.COLOR_UNSPECIFIED)


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
