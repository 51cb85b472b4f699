"""What the server does by itself: turn timers that run out, waiting tables cleared away."""

from __future__ import annotations

import asyncio
import dataclasses

import grpc
from redis.asyncio import Redis

from goti.api.v1 import game_pb2, tables_pb2, tables_pb2_grpc
from goti.tables.keys import KeySpace
from goti.tables.options import TablesOptions

from .conftest import StartReplica
from .table_calls import (
    CALL_TIMEOUT,
    WAIT_TIMEOUT,
    first_legal,
    new_guest,
    refusal,
    until_read,
    watching,
)


async def test_a_turn_timer_that_runs_out_plays_a_move(channel: grpc.aio.Channel) -> None:
    ann = await new_guest(channel, "Ann")
    bob = await new_guest(channel, "Bob")
    created = await ann.create(
        starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1, turn_timer_seconds=1
    )
    joined = await bob.join(created.table.code)
    table = joined.table
    assert table.turn_timer_seconds == 1
    assert table.HasField("turn_deadline")
    async with watching(channel, table.table_id, after_seq=table.seq) as watch:
        # Nobody moves: the timer plays for Black, then for White.
        await watch.until_seq(table.seq + 2)
    timed = watch.events[:2]
    for event, side in zip(timed, (game_pb2.COLOR_BLACK, game_pb2.COLOR_WHITE), strict=True):
        assert event.move_played.source == tables_pb2.MOVE_SOURCE_TIMER
        assert event.move_played.record.side == side
        assert event.HasField("turn_deadline")
        assert event.turn_deadline.ToMilliseconds() > event.time.ToMilliseconds()
    now = await ann.get(table.table_id)
    assert now.table.HasField("turn_deadline")


async def test_a_late_move_and_the_timer_never_both_land(channel: grpc.aio.Channel) -> None:
    ann = await new_guest(channel, "Ann")
    table = (
        await ann.create(opponent=tables_pb2.OPPONENT_PASS_AND_PLAY, turn_timer_seconds=1)
    ).table
    seq, turn = table.seq, table.game.turn
    for _ in range(4):
        # Play right around the deadline: either the move or the timer's lands, never both.
        await asyncio.sleep(0.97)
        try:
            response = await ann.play(table.table_id, first_legal(turn), seq)
            seq, turn = response.events[-1].seq, response.events[0].move_played.next
        except grpc.aio.AioRpcError as error:
            assert error.code() == grpc.StatusCode.ABORTED
            latest = (await ann.get(table.table_id)).table
            seq, turn = latest.seq, latest.game.turn
    latest = (await ann.get(table.table_id)).table
    assert len(latest.game.moves) == latest.seq


async def test_the_contract_minimum_holds_for_real_clients(
    start_replica: StartReplica, redis: Redis
) -> None:
    replica = await start_replica(options=TablesOptions(guests_per_minute=0))
    ann = await new_guest(replica.channel)
    status = await refusal(ann.create(turn_timer_seconds=9))
    assert (status.reason, status.metadata["field"]) == ("INVALID_REQUEST", "turn_timer_seconds")
    assert (await ann.create(turn_timer_seconds=10)).table.turn_timer_seconds == 10


async def test_a_table_nobody_joins_is_cleared_away(
    start_replica: StartReplica, options: TablesOptions, redis: Redis, keyspace: KeySpace
) -> None:
    replica = await start_replica(options=dataclasses.replace(options, waiting_table_seconds=1))
    ann = await new_guest(replica.channel)
    table = (await ann.create(visibility=tables_pb2.VISIBILITY_PUBLIC)).table
    kept = keyspace.table(table.table_id)
    assert await redis.zscore(kept.shard.lobby, table.table_id) is not None
    tables = tables_pb2_grpc.TablesServiceStub(replica.channel)

    async def gone() -> bool:
        listed = await tables.ListTables(tables_pb2.ListTablesRequest(), timeout=CALL_TIMEOUT)
        return not listed.tables and not await redis.exists(kept.state)

    await until_read(
        gone,
        lambda cleared: cleared,
        timeout=WAIT_TIMEOUT,
        what="the waiting table was never cleared away",
        every=0.05,
    )
    status = await refusal(ann.get(table.table_id))
    assert status.reason == "TABLE_NOT_FOUND"
    status = await refusal(ann.join(table.code))
    assert status.reason == "TABLE_NOT_FOUND"
    assert await redis.zscore(kept.shard.timers, table.table_id) is None
