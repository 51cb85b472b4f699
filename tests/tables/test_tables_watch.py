"""Watching tables: resuming from any seq the log holds, snapshots further back, retries
answered from the log, heartbeats, other replicas, and thousands of streams at once."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass

import grpc
import pytest

from goti import serving
from goti.api.v1 import game_pb2, tables_pb2, tables_pb2_grpc
from goti.settings import Settings
from goti.tables.options import TablesOptions
from goti.tables.store import DEFAULT_REQUEST_MEMORY

from .conftest import StartReplica
from .table_calls import (
    Guest,
    eventually,
    first_legal,
    new_guest,
    new_request_id,
    refusal,
    watching,
)

WatchCall = grpc.aio.UnaryStreamCall[tables_pb2.WatchTableRequest, tables_pb2.WatchTableResponse]
WATCH_WAVE = 250
"""Watch streams opened at once, in the test of two thousand."""


@dataclass(frozen=True)
class _Ply:
    """A move played, as it was asked for and what it answered."""

    request_id: str
    path: list[int]
    expected_seq: int
    events: list[tables_pb2.TableEvent]


async def _played(
    channel: grpc.aio.Channel, plies: int
) -> tuple[Guest, tables_pb2.Table, list[_Ply]]:
    """A pass-and-play table with ``plies`` moves played."""
    ann = await new_guest(channel, "Ann")
    table = (await ann.create(opponent=tables_pb2.OPPONENT_PASS_AND_PLAY)).table
    played: list[_Ply] = []
    turn, seq = table.game.turn, 0
    for _ in range(plies):
        request_id, path = new_request_id(), first_legal(turn)
        response = await ann.play(table.table_id, path, seq, request_id=request_id)
        played.append(_Ply(request_id, path, seq, list(response.events)))
        seq = response.events[-1].seq
        turn = response.events[0].move_played.next
    return ann, table, played


def _events(played: list[_Ply]) -> list[tables_pb2.TableEvent]:
    return [event for ply in played for event in ply.events]


async def test_a_watcher_resumes_from_every_seq_the_log_holds_with_no_gap_and_no_duplicate(
    channel: grpc.aio.Channel, options: TablesOptions
) -> None:
    window = options.table_log_events
    ann, table, played = await _played(channel, window + 6)
    appended = _events(played)
    last = appended[-1].seq
    for after in range(last + 1):
        async with watching(channel, table.table_id, after_seq=after) as watch:
            await watch.until_seq(last)
            # Then one more live event must follow, once.
            if after == last:
                turn = appended[-1].move_played.next
                response = await ann.play(table.table_id, first_legal(turn), last)
                appended += response.events
                await watch.until_seq(last + 1)
        messages = watch.messages
        if after == 0 or after < last - window:
            # Further back than the log reaches: the table as it is, then what follows.
            assert messages[0].HasField("snapshot")
            assert messages[0].snapshot.table.seq == last
            start = last
        else:
            assert not any(message.HasField("snapshot") for message in messages)
            start = after
        events = watch.events
        seqs = [event.seq for event in events]
        assert seqs == list(range(start + 1, start + 1 + len(seqs)))
        # Events read back from the log are the events as they were sent live.
        assert events == appended[start : start + len(events)]


async def test_a_retried_move_gets_its_events_back_while_the_log_holds_them(
    channel: grpc.aio.Channel, options: TablesOptions
) -> None:
    ann, table, played = await _played(channel, options.table_log_events + 4)
    seq = played[-1].events[-1].seq
    kept = [ply for ply in played if ply.events[0].seq > seq - options.table_log_events]
    assert len(kept) >= DEFAULT_REQUEST_MEMORY
    for ply in kept[-DEFAULT_REQUEST_MEMORY:]:
        again = await ann.play(
            table.table_id, ply.path, ply.expected_seq, request_id=ply.request_id
        )
        assert list(again.events) == ply.events
    # A move whose events left the log is forgotten with them: its retry is refused, and
    # never played twice.
    oldest = played[0]
    status = await refusal(
        ann.play(table.table_id, oldest.path, oldest.expected_seq, request_id=oldest.request_id)
    )
    assert (status.code, status.reason) == (grpc.StatusCode.ABORTED, "STALE_SEQ")
    assert (await ann.get(table.table_id)).table.seq == seq


async def test_a_snapshot_when_the_log_is_trimmed_or_the_seq_is_ahead(
    start_replica: StartReplica, options: TablesOptions, redis: object
) -> None:
    replica = await start_replica(options=dataclasses.replace(options, table_log_events=5))
    _, table, played = await _played(replica.channel, 10)
    last = played[-1].events[-1].seq
    for after in (1, last + 7):
        async with watching(replica.channel, table.table_id, after_seq=after) as watch:
            await eventually(lambda: bool(watch.messages))
        assert watch.messages[0].HasField("snapshot")
        assert watch.messages[0].snapshot.table.seq == last
        assert watch.messages[0].snapshot.your_role == tables_pb2.ROLE_SPECTATOR
    async with watching(replica.channel, table.table_id, after_seq=last - 5) as watch:
        await watch.until_seq(last)
    assert [event.seq for event in watch.events] == list(range(last - 4, last + 1))


async def test_idle_streams_get_heartbeats_with_the_seq(channel: grpc.aio.Channel) -> None:
    ann, table, played = await _played(channel, 2)
    async with watching(channel, table.table_id, metadata=ann.metadata) as watch:
        await eventually(lambda: any(message.HasField("heartbeat") for message in watch.messages))
    assert watch.messages[0].snapshot.your_role == tables_pb2.ROLE_BOTH
    heartbeat = next(
        message.heartbeat for message in watch.messages if message.HasField("heartbeat")
    )
    assert heartbeat.seq == played[-1].events[-1].seq
    assert abs(heartbeat.server_time.ToMilliseconds() - time.time() * 1000) < 60_000


async def test_a_move_on_one_replica_reaches_a_watcher_on_another(
    start_replica: StartReplica, redis: object
) -> None:
    first = await start_replica()
    second = await start_replica()
    ann = await new_guest(first.channel, "Ann")
    bob = await new_guest(second.channel, "Bob")
    table = (await ann.create(starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1)).table
    async with watching(second.channel, table.table_id) as watch:
        await eventually(lambda: bool(watch.messages))  # the snapshot, at seq 0
        joined = await bob.join(table.code)
        played = await ann.play(table.table_id, first_legal(joined.table.game.turn), 1)
        await watch.until_seq(2)
    assert watch.events[-1] == played.events[0]
    # The same player, the same token, on either replica.
    assert (await ann.on(second.channel).get(table.table_id)).your_role == tables_pb2.ROLE_BLACK


async def test_two_thousand_watch_streams_open_at_once(
    channel: grpc.aio.Channel, replica: object, settings: Settings
) -> None:
    streams = 2000
    ann, table, _ = await _played(channel, 1)
    target = replica.target  # type: ignore[attr-defined]
    channels = [serving.open_channel(target, settings) for _ in range(8)]
    stubs = [tables_pb2_grpc.TablesServiceStub(each) for each in channels]
    calls: list[WatchCall] = []
    try:
        # Opened a wave at a time, each answered before the next: gRPC cancels a call the
        # server has not taken up within 30 s, which a burst of 2,000 can outlast on a busy
        # machine. All of them are open together once the waves are in.
        for _ in range(streams // WATCH_WAVE):
            wave = [
                stubs[index % len(stubs)].WatchTable(
                    tables_pb2.WatchTableRequest(table_id=table.table_id)
                )
                for index in range(len(calls), len(calls) + WATCH_WAVE)
            ]
            calls += wave
            snapshots = await asyncio.wait_for(
                asyncio.gather(*(call.read() for call in wave), return_exceptions=True), 60
            )
            received = [
                result for result in snapshots if isinstance(result, tables_pb2.WatchTableResponse)
            ]
            failed = [result for result in snapshots if result not in received]
            assert len(received) == WATCH_WAVE, failed[:3]
            assert all(result.HasField("snapshot") for result in received)
        assert len(calls) == streams
        seq = table.seq + 1
        turn = (await ann.get(table.table_id)).table.game.turn
        await ann.play(table.table_id, first_legal(turn), seq)
        moved = await asyncio.wait_for(asyncio.gather(*(_next_event(call) for call in calls)), 60)
        assert all(event.seq == seq + 1 for event in moved)
    finally:
        for call in calls:
            call.cancel()
        for each in channels:
            await each.close()


async def _next_event(call: object) -> tables_pb2.TableEvent:
    while True:
        message = await call.read()  # type: ignore[attr-defined]
        if message.HasField("event"):
            event: tables_pb2.TableEvent = message.event
            return event


@pytest.mark.parametrize("variant", [game_pb2.VARIANT_ENGLISH, game_pb2.VARIANT_RUSSIAN])
async def test_restored_events_match_for_both_variants(
    channel: grpc.aio.Channel, variant: game_pb2.Variant.ValueType
) -> None:
    ann = await new_guest(channel)
    table = (await ann.create(opponent=tables_pb2.OPPONENT_PASS_AND_PLAY, variant=variant)).table
    turn, seq = table.game.turn, 0
    appended: list[tables_pb2.TableEvent] = []
    for _ in range(6):
        response = await ann.play(table.table_id, first_legal(turn), seq)
        appended += response.events
        seq, turn = response.events[-1].seq, response.events[0].move_played.next
    async with watching(channel, table.table_id, after_seq=0) as live:
        await live.until_seq(seq)
    async with watching(channel, table.table_id, after_seq=1) as resumed:
        await resumed.until_seq(seq)
    assert resumed.events == appended[1:]
