"""Fixtures of the terminal client's tests: a real backend and the player's own folders."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from concurrent.futures import Executor
from pathlib import Path

import pytest
import pytest_asyncio
from in_process_backend import search_processes
from redis.asyncio import Redis

from goti_client.terminal.player_files import PlayerFiles

from .running_backend import Backend, running_backend


@pytest.fixture(scope="session")
def ai_pool() -> Iterator[Executor]:
    """The computer player's search process, started once for every test."""
    with search_processes(1) as pool:
        yield pool


@pytest_asyncio.fixture
async def backend(redis_url: str, redis: Redis, ai_pool: Executor) -> AsyncIterator[Backend]:
    """The whole backend on the shared Redis, emptied first."""
    async with running_backend(redis_url, ai_pool) as started:
        yield started


@pytest.fixture
def player_files(tmp_path: Path) -> PlayerFiles:
    """The player's config and data folders, private to the test."""
    return PlayerFiles(tmp_path / "config", tmp_path / "data")
