"""What every store of the tables service shares in its Redis calls: one error for Redis
being out of reach, the Lua scripts' text, and the decoding of replies."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from importlib.resources import files
from typing import TypeAlias

from redis import exceptions as redis_errors
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

RedisClient: TypeAlias = Redis | RedisCluster
"""What the stores talk to: one Redis (or the primary Sentinel names), or a Redis Cluster."""


_CLUSTER_IN_FLUX = (
    redis_errors.ClusterError,
    redis_errors.SlotNotCoveredError,
    redis_errors.TryAgainError,
    redis_errors.AskError,
)
_CLUSTER_OUT_OF_REACH = ("Redis Cluster cannot be connected", "startup_nodes could not agree")
_REFUSED_WHILE_UNAVAILABLE = (redis_errors.OutOfMemoryError, redis_errors.ReadOnlyError)
"""Error replies redis-py raises as classes of their own, their code (OOM, READONLY) cut from
the message."""


class StoreUnavailableError(Exception):
    """Redis could not be reached or did not answer in time."""


@contextlib.contextmanager
def reachable() -> Iterator[None]:
    """Turn Redis' connection troubles into :class:`StoreUnavailableError`."""
    try:
        yield
    except (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError) as error:
        raise StoreUnavailableError(f"Redis did not answer: {error}") from error
    except _CLUSTER_IN_FLUX as error:
        # A cluster failing over or moving slots, still so once redis-py's own retries and
        # redirections (MOVED, ASK, TRYAGAIN) are spent.
        raise StoreUnavailableError(f"Redis Cluster refused: {error!r}") from error
    except redis_errors.RedisClusterException as error:
        # Also what redis-py raises for a command Goti got wrong (keys of two slots), which
        # must not pass for an outage.
        if str(error).startswith(_CLUSTER_OUT_OF_REACH):
            raise StoreUnavailableError(f"Redis Cluster did not answer: {error}") from error
        raise
    except redis_errors.ResponseError as error:
        # A server that is loading its data, read-only after a failover, out of memory or
        # short of the replicas it must write to (min-replicas-to-write) answers with an error
        # reply; it is still the store being unavailable.
        unavailable = ("LOADING", "READONLY", "MASTERDOWN", "OOM", "MISCONF", "NOREPLICAS")
        if isinstance(error, _REFUSED_WHILE_UNAVAILABLE) or str(error).startswith(unavailable):
            raise StoreUnavailableError(f"Redis refused: {error}") from error
        raise


def lua_script(name: str, *, using: Sequence[str] = ()) -> str:
    """The Lua text of one of the stores' scripts, from ``lua/`` beside this module, with the
    text of the shared functions it calls (``using``, the names of their files) ahead of it:
    a function two scripts share is written once, in a file of its own, since one script
    cannot call another.
    """
    folder = files("goti.tables").joinpath("lua")
    return "".join(
        folder.joinpath(f"{part}.lua").read_text(encoding="utf-8") for part in (*using, name)
    )


def as_bytes(value: object) -> bytes:
    """A reply item as bytes (the client is made with ``decode_responses=False``)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    raise TypeError(f"unexpected Redis reply item {value!r}")


def flatten(fields: Mapping[str, bytes]) -> list[str | bytes]:
    """A hash's fields as HSET's arguments: name, value, name, value..."""
    flat: list[str | bytes] = []
    for name, value in fields.items():
        flat.append(name)
        flat.append(value)
    return flat
