"""Redis going away: calls answer UNAVAILABLE with a clear message and change nothing, and
everything works again once Redis is back — restarted with its data, the game goes on."""

from __future__ import annotations

import asyncio
import functools

import grpc

from goti.api.v1 import tables_pb2
from goti.redis_server import RedisServer

from .conftest import StartReplica
from .table_calls import Guest, first_legal, new_guest, new_request_id, refusal, resuming


async def _until_it_works(call: object, timeout: float = 30.0) -> object:
    """Retry a call (a factory of awaitables) while it fails with UNAVAILABLE."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            return await call()  # type: ignore[operator]
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE or loop.time() > deadline:
                raise
            await asyncio.sleep(0.2)


async def _pass_and_play(guest: Guest) -> tables_pb2.Table:
    return (await guest.create(opponent=tables_pb2.OPPONENT_PASS_AND_PLAY)).table


async def test_an_unreachable_redis_is_unavailable_then_recovers(
    start_replica: StartReplica, private_redis: RedisServer
) -> None:
    replica = await start_replica(redis_url=private_redis.url)
    ann = await new_guest(replica.channel, "Ann")
    table = await _pass_and_play(ann)
    first = await ann.play(table.table_id, first_legal(table.game.turn), 0)
    turn = first.events[0].move_played.next

    await private_redis.astop()
    request_id = new_request_id()
    for call in (
        ann.play(table.table_id, first_legal(turn), 1, request_id=request_id),
        ann.get(table.table_id),
        ann.create(),
        ann.me(),
    ):
        status = await refusal(call)
        assert (status.code, status.reason) == (grpc.StatusCode.UNAVAILABLE, "BACKEND_UNAVAILABLE")
        assert "Redis" in status.message and "retry" in status.message

    await private_redis.astart()
    played = await _until_it_works(
        lambda: ann.play(table.table_id, first_legal(turn), 1, request_id=request_id)
    )
    assert isinstance(played, tables_pb2.PlayResponse)
    assert played.events[0].seq == 2
    again = await ann.play(table.table_id, first_legal(turn), 1, request_id=request_id)
    assert again.events == played.events
    assert (await ann.get(table.table_id)).table.seq == 2


async def test_a_game_goes_on_after_redis_restarts_with_its_data(
    start_replica: StartReplica, private_redis: RedisServer
) -> None:
    replica = await start_replica(redis_url=private_redis.url)
    ann = await new_guest(replica.channel, "Ann")
    table = await _pass_and_play(ann)
    seq, turn = 0, table.game.turn
    async with resuming(table.table_id, [replica.channel]) as watch:
        for plies in range(12):
            if plies == 6:
                await private_redis.arestart()
            response = await _until_it_works(
                functools.partial(
                    ann.play, table.table_id, first_legal(turn), seq, request_id=f"m{plies}"
                )
            )
            assert isinstance(response, tables_pb2.PlayResponse)
            seq, turn = response.events[-1].seq, response.events[0].move_played.next
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while watch.last_seq < seq and loop.time() < deadline:
            await asyncio.sleep(0.05)
    assert seq == 12
    assert watch.last_seq == 12
    watch.check_unbroken(first_seq=watch.snapshots[0].table.seq + 1)
    latest = (await ann.get(table.table_id)).table
    assert latest.seq == 12 and len(latest.game.moves) == 12
    # The player is still known after the restart: the token still works.
    assert (await ann.me()).player.player_id == ann.player_id
