"""A real Goti backend in the test's process: a referee, the computer player,
and a tables server on the shared Redis, each on a free port.  The tables server can be
stopped and started again on its port, as when it restarts."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace

from in_process_backend import NO_RATE_LIMITS, TablesWiring, start_peers

from goti import serving


@dataclass
class Backend:
    """A running backend; ``target`` is where clients connect."""

    wiring: TablesWiring
    port: int = 0
    _stack: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)
    _tables: contextlib.AsyncExitStack | None = None
    _server: serving.RunningServer | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start_tables(self) -> None:
        """Start a tables server (on its old port, after a stop)."""
        tables = contextlib.AsyncExitStack()
        server, _ = await self.wiring.start(tables, port=self.port)
        self.port = server.port
        self._tables = tables
        self._server = server

    async def drain_tables(self, *, grace: float) -> None:
        """Stop the tables server as a deploy does: its clients are sent away (GOAWAY) and
        the calls in flight get ``grace`` seconds to finish."""
        if self._server is not None:
            await self._server.stop(grace)
        await self.stop_tables()

    async def stop_tables(self) -> None:
        """Stop the tables server at once: every stream and call on it breaks."""
        if self._tables is not None:
            await self._tables.aclose()
            self._tables = None
            self._server = None

    async def close(self) -> None:
        await self.stop_tables()
        await self._stack.aclose()


@contextlib.asynccontextmanager
async def running_backend(redis_url: str, ai_pool: Executor) -> AsyncIterator[Backend]:
    """The whole backend on the Redis at ``redis_url``, stopped on the way out; the computer
    player searches in ``ai_pool``."""
    options = replace(NO_RATE_LIMITS, timer_poll_seconds=0.05, heartbeat_seconds=1.0)
    stack = contextlib.AsyncExitStack()
    backend = Backend(await start_peers(stack, options, redis_url, ai_pool), _stack=stack)
    try:
        await backend.start_tables()
        yield backend
    finally:
        await backend.close()
