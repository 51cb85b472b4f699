"""Real servers for the tables tests: a referee, the computer player, and
tables replicas on the shared Redis (or a private one), each on a free port."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass

import grpc
import pytest
import pytest_asyncio
from redis.asyncio import Redis

from goti import serving
from goti.ai.servicer import bind as bind_ai_service
from goti.ai.servicer import search_pool
from goti.referee.servicer import bind as bind_referee
from goti.settings import Settings
from goti.tables.options import TablesOptions
from goti.tables.runtime import TablesRuntime, open_redis


@pytest.fixture
def settings() -> Settings:
    return Settings(host="127.0.0.1", grace_seconds=1)


@pytest.fixture
def options() -> TablesOptions:
    """Quick timers and heartbeats, a one-second minimum turn timer, no rate limits."""
    return TablesOptions(
        min_turn_timer_seconds=1,
        timer_poll_seconds=0.05,
        timer_lease_seconds=10,
        heartbeat_seconds=1.0,
        joins_per_minute=0,
        tables_per_minute=0,
        guests_per_minute=0,
    )


@pytest_asyncio.fixture
async def referee_target(settings: Settings) -> AsyncIterator[str]:
    running = await serving.start_server("referee", bind_referee, settings, port=0)
    try:
        yield running.target
    finally:
        await running.stop(None)


AI_WORKERS = 2


@pytest.fixture(scope="session")
def ai_pool() -> Iterator[Executor]:
    """The AI service's search processes, started once for the whole run."""
    pool = search_pool(AI_WORKERS)
    try:
        yield pool
    finally:
        pool.shutdown(cancel_futures=True)


@pytest_asyncio.fixture
async def ai_target(settings: Settings, ai_pool: Executor) -> AsyncIterator[str]:
    """The computer player's address."""
    bind_ai = functools.partial(bind_ai_service, pool=ai_pool, workers=AI_WORKERS)
    running = await serving.start_server("ai", bind_ai, settings, port=0)
    try:
        yield running.target
    finally:
        await running.stop(None)


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
            redis = open_redis(redis_url)
            stack.push_async_callback(redis.connection_pool.disconnect)
            stack.push_async_callback(redis.aclose)
            referee_channel = serving.open_channel(referee_target, settings)
            ai_channel = serving.open_channel(ai_target, settings)
            stack.push_async_callback(referee_channel.close)
            stack.push_async_callback(ai_channel.close)
            runtime = TablesRuntime.assemble(redis, referee_channel, ai_channel, options)
            runtime.start()
            stack.push_async_callback(runtime.close)
            server = await serving.start_server(
                "tables", runtime.bind, settings, port=0, drain=runtime.drain
            )
            stack.push_async_callback(server.stop, None)
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
