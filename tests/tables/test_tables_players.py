"""Guest players: tokens kept secret, names, and the rate limits on guests, tables and joins."""

from __future__ import annotations

import dataclasses
import re

import grpc
from redis.asyncio import Redis

from goti.api.v1 import players_pb2
from goti.tables.options import TablesOptions

from .conftest import StartReplica
from .table_calls import CALL_TIMEOUT, new_guest, refusal


async def test_a_guest_gets_an_id_a_name_and_a_token_only_once(
    channel: grpc.aio.Channel, redis: Redis
) -> None:
    guest = await new_guest(channel)
    assert re.fullmatch(r"Guest \d{4}", guest.player.display_name)
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,32}", guest.player_id)
    assert len(guest.token) <= 64 and re.fullmatch(r"[A-Za-z0-9_.-]+", guest.token)
    me = await guest.me()
    assert me.player == guest.player
    assert (me.streaks.win_streak, me.streaks.best_streak) == (0, 0)
    secret = guest.token.partition(".")[2]
    async for key in redis.scan_iter(match="goti:*"):
        if await redis.type(key) == b"hash":
            for value in (await redis.hgetall(key)).values():
                assert secret.encode() not in value
                assert guest.token.encode() not in value


async def test_a_new_name_shows_at_new_tables_only(channel: grpc.aio.Channel) -> None:
    ann = await new_guest(channel, "Ann")
    table = (await ann.create()).table
    renamed = await ann.players.SetDisplayName(
        players_pb2.SetDisplayNameRequest(display_name="  Annie  "),
        metadata=ann.metadata,
        timeout=CALL_TIMEOUT,
    )
    assert renamed.player.display_name == "Annie"
    assert (await ann.me()).player.display_name == "Annie"
    seated = (await ann.get(table.table_id)).table
    names = {seated.white.player.display_name, seated.black.player.display_name}
    assert "Ann" in names and "Annie" not in names
    fresh = (await ann.create()).table
    assert "Annie" in {fresh.white.player.display_name, fresh.black.player.display_name}


async def test_guests_tables_and_joins_are_rate_limited(
    start_replica: StartReplica, options: TablesOptions, redis: Redis
) -> None:
    limited = dataclasses.replace(
        options, guests_per_minute=3, tables_per_minute=2, joins_per_minute=2
    )
    replica = await start_replica(options=limited)
    ann = await new_guest(replica.channel, "Ann")
    bob = await new_guest(replica.channel, "Bob")
    await new_guest(replica.channel)
    status = await refusal(new_guest(replica.channel))
    assert (status.code, status.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")
    assert 0 < int(status.metadata["retryAfterMs"]) <= 60_000

    tables = [(await ann.create()).table for _ in range(2)]
    status = await refusal(ann.create())
    assert status.reason == "RATE_LIMITED"
    await bob.join(tables[0].code)
    await bob.join(tables[1].code)
    status = await refusal(bob.join(tables[1].code))
    assert status.reason == "RATE_LIMITED" and int(status.metadata["retryAfterMs"]) > 0
