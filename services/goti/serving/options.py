"""Channel and server options: one place, so that Goti's servers and clients agree."""

from __future__ import annotations

import json
from typing import Final

import grpc

from goti.settings import Settings


def _milliseconds(seconds: float) -> int:
    return round(seconds * 1000)


def server_options(settings: Settings) -> list[tuple[str, int | str]]:
    """The ``grpc.aio.server`` options for a Goti service.

    Mobile clients sit behind NATs that forget idle connections and on radios that drop
    without a goodbye, so the server pings idle connections (``keepalive_time``) and closes
    those that stop answering, and accepts client pings down to a minimum interval — also
    while no call is open and without data in between — so a watching app can keep its
    stream alive through the same NATs.
    """
    options: list[tuple[str, int | str]] = [
        # Two servers on one port would split calls between them silently; fail instead.
        ("grpc.so_reuseport", 0),
        ("grpc.max_send_message_length", settings.max_message_bytes),
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.keepalive_time_ms", _milliseconds(settings.keepalive_time_seconds)),
        ("grpc.keepalive_timeout_ms", _milliseconds(settings.keepalive_timeout_seconds)),
        ("grpc.keepalive_permit_without_calls", 1),
        (
            "grpc.http2.min_ping_interval_without_data_ms",
            _milliseconds(settings.keepalive_min_ping_interval_seconds),
        ),
        # The server's own pings on an idle watch stream carry no data; never stop sending them.
        ("grpc.http2.max_pings_without_data", 0),
        # A client that pings too often is told so (GOAWAY too_many_pings) after two strikes.
        ("grpc.http2.max_ping_strikes", 2),
        # Thousands of apps reconnect at once after a deploy; gRPC's default (1,000 queued
        # calls, then random refusals) turns such a burst into errors.
        ("grpc.server.max_pending_requests", settings.max_pending_requests),
        ("grpc.server.max_pending_requests_hard_limit", 2 * settings.max_pending_requests),
    ]
    if settings.max_concurrent_streams:
        options.append(("grpc.max_concurrent_streams", settings.max_concurrent_streams))
    if settings.max_connection_age_seconds:
        options += [
            ("grpc.max_connection_age_ms", _milliseconds(settings.max_connection_age_seconds)),
            ("grpc.max_connection_age_grace_ms", _milliseconds(settings.grace_seconds)),
        ]
    return options


SERVICE_CONFIG: Final = json.dumps(
    {
        # With a dns:/// target naming several replicas, spread calls over all of them.
        "loadBalancingConfig": [{"round_robin": {}}],
        "methodConfig": [
            {
                "name": [{}],
                # Safe for every Goti call: the referee and the AI are pure functions of their
                # request, and every tables command carries a request_id that makes it
                # idempotent. A replica going away mid-deploy then costs a retry, not an error:
                # calls it had taken in but not begun end CANCELLED (this channel's own
                # cancellations are never retried).
                "retryPolicy": {
                    "maxAttempts": 3,
                    "initialBackoff": "0.05s",
                    "maxBackoff": "0.5s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE", "CANCELLED"],
                },
            }
        ],
    },
    separators=(",", ":"),
)
"""The gRPC service config of every Goti channel: round-robin, and retries on UNAVAILABLE and
CANCELLED."""


def channel_options(settings: Settings) -> list[tuple[str, int | str]]:
    """The channel options of a client of a Goti service, matching :func:`server_options`.

    The client pings every ``keepalive_time``, which settings keep at or above the server's
    minimum ping interval, so the server never disconnects it for pinging too often.
    """
    return [
        ("grpc.max_send_message_length", settings.max_message_bytes),
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.keepalive_time_ms", _milliseconds(settings.keepalive_time_seconds)),
        ("grpc.keepalive_timeout_ms", _milliseconds(settings.keepalive_timeout_seconds)),
        ("grpc.keepalive_permit_without_calls", 1),
        # A watch stream may stay quiet for minutes; keep pinging through it.
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.enable_retries", 1),
        ("grpc.service_config", SERVICE_CONFIG),
    ]


def open_channel(
    target: str,
    settings: Settings,
    *,
    credentials: grpc.ChannelCredentials | None = None,
) -> grpc.aio.Channel:
    """An asyncio channel to a Goti service (``host:port``, or ``dns:///ai:50053``).

    Plaintext unless ``credentials`` are given. Close it (``await channel.close()`` or
    ``async with``) when done.
    """
    options = channel_options(settings)
    if credentials is None:
        return grpc.aio.insecure_channel(target, options=options)
    return grpc.aio.secure_channel(target, credentials, options=options)
