"""How the SDK talks to Goti: channel options that agree with Goti's servers, and the
jittered exponential backoff used to retry commands and reconnect broken streams.

The options follow the contract's advice for clients (tables.proto): keepalive pings every
30 s with a 10 s timeout, also while no call is open (Goti's servers accept pings down to
every 20 s by default), kept up through quiet watch streams.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass
from typing import Final

import grpc

KEEPALIVE_TIME_SECONDS: Final = 30.0
KEEPALIVE_TIMEOUT_SECONDS: Final = 10.0
MAX_SEND_MESSAGE_BYTES: Final = 1024 * 1024
"""Goti's servers refuse larger messages by default; no request comes near it."""
MAX_RECEIVE_MESSAGE_BYTES: Final = 4 * 1024 * 1024

_SERVICE_CONFIG: Final = json.dumps(
    # With a dns:/// target naming several replicas, spread calls over all of them.
    {"loadBalancingConfig": [{"round_robin": {}}]},
    separators=(",", ":"),
)


def channel_options(
    *,
    keepalive_time: float = KEEPALIVE_TIME_SECONDS,
    keepalive_timeout: float = KEEPALIVE_TIMEOUT_SECONDS,
) -> list[tuple[str, int | str]]:
    """The options of an SDK channel."""
    return [
        ("grpc.max_send_message_length", MAX_SEND_MESSAGE_BYTES),
        ("grpc.max_receive_message_length", MAX_RECEIVE_MESSAGE_BYTES),
        ("grpc.keepalive_time_ms", round(keepalive_time * 1000)),
        ("grpc.keepalive_timeout_ms", round(keepalive_timeout * 1000)),
        ("grpc.keepalive_permit_without_calls", 1),
        # A watch stream may stay quiet for minutes; keep pinging through it.
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.service_config", _SERVICE_CONFIG),
    ]


def open_channel(
    target: str, *, credentials: grpc.ChannelCredentials | None = None
) -> grpc.aio.Channel:
    """An asyncio channel to Goti's public API (``host:port``): plaintext unless
    ``credentials`` are given."""
    if credentials is None:
        return grpc.aio.insecure_channel(target, options=channel_options())
    return grpc.aio.secure_channel(target, credentials, options=channel_options())


@dataclass(frozen=True, slots=True)
class Backoff:
    """Delays between tries: ``initial`` doubling up to ``maximum``, each drawn at random
    between half and all of it, so that thousands of clients cut off together (a deploy, a
    network blip) come back spread out rather than all at once."""

    initial: float = 0.5
    maximum: float = 30.0
    multiplier: float = 2.0

    def delay(self, attempt: int) -> float:
        """The wait before try ``attempt + 1`` (``attempt`` counts from 0)."""
        ceiling = min(self.maximum, self.initial * self.multiplier ** min(attempt, 64))
        return random.uniform(ceiling / 2, ceiling)


STREAM_BACKOFF: Final = Backoff(initial=0.5, maximum=30.0)
"""Reconnecting a broken watch stream, as the contract advises."""
COMMAND_BACKOFF: Final = Backoff(initial=0.1, maximum=2.0)
"""Retrying a command that found Goti unavailable: short, the player is waiting."""
SEEK_BACKOFF: Final = Backoff(initial=0.25, maximum=2.0)
"""Reopening a broken seek stream: several tries inside the server's resume window (10 s by
default), so that the player keeps their place in the pool."""


def new_request_id() -> str:
    """A fresh command id: 32 hex digits."""
    return uuid.uuid4().hex
