"""A CreateTable whose write reached Redis and whose answer did not: redis-py resends the
script on a new connection, finds the table it wrote, and the player gets that table at the
first call, joinable by its code, with no second table left behind."""

from __future__ import annotations

import contextlib
import hashlib

from redis.asyncio import Redis
from redis_reply_cutter import ReplyCutter

from goti.api.v1 import game_pb2, tables_pb2
from goti.tables import keys
from goti.tables.redis_calls import lua_script

from .conftest import StartReplica
from .table_calls import first_legal, new_guest, watching

CREATE_SCRIPT_SHA = hashlib.sha1(lua_script("create", using=["new_table"]).encode()).hexdigest()


async def test_a_table_whose_creation_answer_was_lost_is_created_once_and_played(
    start_replica: StartReplica, redis: Redis, redis_url: str
) -> None:
    async with contextlib.AsyncExitStack() as stack:
        cutter = ReplyCutter(redis_url, marker=CREATE_SCRIPT_SHA.encode(), reply=b"$2\r\nok\r\n")
        through_cutter = await cutter.start()
        stack.push_async_callback(cutter.stop)
        replica = await start_replica(redis_url=through_cutter)
        ann = await new_guest(replica.channel, "Ann")
        bob = await new_guest(replica.channel, "Bob")

        created = (await ann.create(starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1)).table

        assert cutter.cut.is_set(), "no creation's answer was cut off"
        tables = [key async for key in redis.scan_iter(match=keys.table_state("*"))]
        assert tables == [keys.table_state(created.table_id).encode()]
        assert await redis.get(keys.table_code(created.code)) == created.table_id.encode()
        joined = await bob.join(created.code)
        assert joined.table.table_id == created.table_id
        async with watching(
            replica.channel, created.table_id, joined.table.seq, bob.metadata
        ) as watch:
            played = await ann.play(created.table_id, first_legal(joined.table.game.turn), 1)
            await watch.until_seq(played.events[-1].seq)
        assert watch.events == list(played.events)
        assert watch.events[-1].move_played.next.side == game_pb2.COLOR_WHITE
