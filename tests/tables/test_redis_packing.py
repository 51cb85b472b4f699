"""The tables service's Redis connections pack commands with hiredis: the same bytes as
redis-py's own packing, the same refusals, and every kind of value arrives intact."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.asyncio.connection import Connection, SSLConnection, UnixDomainSocketConnection
from redis.exceptions import DataError

from goti.redis_server import RedisServer
from goti.tables.redis_packing import (
    HiredisConnection,
    HiredisSSLConnection,
    HiredisUnixConnection,
)
from goti.tables.runtime import close_redis, open_redis

# What Goti's stores send: text (some of it not ASCII), binary protobuf and deflated bytes
# holding CR, LF and NUL, integers of every size, and the floats of sorted-set scores.
ARGUMENTS = (
    "EVALSHA",
    "0" * 40,
    3,
    "goti:{t1}:table",
    "Zoë ♔",
    b"\x00\r\n\x08\x01\x12\x05moves\r\n",
    -1,
    0,
    2**62,
    1_700_000_000_123,
    0.1,
    -2.5e-7,
    float("inf"),
    b"",
    "",
)

# Text, bytes and numbers as Redis hands them back.
STORED: dict[str, tuple[bytes | str | int | float, bytes]] = {
    "text": ("Zoë ♔", "Zoë ♔".encode()),
    "binary": (b"\x00\r\n\x01*3\r\n$", b"\x00\r\n\x01*3\r\n$"),
    "negative": (-42, b"-42"),
    "large": (2**62, str(2**62).encode()),
    "float": (0.1, b"0.1"),
    "empty": (b"", b""),
}


def test_hiredis_writes_the_bytes_redis_py_writes() -> None:
    ours = HiredisConnection().pack_command(*ARGUMENTS)
    theirs = Connection().pack_command(*ARGUMENTS)
    assert b"".join(ours) == b"".join(theirs)
    # A command named in two words is split as redis-py splits it.
    assert b"".join(HiredisConnection().pack_command("SCRIPT LOAD", "return 1")) == b"".join(
        Connection().pack_command("SCRIPT LOAD", "return 1")
    )


@pytest.mark.parametrize("value", [True, None, object()])
def test_a_value_redis_cannot_take_is_refused_as_redis_py_refuses_it(value: object) -> None:
    with pytest.raises(DataError):
        Connection().pack_command("SET", "key", value)  # type: ignore[arg-type]
    with pytest.raises(DataError):
        HiredisConnection().pack_command("SET", "key", value)


@pytest.mark.parametrize(
    ("url", "redis_py_class", "ours"),
    [
        ("redis://localhost:6379/0", Connection, HiredisConnection),
        ("rediss://localhost:6380/0", SSLConnection, HiredisSSLConnection),
        ("unix:///run/redis.sock", UnixDomainSocketConnection, HiredisUnixConnection),
    ],
)
def test_each_kind_of_url_keeps_its_kind_of_connection(
    url: str, redis_py_class: type[Connection], ours: type[Connection]
) -> None:
    connection_class = open_redis(url).connection_pool.connection_class
    assert connection_class is ours
    assert issubclass(connection_class, redis_py_class)


async def test_values_of_every_kind_arrive_intact(redis_url: str, redis: Redis) -> None:
    client = open_redis(redis_url)
    try:
        assert client.connection_pool.connection_class is HiredisConnection
        for name, (value, _) in STORED.items():
            await client.set(f"goti:packing:{name}", value)
        # A pipeline packs its commands one by one, through the same packer.
        async with client.pipeline(transaction=True) as pipeline:
            for name in STORED:
                pipeline.get(f"goti:packing:{name}")
            read_back = await pipeline.execute()
        assert read_back == [stored for _, stored in STORED.values()]
        # Read by a client packing as redis-py does: the same values.
        for name, (_, stored) in STORED.items():
            assert await redis.get(f"goti:packing:{name}") == stored
        # And a script's arguments, as a commit passes them.
        echoed = await client.eval("return ARGV", 0, *(value for value, _ in STORED.values()))
        assert echoed == [stored for _, stored in STORED.values()]
    finally:
        await close_redis(client)


@pytest.fixture
def redis_socket() -> Iterator[str]:
    """The Unix socket URL of a Redis of the test's own."""
    # A short folder: a socket's path must fit in about a hundred bytes.
    with tempfile.TemporaryDirectory(prefix="goti-") as folder:
        socket = Path(folder) / "redis.sock"
        with RedisServer(folder, persistent=False, unix_socket=socket) as server:
            yield server.unix_url


async def test_a_redis_on_a_unix_socket_is_reached_and_packed_for(redis_socket: str) -> None:
    client = open_redis(redis_socket)
    try:
        assert client.connection_pool.connection_class is HiredisUnixConnection
        await client.set("goti:packing:unix", "Zoë ♔")
        async with client.pipeline(transaction=False) as pipeline:
            pipeline.append("goti:packing:unix", b"\x00\r\n")
            pipeline.get("goti:packing:unix")
            _, read_back = await pipeline.execute()
        assert read_back == "Zoë ♔".encode() + b"\x00\r\n"
    finally:
        await close_redis(client)
