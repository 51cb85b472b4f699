"""The tables service on a primary under Redis Sentinel (``GOTI_REDIS_URL`` a
``redis+sentinel://`` URL): the suite's table tests of play, watch, resume, races, retries,
timers, computer turns and the lobby, run here as they run on one Redis, once as Redis
replicates (asynchronously) and once waiting for the replica at every change
(``GOTI_REDIS_WAIT_REPLICAS=1``).

The tests are the suite's own, collected again in this module, where the Redis they get is
the shared Sentinel set-up's primary, reached through the sentinels.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from redis.asyncio import Redis
from redis_topologies import LocalSentinels

from goti.tables.options import TablesOptions
from goti.tables.redis_packing import HiredisSentinelConnection
from goti.tables.runtime import REDIS_CONNECTIONS, open_redis

# The suite's own tests, collected again in this module (so run with its fixtures).
from .test_tables_commands import (
    test_a_retried_request_is_applied_once,
    test_two_clients_racing_the_same_move_land_it_once,
)
from .test_tables_computer import test_the_computer_moves_first_when_it_starts
from .test_tables_games import test_two_people_play_a_whole_game_online
from .test_tables_lobby import test_the_lobby_updates_live
from .test_tables_timers import test_a_turn_timer_that_runs_out_plays_a_move
from .test_tables_watch import (
    test_a_move_on_one_replica_reaches_a_watcher_on_another,
    test_a_watcher_resumes_from_every_seq_the_log_holds_with_no_gap_and_no_duplicate,
)

__all__ = [
    "test_a_move_on_one_replica_reaches_a_watcher_on_another",
    "test_a_retried_request_is_applied_once",
    "test_a_turn_timer_that_runs_out_plays_a_move",
    "test_a_watcher_resumes_from_every_seq_the_log_holds_with_no_gap_and_no_duplicate",
    "test_the_computer_moves_first_when_it_starts",
    "test_the_lobby_updates_live",
    "test_two_clients_racing_the_same_move_land_it_once",
    "test_two_people_play_a_whole_game_online",
]


@pytest.fixture
def redis_url(redis_sentinels: LocalSentinels) -> str:
    """The sentinels, where the tables replicas of these tests find their Redis."""
    return redis_sentinels.url


@pytest.fixture(params=[0, 1], ids=["replicated-later", "replica-waited-for"])
def options(options: TablesOptions, request: pytest.FixtureRequest) -> TablesOptions:
    """The suite's options, with or without waiting for the replica at every change."""
    return dataclasses.replace(options, redis_wait_replicas=request.param)


@pytest_asyncio.fixture(name="redis")
async def sentinel_primary(redis_sentinels: LocalSentinels) -> AsyncIterator[Redis]:
    """The primary, reached as the tables service reaches it, emptied before each test."""
    client = open_redis(redis_sentinels.url)
    try:
        await client.flushdb()
        yield client
    finally:
        await client.aclose()


async def test_goti_reaches_the_primary_through_the_sentinels(
    redis_sentinels: LocalSentinels, redis: Redis
) -> None:
    client = open_redis(redis_sentinels.url)
    try:
        server = await client.info("server")
        assert server["tcp_port"] == redis_sentinels.primary().port
        # Its connections pack commands with hiredis, as those to one Redis do.
        assert client.connection_pool.connection_class is HiredisSentinelConnection
        # More commands at once than the pool holds connections: they wait for one, as on one
        # Redis, and none fails.
        burst = REDIS_CONNECTIONS * 3
        replies = await asyncio.gather(*(client.incr("goti:burst") for _ in range(burst)))
        assert sorted(replies) == list(range(1, burst + 1))
    finally:
        await client.aclose()
