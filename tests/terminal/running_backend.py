"""A real Goti backend in the test's process: a referee, the computer player,
and a tables server on the shared Redis, each on a free port.  The tables server can be
stopped and started again on its port, as when it restarts."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass, field
from functools import partial

from goti import serving
from goti.ai.servicer import bind as bind_ai_service
from goti.ai.servicer import search_pool
from goti.referee.servicer import bind as bind_referee
from goti.settings import Settings
from goti.tables.options import TablesOptions
from goti.tables.runtime import TablesRuntime, open_redis


@contextlib.contextmanager
def one_search_process() -> Iterator[Executor]:
    """One search process for the computer player."""
    pool = search_pool(1)
    try:
        yield pool
    finally:
        pool.shutdown(cancel_futures=True)


@dataclass
class Backend:
    """A running backend; ``target`` is where clients connect."""

    settings: Settings
    options: TablesOptions
    redis_url: str
    referee_target: str
    ai_target: str
    port: int = 0
    _stack: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)
    _tables: contextlib.AsyncExitStack | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start_tables(self) -> None:
        """Start a tables server (on its old port, after a stop)."""
        tables = contextlib.AsyncExitStack()
        redis = open_redis(self.redis_url)
        tables.push_async_callback(redis.connection_pool.disconnect)
        tables.push_async_callback(redis.aclose)
        referee_channel = serving.open_channel(self.referee_target, self.settings)
        ai_channel = serving.open_channel(self.ai_target, self.settings)
        tables.push_async_callback(referee_channel.close)
        tables.push_async_callback(ai_channel.close)
        runtime = TablesRuntime.assemble(redis, referee_channel, ai_channel, self.options)
        runtime.start()
        tables.push_async_callback(runtime.close)
        server = await serving.start_server(
            "tables", runtime.bind, self.settings, port=self.port, drain=runtime.drain
        )
        tables.push_async_callback(server.stop, None)
        self.port = server.port
        self._tables = tables

    async def stop_tables(self) -> None:
        """Stop the tables server at once: every stream and call on it breaks."""
        if self._tables is not None:
            await self._tables.aclose()
            self._tables = None

    async def close(self) -> None:
        await self.stop_tables()
        await self._stack.aclose()


@contextlib.asynccontextmanager
async def running_backend(redis_url: str, ai_pool: Executor) -> AsyncIterator[Backend]:
    """The whole backend on the Redis at ``redis_url``, stopped on the way out; the computer
    player searches in ``ai_pool`` (when the AI service exists)."""
    settings = Settings(host="127.0.0.1", grace_seconds=1)
    options = TablesOptions(
        timer_poll_seconds=0.05,
        heartbeat_seconds=1.0,
        joins_per_minute=0,
        tables_per_minute=0,
        guests_per_minute=0,
    )
    stack = contextlib.AsyncExitStack()
    referee = await serving.start_server("referee", bind_referee, settings, port=0)
    stack.push_async_callback(referee.stop, None)
    bind_ai = partial(bind_ai_service, pool=ai_pool, workers=1)
    ai = await serving.start_server("ai", bind_ai, settings, port=0)
    stack.push_async_callback(ai.stop, None)
    backend = Backend(settings, options, redis_url, referee.target, ai.target, _stack=stack)
    try:
        await backend.start_tables()
        yield backend
    finally:
        await backend.close()
