"""The one interceptor of a Goti server, which wraps each method's handler, and the wrapper
that counts and times every call for Prometheus."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Final, Protocol, TypeAlias

import grpc
from prometheus_client import Counter

from goti.serving.metrics import RpcMetrics

CallBehavior: TypeAlias = Callable[..., Awaitable[Any]]
"""A coroutine handler: a unary response, or a stream written with ``context.write()``."""
StreamBehavior: TypeAlias = Callable[..., AsyncGenerator[Any, None]]
"""An async-generator handler, yielding a stream's messages."""


def rewrapped(
    handler: grpc.RpcMethodHandler[Any, Any],
    wrap_call: Callable[[CallBehavior], CallBehavior],
    wrap_stream: Callable[[StreamBehavior], StreamBehavior],
) -> grpc.RpcMethodHandler[Any, Any]:
    """``handler`` with its behaviour wrapped: ``wrap_call`` for a coroutine, ``wrap_stream``
    for an async generator."""
    kind = (handler.request_streaming, handler.response_streaming)
    behavior: Any
    make_handler: Callable[..., grpc.RpcMethodHandler[Any, Any]]
    if kind == (False, False):
        behavior, make_handler = handler.unary_unary, grpc.unary_unary_rpc_method_handler
    elif kind == (False, True):
        behavior, make_handler = handler.unary_stream, grpc.unary_stream_rpc_method_handler
    elif kind == (True, False):
        behavior, make_handler = handler.stream_unary, grpc.stream_unary_rpc_method_handler
    else:
        behavior, make_handler = handler.stream_stream, grpc.stream_stream_rpc_method_handler
    wrapped: Callable[..., Any]
    if inspect.isasyncgenfunction(behavior):
        wrapped = wrap_stream(behavior)
    elif inspect.iscoroutinefunction(behavior):
        wrapped = wrap_call(behavior)
    else:
        # Plain functions would run on a thread pool, which Goti's servers do not have.
        return handler
    return make_handler(
        wrapped,
        request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )


Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"
HandlerWrapper: TypeAlias = Callable[[str, Handler], Handler]


