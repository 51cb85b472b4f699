"""Goti's servers in the test's process, each on a free port unless told otherwise: the
referee, the computer player and tables servers, started one way for every suite that needs a
real backend (the tables, the SDK, the terminal client, the web port, the examples)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass
from functools import partial
from typing import Final

from goti import serving
from goti.ai.servicer import bind as bind_ai_service
from goti.ai.servicer import search_pool
from goti.referee.servicer import RefereeService
from goti.settings import Settings
from goti.tables.options import TablesOptions
from goti.tables.runtime import TablesRuntime, close_redis, open_redis_client

SETTINGS: Final = Settings(host="127.0.0.1", grace_seconds=1)
"""Servers reachable from this machine only, that a test never waits long for to stop."""

NO_RATE_LIMITS: Final = TablesOptions(
    joins_per_minute=0, tables_per_minute=0, guests_per_minute=0, referee_deadline_seconds=30.0
)
"""Tables options for tests, whose players all call from one address; the referee, in the
test's own busy process, has 30 s a call rather than 3 (no test is about that deadline)."""


@contextlib.asynccontextmanager
async def running_server(
    name: str,
    bind: serving.Bind,
    settings: Settings,
    *,
    metrics_port: int | None = None,
    drain: serving.Drain | None = None,
) -> AsyncIterator[serving.RunningServer]:
    """A Goti server on a free port, stopped at once on the way out."""
    running = await serving.start_server(
        name, bind, settings, port=0, metrics_port=metrics_port, drain=drain
    )
    try:
        yield running
    finally:
        await running.stop(None)


@contextlib.asynccontextmanager
async def referee_server(settings: Settings) -> AsyncIterator[str]:
    """The referee; yields its address."""
    referee = RefereeService()
    async with running_server("referee", referee.bind, settings, drain=referee.drain) as running:
        yield running.target


@contextlib.contextmanager
def search_processes(workers: int) -> Iterator[Executor]:
    """The computer player's search processes, shut down on the way out; starting them takes
    a while, so suites share them between tests."""
    pool = search_pool(workers)
    try:
        yield pool
    finally:
        pool.shutdown(cancel_futures=True)


@contextlib.asynccontextmanager
async def ai_server(settings: Settings, pool: Executor, *, workers: int) -> AsyncIterator[str]:
    """The computer player, searching in ``pool`` (of ``workers`` processes); yields its
    address."""
    bind_ai = partial(bind_ai_service, pool=pool, workers=workers)
    async with running_server("ai", bind_ai, settings) as running:
        yield running.target


@contextlib.asynccontextmanager
async def computer_player(settings: Settings) -> AsyncIterator[str]:
    """The computer player with one search process of its own; yields its address."""
    with search_processes(1) as pool:
        async with ai_server(settings, pool, workers=1) as target:
            yield target


@dataclass(frozen=True)
class TablesWiring:
    """What a tables server starts with: its settings and options, the Redis holding the
    tables, and where the referee and the computer player answer."""

    settings: Settings
    options: TablesOptions
    redis_url: str
    referee_target: str
    ai_target: str

    async def start(
        self, stack: contextlib.AsyncExitStack, *, port: int = 0
    ) -> tuple[serving.RunningServer, TablesRuntime]:
        """Start a tables server on ``port`` (0: a free one). Closing ``stack`` stops it at
        once, then closes its runtime and its connections."""
        redis = open_redis_client(self.redis_url)
        stack.push_async_callback(close_redis, redis)
        referee_channel = serving.open_channel(self.referee_target, self.settings)
        ai_channel = serving.open_channel(self.ai_target, self.settings)
        stack.push_async_callback(referee_channel.close)
        stack.push_async_callback(ai_channel.close)
        runtime = TablesRuntime.assemble(redis, referee_channel, ai_channel, self.options)
        runtime.start()
        stack.push_async_callback(runtime.close)
        server = await serving.start_server(
            "tables", runtime.bind, self.settings, port=port, drain=runtime.drain
        )
        stack.push_async_callback(server.stop, None)
        return server, runtime


async def start_peers(
    stack: contextlib.AsyncExitStack, options: TablesOptions, redis_url: str, ai_pool: Executor
) -> TablesWiring:
    """Start the referee and the computer player (searching in ``ai_pool``'s one process),
    stopped when ``stack`` closes; return the wiring of tables servers that use them and the
    Redis at ``redis_url``."""
    referee_target = await stack.enter_async_context(referee_server(SETTINGS))
    ai_target = await stack.enter_async_context(ai_server(SETTINGS, ai_pool, workers=1))
    return TablesWiring(SETTINGS, options, redis_url, referee_target, ai_target)
