"""A Redis call that fails because its connection was closed under it is the store being
unavailable (callers retry), not a bug."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis
from redis.asyncio.connection import Connection

from goti.tables.redis_calls import StoreUnavailableError, reachable

_PING = [b"*1\r\n$4\r\nPING\r\n"]


async def test_a_write_to_a_connection_closed_under_it_is_the_store_unavailable(
    redis_url: str,
) -> None:
    client = Redis.from_url(redis_url)
    try:
        kwargs = client.connection_pool.connection_kwargs
        connection = Connection(host=kwargs["host"], port=kwargs["port"])
        await connection.connect()  # type: ignore[no-untyped-call]
        # Closed between redis-py's check that it is open and its write, as a cluster node's
        # failover closes its connections while commands are on their way.
        await connection.disconnect()
        with (
            pytest.raises(StoreUnavailableError, match="closed by the server before write"),
            reachable(),
        ):
            # The write alone, as redis-py runs it once it has found the connection open.
            await connection._send_packed_command(_PING)
        # The store itself is there: the next command, on a connection of its own, is answered.
        with reachable():
            assert await client.ping() is True
    finally:
        await client.aclose()