class MethodWrappingInterceptor(grpc.aio.ServerInterceptor):
    """Wraps each method's handler once, by every wrapper in turn (the first one outermost);
    every later call of the method reuses the result.  One interceptor for all of them: each
    interceptor costs every call of the server a coroutine of its own."""

    def __init__(self, *wrappers: HandlerWrapper) -> None:
        self._wrappers = wrappers
        # method -> (the handler it was given, the wrapped one).
        self._wrapped: dict[str, tuple[Handler, Handler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = handler
        for wrap in reversed(self._wrappers):
            wrapped = wrap(method, wrapped)
        self._wrapped[method] = (handler, wrapped)
        return wrapped


def service_of(method: str) -> str:
    """``goti.api.v1.RefereeService`` of ``/goti.api.v1.RefereeService/Apply``."""
    return method.lstrip("/").rpartition("/")[0]


_RPC_TYPES: Final = {
    (False, False): "unary",
    (False, True): "server_stream",
    (True, False): "client_stream",
    (True, True): "bidi_stream",
}


class CallObserver(Protocol):
    """Records the calls of one method: :meth:`start` as each begins, :meth:`finish` once as
    it ends."""

    def start(self) -> float:
        """Count a call begun; returns the time it began, for :meth:`finish`."""

    def finish(self, started_at: float, code: grpc.StatusCode) -> None:
        """Count a call ended with ``code`` and time it from ``started_at``."""


class _Unobserved:
    """Records nothing: for calls carried by a stream outside a Goti server."""

    def start(self) -> float:
        return 0.0

    def finish(self, started_at: float, code: grpc.StatusCode) -> None:
        pass


class _CallObserver:
    """Records one method's calls: started when created, finished once.

    The method's labelled series are looked up once, not on every call: each lookup takes a
    lock and hashes the labels."""

    __slots__ = ("_handled", "_handling_seconds", "_labels", "_metrics", "_started")

    def __init__(self, metrics: RpcMetrics, labels: tuple[str, str, str]) -> None:
        self._metrics = metrics
        self._labels = labels
        self._started = metrics.started.labels(*labels)
        self._handling_seconds = metrics.handling_seconds.labels(*labels)
        self._handled: dict[grpc.StatusCode, Counter] = {}

    def start(self) -> float:
        self._started.inc()
        return time.perf_counter()

    def finish(self, started_at: float, code: grpc.StatusCode) -> None:
        handled = self._handled.get(code)
        if handled is None:
            handled = self._metrics.handled.labels(*self._labels, code.name)
            self._handled[code] = handled
        handled.inc()
        self._handling_seconds.observe(time.perf_counter() - started_at)


def _code_on_return(context: grpc.aio.ServicerContext[Any, Any]) -> grpc.StatusCode:
    # A handler may set a code without raising; None means it left the default, OK.
    code: grpc.StatusCode | None = context.code()
    return code or grpc.StatusCode.OK


def _code_on_error(
    error: BaseException, context: grpc.aio.ServicerContext[Any, Any]
) -> grpc.StatusCode:
    if isinstance(error, grpc.aio.AbortError):
        code: grpc.StatusCode | None = context.code()
        return code or grpc.StatusCode.UNKNOWN
    if isinstance(error, asyncio.CancelledError | GeneratorExit):
        remaining = context.time_remaining()
        if remaining is not None and remaining <= 0:
            return grpc.StatusCode.DEADLINE_EXCEEDED
        return grpc.StatusCode.CANCELLED
    # gRPC answers an unhandled exception with UNKNOWN.
    return grpc.StatusCode.UNKNOWN


class _CarriedCalls:
    """The observers of the calls a bidirectional stream carries, by method."""

    def __init__(self, metrics: RpcMetrics, service: str) -> None:
        self._metrics = metrics
        self._service = service
        self._observers: dict[str, _CallObserver] = {}

    def observer(self, method: str) -> _CallObserver:
        found = self._observers.get(method)
        if found is None:
            labels = (_RPC_TYPES[True, True], self._service, method)
            found = self._observers[method] = _CallObserver(self._metrics, labels)
        return found


# Set while a bidirectional stream's handler runs (a context variable: each call's handler
# runs in a task of its own, and tasks it starts inherit it).
_CARRIED_CALLS: ContextVar[_CarriedCalls | None] = ContextVar("goti_carried_calls", default=None)


def carried_call_observer(method: str) -> CallObserver:
    """Within a bidirectional stream's handler on a Goti server: the observer that records
    each call the stream carries (one request and its answer) in the server's RPC metrics as
    a call of ``method``, ``grpc_type="bidi_stream"``. Elsewhere, one that records nothing."""
    carried = _CARRIED_CALLS.get()
    return _Unobserved() if carried is None else carried.observer(method)


def _observe_call(
    behavior: Callable[..., Awaitable[Any]],
    observer: _CallObserver,
    carried: _CarriedCalls | None = None,
) -> Callable[..., Awaitable[Any]]:
    """Wrap a coroutine handler: unary responses, or streams written with context.write()
    (for a bidirectional one, with ``carried`` the observers of the calls it carries)."""

    async def observed(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        started_at = observer.start()
        carrying = None if carried is None else _CARRIED_CALLS.set(carried)
        try:
            response = await behavior(request, context)
        except BaseException as error:
            observer.finish(started_at, _code_on_error(error, context))
            raise
        finally:
            if carrying is not None:
                _CARRIED_CALLS.reset(carrying)
        observer.finish(started_at, _code_on_return(context))
        return response

    return observed


def _observe_stream(
    behavior: Callable[..., AsyncGenerator[Any, None]], observer: _CallObserver
) -> Callable[..., AsyncGenerator[Any, None]]:
    """Wrap an async-generator handler, passing each message on as it comes."""

    async def observed(
        request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncGenerator[Any, None]:
        started_at = observer.start()
        code = grpc.StatusCode.UNKNOWN
        try:
            # aclosing: when the client goes away, the service's generator is closed now (its
            # finally blocks run), not whenever it is garbage-collected.
            async with contextlib.aclosing(behavior(request, context)) as stream:
                async for message in stream:
                    yield message
        except BaseException as error:
            code = _code_on_error(error, context)
            raise
        else:
            code = _code_on_return(context)
        finally:
            observer.finish(started_at, code)

    return observed


class CallMetrics:
    """Counts and times every call the server handles, streaming ones included."""

    def __init__(self, metrics: RpcMetrics) -> None:
        self._metrics = metrics

    def wrap(self, method: str, handler: Handler) -> Handler:
        kind = (handler.request_streaming, handler.response_streaming)
        labels = (_RPC_TYPES[kind], service_of(method), method.rpartition("/")[2])
        observer = _CallObserver(self._metrics, labels)
        carried = _CarriedCalls(self._metrics, labels[1]) if kind == (True, True) else None
        return rewrapped(
            handler,
            lambda behavior: _observe_call(behavior, observer, carried),
            lambda behavior: _observe_stream(behavior, observer),
        )
