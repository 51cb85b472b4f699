"""Real servers for the tables tests: a referee, the computer player, and
tables replicas on the shared Redis (or a private one), each on a free port."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass, replace

import grpc
import pytest
import pytest_asyncio
from in_process_backend import (
    NO_RATE_LIMITS,
    SETTINGS,
    TablesWiring,
    ai_server,
    referee_server,
    search_processes,
)
from redis.asyncio import Redis

from goti import serving
from goti.settings import Settings
from goti.tables.keys import KeySpace
from goti.tables.options import TablesOptions
from goti.tables.runtime import TablesRuntime, keyspace_for


@pytest.fixture
def settings() -> Settings:
    return SETTINGS


@pytest.fixture
def options() -> TablesOptions:
    """Quick timers and heartbeats, a one-second minimum turn timer, no rate limits."""
    return replace(
        NO_RATE_LIMITS,
        min_turn_timer_seconds=1,
        timer_poll_seconds=0.05,
        timer_lease_seconds=10,
        heartbeat_seconds=1.0,
    )


@pytest.fixture
def keyspace(options: TablesOptions, redis: Redis) -> KeySpace:
    """Where the tables replicas of the test keep their tables in the test's Redis: one
    Redis's key names, or a cluster's shards (where a module gives a cluster's client)."""
    return keyspace_for(redis, options)


@pytest_asyncio.fixture
async def referee_target(settings: Settings) -> AsyncIterator[str]:
    async with referee_server(settings) as target:
        yield target


AI_WORKERS = 2


@pytest.fixture(scope="session")
def ai_pool() -> Iterator[Executor]:
    """The AI service's search processes, started once for the whole run."""
    with search_processes(AI_WORKERS) as pool:
        yield pool


@pytest_asyncio.fixture
async def ai_target(settings: Settings, ai_pool: Executor) -> AsyncIterator[str]:
    """The computer player's address."""
    async with ai_server(settings, ai_pool, workers=AI_WORKERS) as target:
        yield target


@dataclass
class TablesReplica:
    """One tables server in this process."""

    server: serving.RunningServer
    runtime: TablesRuntime
    channel: grpc.aio.Channel

    @property
    def target(self) -> str:
        return self.server.target


StartReplica = Callable[..., Awaitable[TablesReplica]]


@pytest_asyncio.fixture
async def start_replica(
    settings: Settings,
    options: TablesOptions,
    referee_target: str,
    ai_target: str,
    redis_url: str,
) -> AsyncIterator[StartReplica]:
    """Start tables replicas (on the shared Redis unless given another URL); all stop at the
    end of the test."""
    async with contextlib.AsyncExitStack() as stack:

        async def start(
            *, redis_url: str = redis_url, options: TablesOptions = options
        ) -> TablesReplica:
            wiring = TablesWiring(settings, options, redis_url, referee_target, ai_target)
            server, runtime = await wiring.start(stack)
            channel = serving.open_channel(server.target, settings)
            stack.push_async_callback(channel.close)
            return TablesReplica(server, runtime, channel)

        yield start


@pytest_asyncio.fixture
async def replica(start_replica: StartReplica, redis: Redis) -> TablesReplica:
    """One tables server on the shared Redis, emptied first."""
    return await start_replica()


@pytest.fixture
def channel(replica: TablesReplica) -> grpc.aio.Channel:
    return replica.channel
