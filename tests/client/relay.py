"""A real gRPC relay between the SDK and a real tables server that can lose replies.

Every call is passed on byte for byte, metadata and rich error statuses included.  A test
may ask it to lose the next replies of one method: the server has done the work, and the
client sees UNAVAILABLE, as when a connection breaks after a command arrived (or CANCELLED,
as when a stopping server cuts a call off).  The relay
keeps every request it passed on, so a test can read what the client sent on each try.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from typing import Any, Final

import grpc

STREAMING_METHODS: Final = frozenset(
    {"/goti.api.v1.TablesService/WatchTable", "/goti.api.v1.TablesService/WatchLobby"}
)
_FORWARDED_METADATA: Final = frozenset({"authorization"})
UPSTREAM_TIMEOUT: Final = 30.0
"""Seconds for each call passed on: generous, for a busy machine."""


def _identity(payload: bytes) -> bytes:
    return payload


class Relay(grpc.GenericRpcHandler):
    """Passes every call on to ``upstream``; loses replies on request."""

    def __init__(self, upstream: grpc.aio.Channel) -> None:
        self._upstream = upstream
        self._replies_to_lose: dict[str, list[grpc.StatusCode]] = defaultdict(list)
        self.requests: dict[str, list[bytes]] = defaultdict(list)
        self._server: grpc.aio.Server | None = None
        self.port = 0

    def lose_replies(
        self, method: str, count: int = 1, *, code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE
    ) -> None:
        """Lose the next ``count`` replies of ``method`` (``/goti.api.v1.TablesService/Play``)
        after the server has answered them: the client gets ``code`` instead."""
        self._replies_to_lose[method] += [code] * count

    async def start(self) -> str:
        self._server = grpc.aio.server()
        self._server.add_generic_rpc_handlers((self,))
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        await self._server.start()
        return f"127.0.0.1:{self.port}"

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(None)

    def service(
        self, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        method = handler_call_details.method
        if method in STREAMING_METHODS:
            return grpc.unary_stream_rpc_method_handler(
                self._streaming(method),
                request_deserializer=_identity,
                response_serializer=_identity,
            )
        return grpc.unary_unary_rpc_method_handler(
            self._unary(method), request_deserializer=_identity, response_serializer=_identity
        )

    @staticmethod
    def _metadata(context: grpc.aio.ServicerContext[Any, Any]) -> tuple[tuple[str, str], ...]:
        return tuple(
            (key, value)
            for key, value in context.invocation_metadata() or ()
            if key in _FORWARDED_METADATA and isinstance(value, str)
        )

    @staticmethod
    async def _pass_on_error(
        context: grpc.aio.ServicerContext[Any, Any], error: grpc.aio.AioRpcError
    ) -> None:
        trailing = tuple(error.trailing_metadata() or ())
        await context.abort(error.code(), error.details() or "", trailing)

    def _unary(self, method: str) -> Callable[[bytes, grpc.aio.ServicerContext[Any, Any]], Any]:
        async def relay(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
            self.requests[method].append(request)
            call = self._upstream.unary_unary(
                method, request_serializer=_identity, response_deserializer=_identity
            )
            try:
                reply: bytes = await call(
                    request, metadata=self._metadata(context), timeout=UPSTREAM_TIMEOUT
                )
            except grpc.aio.AioRpcError as error:
                await self._pass_on_error(context, error)
                raise
            if self._replies_to_lose[method]:
                code = self._replies_to_lose[method].pop(0)
                await context.abort(code, "the relay lost the reply")
            return reply

        return relay

    def _streaming(
        self, method: str
    ) -> Callable[[bytes, grpc.aio.ServicerContext[Any, Any]], AsyncIterator[bytes]]:
        async def relay(
            request: bytes, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[bytes]:
            self.requests[method].append(request)
            call = self._upstream.unary_stream(
                method, request_serializer=_identity, response_deserializer=_identity
            )(request, metadata=self._metadata(context))
            try:
                async for message in call:
                    yield message
            except grpc.aio.AioRpcError as error:
                await self._pass_on_error(context, error)
            except asyncio.CancelledError:
                call.cancel()
                raise
            finally:
                call.cancel()

        return relay
