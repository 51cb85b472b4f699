"""A real Goti backend for the examples: a referee, the computer player and a tables server
on the shared Redis, in this process on free ports; the examples run as their own processes
and connect to it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import Executor
from dataclasses import replace

import pytest
import pytest_asyncio
from in_process_backend import NO_RATE_LIMITS, search_processes, start_peers
from redis.asyncio import Redis


@pytest.fixture(scope="session")
def ai_pool() -> Iterator[Executor]:
    """The computer player's search process, started once for every test."""
    with search_processes(1) as pool:
        yield pool


@pytest_asyncio.fixture
async def goti_target(redis_url: str, redis: Redis, ai_pool: Executor) -> AsyncIterator[str]:
    """Where the examples connect: the tables server of a whole backend on the shared Redis."""
    options = replace(NO_RATE_LIMITS, timer_poll_seconds=0.05)
    async with contextlib.AsyncExitStack() as stack:
        wiring = await start_peers(stack, options, redis_url, ai_pool)
        tables, _ = await wiring.start(stack)
        yield tables.target
