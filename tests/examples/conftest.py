"""A real Goti backend for the examples: a referee, the computer player and a tables server
on the shared Redis, in this process on free ports; the examples run as their own processes
and connect to it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import Executor
from functools import partial

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


@pytest.fixture(scope="session")
def search_processes() -> Iterator[Executor]:
    """The computer player's search process, started once for every test."""
    pool: Executor = search_pool(1)
    try:
        yield pool
    finally:
        pool.shutdown(cancel_futures=True)


@pytest_asyncio.fixture
async def goti_target(
    redis_url: str, redis: Redis, search_processes: Executor
) -> AsyncIterator[str]:
    """Where the examples connect: the tables server of a whole backend on the shared Redis."""
    settings = Settings(host="127.0.0.1", grace_seconds=1)
    options = TablesOptions(
        timer_poll_seconds=0.05, joins_per_minute=0, tables_per_minute=0, guests_per_minute=0
    )
    async with contextlib.AsyncExitStack() as stack:
        referee = await serving.start_server("referee", bind_referee, settings, port=0)
        stack.push_async_callback(referee.stop, None)
        bind_ai = partial(bind_ai_service, pool=search_processes, workers=1)
        ai = await serving.start_server("ai", bind_ai, settings, port=0)
        stack.push_async_callback(ai.stop, None)
        redis_client = open_redis(redis_url)
        stack.push_async_callback(redis_client.connection_pool.disconnect)
        stack.push_async_callback(redis_client.aclose)
        referee_channel = serving.open_channel(referee.target, settings)
        ai_channel = serving.open_channel(ai.target, settings)
        stack.push_async_callback(referee_channel.close)
        stack.push_async_callback(ai_channel.close)
        runtime = TablesRuntime.assemble(redis_client, referee_channel, ai_channel, options)
        runtime.start()
        stack.push_async_callback(runtime.close)
        tables = await serving.start_server(
            "tables", runtime.bind, settings, port=0, drain=runtime.drain
        )
        stack.push_async_callback(tables.stop, None)
        yield tables.target
