"""Redis connections that write their commands with hiredis's packer, in C.

redis-py's blocking client packs commands with hiredis when it is installed, but its asyncio
connections pack every argument in Python, some thirty-five for a commit's script call (in a
loop of such calls, 40-60 µs of client CPU a call more; under the service's load a few µs a
move, ``bench/results/move_path_paired_hiredis.json``).  These connections take
redis-py's own hiredis packer (``redis.connection.HiredisRespSerializer``), which writes the
same bytes (integers, floats and text alike) and refuses the same values with the same
``DataError``.  Only the packing changes: connecting, reading and retrying stay redis-py's.

A Redis Cluster client makes its connections itself, of redis-py's class, and keeps packing
in Python.
"""

from __future__ import annotations

from typing import Any, Final

from redis.asyncio.connection import (
    AbstractConnection,
    Connection,
    ConnectionPool,
    SSLConnection,
    UnixDomainSocketConnection,
)
from redis.asyncio.sentinel import SentinelManagedConnection, SentinelManagedSSLConnection
from redis.connection import HiredisRespSerializer
from redis.utils import HIREDIS_AVAILABLE

_PACKER: Final = HiredisRespSerializer()  # type: ignore[no-untyped-call]  # untyped in redis-py 8.2.0


class _HiredisPacking:
    def pack_command(self, *args: Any) -> list[bytes]:
        packed: list[bytes] = _PACKER.pack(*args)
        return packed


class HiredisConnection(_HiredisPacking, Connection):
    """A TCP connection to Redis."""


class HiredisSSLConnection(_HiredisPacking, SSLConnection):
    """A TLS connection to Redis (``rediss://``)."""


class HiredisUnixConnection(_HiredisPacking, UnixDomainSocketConnection):
    """A connection over a Unix socket (``unix://``)."""


class HiredisSentinelConnection(_HiredisPacking, SentinelManagedConnection):
    """A connection to the primary the sentinels name."""


class HiredisSentinelSSLConnection(_HiredisPacking, SentinelManagedSSLConnection):
    """A TLS connection to the primary the sentinels name."""


PACKING_IN_C: Final[dict[type[AbstractConnection], type[AbstractConnection]]] = {
    Connection: HiredisConnection,
    SSLConnection: HiredisSSLConnection,
    UnixDomainSocketConnection: HiredisUnixConnection,
    SentinelManagedConnection: HiredisSentinelConnection,
    SentinelManagedSSLConnection: HiredisSentinelSSLConnection,
}
"""redis-py's connection classes, each with its hiredis-packing twin."""


def pack_in_c(pool: ConnectionPool) -> ConnectionPool:
    """``pool``, its connections from now on packing with hiredis (where hiredis is
    installed, and the pool's connection class is one of redis-py's own)."""
    if HIREDIS_AVAILABLE:
        pool.connection_class = PACKING_IN_C.get(pool.connection_class, pool.connection_class)
    return pool
