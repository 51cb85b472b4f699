"""A small gRPC service to exercise the harness with, on raw bytes (no generated code).

Run as ``python -m serving.echo`` (with ``tests/`` on the path) it serves on a free port
with settings from the environment, and logs the port in its "serving" record, for the
tests that signal a real server process.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TypeAlias

import grpc

from goti import serving
from goti.settings import Settings

ECHO_SERVICE = "goti.test.Echo"
SHUTDOWN_PAUSE_SECONDS = 0.1
"""The Echo process's pause at shutdown: short, as tests that signal it wait through it."""

log = logging.getLogger("goti.test.echo")

Context: TypeAlias = "grpc.aio.ServicerContext[bytes, bytes]"


class EchoService:
    """Echo answers with the request (``abort`` aborts); Count streams ``n`` numbered
    messages, or numbers forever, slowly, when ``n`` is negative; Flaky is UNAVAILABLE every
    other call; Sleep sleeps the number of seconds asked and logs when it starts; Hold
    answers once the test sets ``released``."""

    def __init__(self) -> None:
        self.flaky_calls = 0
        self.sleep_started = asyncio.Event()
        self.holding = asyncio.Event()
        self.released = asyncio.Event()

    async def echo(self, request: bytes, context: Context) -> bytes:
        if request == b"abort":
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "asked to abort")
        return request

    async def count(self, request: bytes, context: Context) -> AsyncIterator[bytes]:
        limit = int(request)
        number = 0
        while limit < 0 or number < limit:
            yield str(number).encode()
            number += 1
            if limit < 0:
                await asyncio.sleep(0.01)

    async def flaky(self, request: bytes, context: Context) -> bytes:
        self.flaky_calls += 1
        if self.flaky_calls % 2:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "try again")
        return request

    async def sleep(self, request: bytes, context: Context) -> bytes:
        seconds = float(request)
        log.info("sleep started", extra={"seconds": seconds})
        self.sleep_started.set()
        await asyncio.sleep(seconds)
        return b"slept"

    async def hold(self, request: bytes, context: Context) -> bytes:
        self.holding.set()
        await self.released.wait()
        return b"released"

    def bind(self, server: grpc.aio.Server) -> list[str]:
        handlers: dict[str, grpc.RpcMethodHandler[bytes, bytes]] = {
            "Echo": grpc.unary_unary_rpc_method_handler(self.echo),
            "Count": grpc.unary_stream_rpc_method_handler(self.count),
            "Flaky": grpc.unary_unary_rpc_method_handler(self.flaky),
            "Sleep": grpc.unary_unary_rpc_method_handler(self.sleep),
            "Hold": grpc.unary_unary_rpc_method_handler(self.hold),
        }
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(ECHO_SERVICE, handlers),)
        )
        return [ECHO_SERVICE]


@dataclass(frozen=True)
class EchoClient:
    """The Echo service's methods on a channel."""

    echo: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]
    count: grpc.aio.UnaryStreamMultiCallable[bytes, bytes]
    flaky: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]
    sleep: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]
    hold: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]

    @classmethod
    def on(cls, channel: grpc.aio.Channel) -> EchoClient:
        path = f"/{ECHO_SERVICE}/"
        return cls(
            echo=channel.unary_unary(path + "Echo"),
            count=channel.unary_stream(path + "Count"),
            flaky=channel.unary_unary(path + "Flaky"),
            sleep=channel.unary_unary(path + "Sleep"),
            hold=channel.unary_unary(path + "Hold"),
        )


def main() -> None:
    serving.run_service(
        "echo",
        EchoService().bind,
        Settings.from_env(),
        port=0,
        shutdown_pause=SHUTDOWN_PAUSE_SECONDS,
    )


if __name__ == "__main__":
    main()
