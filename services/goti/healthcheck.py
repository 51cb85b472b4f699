"""Ask a Goti server whether it is serving, through the standard gRPC health protocol.

Container health checks run it as a command::

    python -m goti.healthcheck localhost:50052
    python -m goti.healthcheck --service goti.api.v1.RefereeService localhost:50052

It prints the status and exits 0 when SERVING, 1 otherwise (not serving, unknown service,
unreachable). ``goti serve`` uses :func:`wait_until_serving` to wait for each process it starts.
It depends on nothing but gRPC, so it stays quick to start.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from typing import Final

import grpc
from grpc_health.v1 import health_pb2

HealthCheckRequest = health_pb2.HealthCheckRequest
HealthCheckResponse = health_pb2.HealthCheckResponse

SERVING: Final = "SERVING"
NOT_SERVING: Final = "NOT_SERVING"
SERVICE_UNKNOWN: Final = "SERVICE_UNKNOWN"


def health_check_call(
    channel: grpc.aio.Channel,
) -> grpc.aio.UnaryUnaryMultiCallable[HealthCheckRequest, HealthCheckResponse]:
    """``grpc.health.v1.Health/Check`` on ``channel``, typed (the generated stub is not)."""
    return channel.unary_unary(
        "/grpc.health.v1.Health/Check",
        request_serializer=HealthCheckRequest.SerializeToString,
        response_deserializer=HealthCheckResponse.FromString,
    )


def health_watch_call(
    channel: grpc.aio.Channel,
) -> grpc.aio.UnaryStreamMultiCallable[HealthCheckRequest, HealthCheckResponse]:
    """``grpc.health.v1.Health/Watch`` on ``channel``: every change of a service's status."""
    return channel.unary_stream(
        "/grpc.health.v1.Health/Watch",
        request_serializer=HealthCheckRequest.SerializeToString,
        response_deserializer=HealthCheckResponse.FromString,
    )


async def check(
    target: str, service: str = "", *, timeout: float = 5.0, wait_for_ready: bool = False
) -> str:
    """The health status of ``service`` (the whole server when empty) at ``target``.

    Returns ``SERVING``, ``NOT_SERVING`` or ``SERVICE_UNKNOWN`` (the server has no such
    service). Raises ``grpc.aio.AioRpcError`` when the server cannot be asked (UNAVAILABLE,
    DEADLINE_EXCEEDED). With ``wait_for_ready``, waits up to ``timeout`` for the server to
    come up instead of failing at once.
    """
    async with grpc.aio.insecure_channel(target) as channel:
        try:
            response = await health_check_call(channel)(
                HealthCheckRequest(service=service),
                timeout=timeout,
                wait_for_ready=wait_for_ready,
            )
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return SERVICE_UNKNOWN
            raise
    return HealthCheckResponse.ServingStatus.Name(response.status)


async def wait_until_serving(target: str, service: str = "", *, timeout: float = 30.0) -> None:
    """Return once ``service`` at ``target`` is SERVING; raise ``TimeoutError`` after
    ``timeout`` seconds, saying what was seen last."""
    deadline = time.monotonic() + timeout
    last_seen = "no answer"
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            status = await check(target, service, timeout=remaining, wait_for_ready=True)
        except grpc.aio.AioRpcError as error:
            last_seen = f"{error.code().name}: {error.details()}"
            if error.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                await asyncio.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
            continue
        if status == SERVING:
            return
        last_seen = status
        await asyncio.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
    what = service or "the server"
    raise TimeoutError(f"{target}: {what} not serving after {timeout:g} s (last: {last_seen})")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m goti.healthcheck",
        description="Exit 0 when a Goti server reports SERVING over the gRPC health protocol.",
    )
    parser.add_argument("target", help="host:port of the server")
    parser.add_argument(
        "--service", default="", help="full gRPC service name (default: the whole server)"
    )
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait (5)")
    parser.add_argument(
        "--wait", action="store_true", help="wait up to the timeout until it is serving"
    )
    arguments = parser.parse_args(argv)
    try:
        if arguments.wait:
            asyncio.run(
                wait_until_serving(arguments.target, arguments.service, timeout=arguments.timeout)
            )
            status = SERVING
        else:
            status = asyncio.run(
                check(arguments.target, arguments.service, timeout=arguments.timeout)
            )
    except grpc.aio.AioRpcError as error:
        print(f"{arguments.target}: {error.code().name}: {error.details()}", file=sys.stderr)
        return 1
    except TimeoutError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"{arguments.target}: {status}")
    return 0 if status == SERVING else 1


if __name__ == "__main__":
    sys.exit(main())
