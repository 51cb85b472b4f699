"""The server harness every Goti service runs in, and the channel options its clients use.

A service's ``__main__`` is one line::

    serving.main("referee", bind)

where ``bind(server)`` adds the service's servicers to a ``grpc.aio.Server`` and returns the
full names of the gRPC services it added (``["goti.api.v1.RefereeService"]``). The harness
adds the standard health service (``grpc.health.v1.Health``, one status per service) and
server reflection (so ``grpcurl`` works), applies the keepalive, message-size and queueing
options from :class:`~goti.settings.Settings`, counts and times every call for Prometheus,
writes structured logs, and stops gracefully on SIGTERM or SIGINT: health goes NOT_SERVING
first, new calls are still served for a moment (:data:`SHUTDOWN_PAUSE_SECONDS`) while load
balancers move away, then every client is sent away (an HTTP/2 GOAWAY on each connection, as
gRPC's own graceful stop does) and takes its next calls to another replica, while calls in
flight finish; all within ``GOTI_GRACE_SECONDS`` of the signal, after which what still runs
is cancelled. A second signal stops at once.

Tests use :func:`start_server` on port 0 and :meth:`RunningServer.stop`; clients (the tables
service dialling the referee and the AI, the SDK, the benchmarks) use :func:`open_channel`,
whose options match the server's so neither side is surprised by the other's pings.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import gc
import inspect
import json
import logging
import os
import signal
import socket
import socketserver
import sys
import threading
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Final, TypeAlias, TypeVar
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import grpc
import prometheus_client
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import DecodeError, Message
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection
from prometheus_client import CollectorRegistry, Counter, Histogram

from goti.api.error_status import ErrorStatus
from goti.api.v1 import errors_pb2
from goti.settings import (
    SERVICE_NAMES,
    ServiceName,
    Settings,
    SettingsError,
    unbracketed,
    unknown_variables,
)

T = TypeVar("T")

log = logging.getLogger(__name__)

Bind: TypeAlias = Callable[[grpc.aio.Server], Sequence[str] | Awaitable[Sequence[str]]]
"""Adds a service's servicers to the server; returns the full names of the services added."""

Drain: TypeAlias = Callable[[], Awaitable[None]]
"""Ends a service's long-lived streams at shutdown, so their clients reconnect elsewhere."""

HEALTH_SERVICE: Final = health.SERVICE_NAME
REFLECTION_SERVICE: Final = reflection.SERVICE_NAME


# ---------------------------------------------------------------------------------------------
# Channel and server options: one place, so Goti's servers and clients agree.


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


# ---------------------------------------------------------------------------------------------
# Structured logs.

# Attributes every LogRecord has; anything else on a record came from ``extra=``.
_RECORD_ATTRIBUTES: Final = frozenset(logging.makeLogRecord({}).__dict__) | {
    "message",
    "asctime",
    "taskName",
}


def _extra_fields(record: logging.LogRecord) -> dict[str, object]:
    return {
        key: value
        for key, value in record.__dict__.items()
        if key not in _RECORD_ATTRIBUTES and not key.startswith("_")
    }


class JsonLogFormatter(logging.Formatter):
    """One JSON object a line: time (UTC), level, logger, message, then the ``extra`` fields."""

    def format(self, record: logging.LogRecord) -> str:
        moment = datetime.datetime.fromtimestamp(record.created, datetime.UTC)
        entry: dict[str, object] = {
            "time": moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in _extra_fields(record).items():
            entry.setdefault(key, value)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


class TextLogFormatter(logging.Formatter):
    """For people at a terminal: time, level, logger, message, then ``key=value`` extras."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        extras = _extra_fields(record)
        if not extras:
            return text
        first_line, newline, rest = text.partition("\n")
        pairs = " ".join(f"{key}={value}" for key, value in extras.items())
        return f"{first_line} [{pairs}]{newline}{rest}"


class _GotiLogHandler(logging.StreamHandler[IO[str]]):
    """Marks the handler Goti installed, so configuring again replaces it."""


def configure_logging(settings: Settings, stream: IO[str] | None = None) -> None:
    """Send every log record (Goti's, gRPC's, warnings) to ``stream`` (stderr), formatted as
    ``GOTI_LOG_FORMAT`` says, from ``GOTI_LOG_LEVEL`` up. Calling it again reconfigures."""
    stream = sys.stderr if stream is None else stream
    log_format = settings.log_format
    if log_format == "auto":
        log_format = "text" if stream.isatty() else "json"
    handler = _GotiLogHandler(stream)
    handler.setFormatter(JsonLogFormatter() if log_format == "json" else TextLogFormatter())
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _GotiLogHandler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(settings.log_level.upper())
    logging.captureWarnings(True)


# ---------------------------------------------------------------------------------------------
# Prometheus metrics for every call.

LATENCY_BUCKETS: Final = (
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    300.0,
)
"""Histogram buckets of call durations, from 0.25 ms (a referee call) to minutes (a watch
stream); the web port's metrics use them too."""

_RPC_TYPES: Final = {
    (False, False): "unary",
    (False, True): "server_stream",
    (True, False): "client_stream",
    (True, True): "bidi_stream",
}


def new_registry() -> CollectorRegistry:
    """A Prometheus registry with the usual process, platform and garbage-collector metrics."""
    registry = CollectorRegistry()
    prometheus_client.ProcessCollector(registry=registry)
    prometheus_client.PlatformCollector(registry=registry)
    prometheus_client.GCCollector(registry=registry)
    return registry


class RpcMetrics:
    """Per-call counters and latencies, named as in the common Go gRPC dashboards.

    ``grpc_server_started_total`` and ``grpc_server_handled_total`` (with ``grpc_code``) count
    calls by ``grpc_type``, ``grpc_service`` and ``grpc_method``;
    ``grpc_server_handling_seconds`` times them. A streaming call counts as handled, and is
    timed, when its stream ends.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        labels = ("grpc_type", "grpc_service", "grpc_method")
        self.started = Counter(
            "grpc_server_started_total", "Calls started.", labels, registry=registry
        )
        self.handled = Counter(
            "grpc_server_handled_total",
            "Calls finished, by status code.",
            (*labels, "grpc_code"),
            registry=registry,
        )
        self.handling_seconds = Histogram(
            "grpc_server_handling_seconds",
            "Time from the start of a call to its end (a stream's whole life).",
            labels,
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )


@dataclass(slots=True)
class _CallObserver:
    """Records one method's calls: started when created, finished once."""

    metrics: RpcMetrics
    labels: tuple[str, str, str]

    def start(self) -> float:
        self.metrics.started.labels(*self.labels).inc()
        return time.perf_counter()

    def finish(self, started_at: float, code: grpc.StatusCode) -> None:
        self.metrics.handled.labels(*self.labels, code.name).inc()
        self.metrics.handling_seconds.labels(*self.labels).observe(time.perf_counter() - started_at)


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


def _observe_call(
    behavior: Callable[..., Awaitable[Any]], observer: _CallObserver
) -> Callable[..., Awaitable[Any]]:
    """Wrap a coroutine handler: unary responses, or streams written with context.write()."""

    async def observed(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        started_at = observer.start()
        try:
            response = await behavior(request, context)
        except BaseException as error:
            observer.finish(started_at, _code_on_error(error, context))
            raise
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


_CallBehavior: TypeAlias = Callable[..., Awaitable[Any]]
_StreamBehavior: TypeAlias = Callable[..., AsyncGenerator[Any, None]]


def _rewrapped(
    handler: grpc.RpcMethodHandler[Any, Any],
    wrap_call: Callable[[_CallBehavior], _CallBehavior],
    wrap_stream: Callable[[_StreamBehavior], _StreamBehavior],
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


_Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"
_HandlerWrapper: TypeAlias = Callable[[str, _Handler], _Handler]


class _MethodWrappingInterceptor(grpc.aio.ServerInterceptor):
    """Wraps each method's handler once, by every wrapper in turn (the first one outermost);
    every later call of the method reuses the result.  One interceptor for all of them: each
    interceptor costs every call of the server a coroutine of its own."""

    def __init__(self, *wrappers: _HandlerWrapper) -> None:
        self._wrappers = wrappers
        # method -> (the handler it was given, the wrapped one).
        self._wrapped: dict[str, tuple[_Handler, _Handler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[_Handler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> _Handler | None:
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


def _service_of(method: str) -> str:
    """``goti.api.v1.RefereeService`` of ``/goti.api.v1.RefereeService/Apply``."""
    return method.lstrip("/").rpartition("/")[0]


class _CallMetrics:
    """Counts and times every call the server handles, streaming ones included."""

    def __init__(self, metrics: RpcMetrics) -> None:
        self._metrics = metrics

    def wrap(self, method: str, handler: _Handler) -> _Handler:
        kind = (handler.request_streaming, handler.response_streaming)
        labels = (_RPC_TYPES[kind], _service_of(method), method.rpartition("/")[2])
        observer = _CallObserver(self._metrics, labels)
        return _rewrapped(
            handler,
            lambda behavior: _observe_call(behavior, observer),
            lambda behavior: _observe_stream(behavior, observer),
        )


class _CallsInFlight:
    """Counts the service's calls under way, so that a stopping server waits for them (and
    only them) before it cuts off what is left.

    Health and reflection are not counted: a health watch lasts until the server is gone,
    and must not hold the stop for the whole grace period.
    """

    UNCOUNTED: Final = frozenset({HEALTH_SERVICE, REFLECTION_SERVICE})

    def __init__(self) -> None:
        self.in_flight = 0
        """Calls begun and not yet done."""
        self.arrivals = 0
        """Calls begun so far; changes while calls still come."""

    def wrap(self, method: str, handler: _Handler) -> _Handler:
        if _service_of(method) in self.UNCOUNTED:
            return handler
        return _rewrapped(handler, self._count_call, self._count_stream)

    def _enter(self) -> None:
        self.arrivals += 1
        self.in_flight += 1

    def _count_call(self, behavior: _CallBehavior) -> _CallBehavior:
        async def counted(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            self._enter()
            try:
                return await behavior(request, context)
            finally:
                self.in_flight -= 1

        return counted

    def _count_stream(self, behavior: _StreamBehavior) -> _StreamBehavior:
        async def counted(
            request: Any, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncGenerator[Any, None]:
            self._enter()
            try:
                async with contextlib.aclosing(behavior(request, context)) as stream:
                    async for message in stream:
                        yield message
            finally:
                self.in_flight -= 1

        return counted


class _MetricsHTTPServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _MetricsHTTPServer6(_MetricsHTTPServer):
    address_family = socket.AF_INET6


class _QuietRequestHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Scrapes every few seconds would flood the log; say nothing."""


def _start_metrics_endpoint(
    host: str, port: int, registry: CollectorRegistry
) -> tuple[WSGIServer, int]:
    """Serve ``registry`` at ``/metrics`` from a daemon thread; return the server and its port."""
    bare_host = unbracketed(host)
    server_class = _MetricsHTTPServer6 if ":" in bare_host else _MetricsHTTPServer
    http_server: WSGIServer = make_server(
        bare_host,
        port,
        prometheus_client.make_wsgi_app(registry),
        server_class,
        handler_class=_QuietRequestHandler,
    )
    # A short poll interval so that stopping does not wait half a second for the thread.
    thread = threading.Thread(
        target=http_server.serve_forever,
        kwargs={"poll_interval": 0.05},
        name="metrics-http",
        daemon=True,
    )
    thread.start()
    return http_server, http_server.server_port


# ---------------------------------------------------------------------------------------------
# Servers.

SHUTDOWN_PAUSE_SECONDS: Final = 0.5
"""How long a server stopped by a signal keeps serving new calls once health says NOT_SERVING,
so that load balancers and health-checking clients move to other replicas first."""

_LONGER_THAN_ANY_GRACE_SECONDS: Final = 7 * 24 * 3600.0
"""The grace period a stop hands gRPC's own: the stop ends the grace itself, on time."""

_QUIET_SECONDS: Final = 0.05
"""At shutdown, how long no call may come before the server takes the stream of calls to
have ended."""


@dataclass(eq=False)
class RunningServer:
    """A started Goti gRPC server: what tests and the harness need to reach and stop it."""

    name: str
    """The Goti service it runs (``referee``), for logs."""
    server: grpc.aio.Server
    port: int
    """The port it listens on (the one chosen when asked for port 0)."""
    host: str
    """The address it listens on."""
    health: health_aio.HealthServicer
    services: tuple[str, ...]
    """The full names of the services ``bind`` added, each reported SERVING by health."""
    registry: CollectorRegistry
    """The Prometheus registry its metrics are in; a service may register its own there."""
    metrics_port: int | None
    """The port of its /metrics endpoint, or None when it has none."""
    _calls: _CallsInFlight = field(repr=False)
    _metrics_http: WSGIServer | None = field(default=None, repr=False)
    _drain: Drain | None = field(default=None, repr=False)
    _stopping: asyncio.Task[None] | None = field(default=None, repr=False)
    # Event-loop times at which the stop's pause ends, and its grace period; a second stop
    # may bring them forward, and sets _hurry to say so.
    _pause_until: float = field(default=0.0, repr=False)
    _deadline: float = field(default=0.0, repr=False)
    _hurry: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    @property
    def target(self) -> str:
        """A gRPC target on this machine that reaches the server."""
        host = unbracketed(self.host)
        if host in ("::", "0.0.0.0"):
            return f"localhost:{self.port}"
        return f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"

    async def stop(self, grace: float | None, *, pause: float = 0.0) -> None:
        """Stop gracefully: health NOT_SERVING for every service, then for ``pause`` seconds
        new calls are still served, so that load balancers and health-checking clients move
        away first. After that gRPC's graceful stop begins: every connection gets a GOAWAY, so
        that clients make their next calls on a new connection (to another replica), and no
        new connection is taken. The service drains, and the server stops once the calls in
        flight are done, or ``grace`` seconds after the stop began (None: now) by cancelling
        them. The pause ends within the grace period.

        Calling it again while it runs brings the end of the pause and of the grace period
        forward to what the new call allows, never later.
        """
        now = asyncio.get_running_loop().time()
        deadline = now + (grace or 0.0)
        pause_until = min(now + pause, deadline)
        if self._stopping is None:
            self._pause_until, self._deadline = pause_until, deadline
            self._stopping = asyncio.ensure_future(self._stop(grace, pause))
        elif pause_until < self._pause_until or deadline < self._deadline:
            self._pause_until = min(self._pause_until, pause_until)
            self._deadline = min(self._deadline, deadline)
            self._hurry.set()
        await asyncio.shield(self._stopping)

    async def _stop(self, grace: float | None, pause: float) -> None:
        log.info(
            "%s stopping: health is NOT_SERVING, new calls are served for %g s more, then "
            "clients are sent away; calls in flight have %g s to finish",
            self.name,
            min(pause, grace or 0),
            grace or 0,
            extra={"service": self.name, "grace_seconds": grace, "pause_seconds": pause},
        )
        await self.health.enter_graceful_shutdown()
        loop = asyncio.get_running_loop()
        while (pause_left := self._pause_until - loop.time()) > 0:
            await self._sleep_unless_hurried(pause_left)
        # gRPC's own grace period never ends first: the cut below is this stop's, and two cuts
        # at once may reach a server gRPC has already freed.
        sending_away = asyncio.ensure_future(self.server.stop(_LONGER_THAN_ANY_GRACE_SECONDS))
        try:
            # gRPC's stop sends the GOAWAYs before it first waits: one turn of the loop, and
            # the streams drained below reconnect on new connections, not this server's.
            await asyncio.sleep(0)
            if self._drain is not None:
                try:
                    await self._drain()
                except Exception:
                    log.exception("%s: draining streams failed", self.name)
            await self._until_calls_end()
        finally:
            # Cut off what is left: calls that outlasted the grace period, and the health
            # watches and reflection streams, which wait for no grace.
            await self.server.stop(None)
            await sending_away
        if self._metrics_http is not None:
            # shutdown() waits for the serving thread's next poll; keep the loop free.
            await asyncio.to_thread(self._close_metrics_endpoint, self._metrics_http)
        log.info("%s stopped", self.name, extra={"service": self.name})

    async def _sleep_unless_hurried(self, seconds: float) -> None:
        self._hurry.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._hurry.wait(), seconds)

    async def _until_calls_end(self) -> None:
        """Wait, until the grace period ends, for no call to be in flight and none to have
        begun for a moment: calls gRPC took in before its stop began reach the service in that
        moment, and are served rather than cancelled."""
        loop = asyncio.get_running_loop()
        arrivals = self._calls.arrivals
        while (grace_left := self._deadline - loop.time()) > 0:
            await self._sleep_unless_hurried(min(_QUIET_SECONDS, grace_left))
            if self._calls.in_flight == 0 and self._calls.arrivals == arrivals:
                return
            arrivals = self._calls.arrivals

    @staticmethod
    def _close_metrics_endpoint(http_server: WSGIServer) -> None:
        http_server.shutdown()
        http_server.server_close()


def _address(host: str, port: int) -> str:
    host = unbracketed(host)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def start_server(
    name: str,
    bind: Bind,
    settings: Settings,
    *,
    port: int,
    metrics_port: int | None = None,
    registry: CollectorRegistry | None = None,
    drain: Drain | None = None,
) -> RunningServer:
    """Build, bind and start a Goti gRPC server on ``settings.host`` and ``port`` (0: any free
    port), with health, reflection and per-call metrics.

    ``metrics_port`` (0: any free port) opens a Prometheus /metrics endpoint for ``registry``
    (a new one with the process metrics when None); None opens none. Every service ``bind``
    returns is SERVING when this returns. ``drain`` runs at shutdown once health says
    NOT_SERVING, before calls in flight get their grace period.
    """
    registry = new_registry() if registry is None else registry
    calls = _CallsInFlight()
    server = grpc.aio.server(
        interceptors=[
            _MethodWrappingInterceptor(_CallMetrics(RpcMetrics(registry)).wrap, calls.wrap)
        ],
        options=server_options(settings),
    )
    bound = bind(server)
    services = tuple(await bound if inspect.isawaitable(bound) else bound)

    health_servicer = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection((*services, HEALTH_SERVICE, REFLECTION_SERVICE), server)
    # Until every service is up, the server as a whole is not ready.
    await health_servicer.set("", health_pb2.HealthCheckResponse.NOT_SERVING)

    address = _address(settings.host, port)
    try:
        bound_port = server.add_insecure_port(address)
    except RuntimeError as error:
        raise OSError(f"{name}: cannot listen on {address}: {error}") from error
    await server.start()

    metrics_http: WSGIServer | None = None
    bound_metrics_port: int | None = None
    if metrics_port is not None:
        try:
            metrics_http, bound_metrics_port = _start_metrics_endpoint(
                settings.host, metrics_port, registry
            )
        except OSError as error:
            await server.stop(None)
            raise OSError(
                f"{name}: cannot serve metrics on {_address(settings.host, metrics_port)}: {error}"
            ) from error

    for service in services:
        await health_servicer.set(service, health_pb2.HealthCheckResponse.SERVING)
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    return RunningServer(
        name=name,
        server=server,
        port=bound_port,
        host=settings.host,
        health=health_servicer,
        services=services,
        registry=registry,
        metrics_port=bound_metrics_port,
        _calls=calls,
        _metrics_http=metrics_http,
        _drain=drain,
    )


def _goti_service(name: str) -> ServiceName | None:
    for known in SERVICE_NAMES:
        if name == known:
            return known
    return None


def _event_loop_name() -> str:
    loop = asyncio.get_running_loop()
    return f"{type(loop).__module__}.{type(loop).__qualname__}"


async def serve(
    name: str,
    bind: Bind,
    settings: Settings,
    *,
    port: int | None = None,
    metrics_port: int | None = None,
    registry: CollectorRegistry | None = None,
    drain: Drain | None = None,
    shutdown_pause: float = SHUTDOWN_PAUSE_SECONDS,
) -> None:
    """Run a service until SIGTERM or SIGINT, then stop it gracefully and return.

    For a Goti service (``tables``, ``referee``, ``ai``) ``port`` and ``metrics_port`` default
    to its own in ``settings``, where a metrics port of 0 means no endpoint. Any other name
    needs a ``port``, and has a metrics endpoint only when given a ``metrics_port``; for both,
    0 picks a free port (logged in the "serving" record). The stop takes at most
    ``settings.grace_seconds``: health goes NOT_SERVING, new calls are still served for
    ``shutdown_pause`` seconds, then clients are sent to other replicas (see
    :meth:`RunningServer.stop`). A second signal cancels the calls still in flight at once.
    """
    service = _goti_service(name)
    if service is not None:
        port = settings.port(service) if port is None else port
        if metrics_port is None:
            metrics_port = settings.metrics_port(service) or None
    elif port is None:
        raise ValueError(
            f"{name!r} is not a Goti service ({', '.join(SERVICE_NAMES)}): give a port"
        )

    loop = asyncio.get_running_loop()
    stop_requested = asyncio.Event()
    running: RunningServer | None = None
    freezer: SurvivorFreezer | None = None
    hurry: set[asyncio.Task[None]] = set()

    def on_signal(signum: signal.Signals) -> None:
        if not stop_requested.is_set():
            log.info("%s: %s received", name, signum.name, extra={"signal": signum.name})
            stop_requested.set()
        elif running is not None:
            log.warning("%s: %s again, cancelling calls in flight", name, signum.name)
            task = asyncio.ensure_future(running.stop(None))
            hurry.add(task)
            task.add_done_callback(hurry.discard)

    handled = (signal.SIGTERM, signal.SIGINT)
    for signum in handled:
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        running = await start_server(
            name,
            bind,
            settings,
            port=port,
            metrics_port=metrics_port,
            registry=registry,
            drain=drain,
        )
        freezer = SurvivorFreezer(loop)
        frozen = freezer.start()
        log.info(
            "%s serving on %s",
            name,
            _address(settings.host, running.port),
            extra={
                "service": name,
                "port": running.port,
                "metrics_port": running.metrics_port,
                "services": list(running.services),
                "event_loop": _event_loop_name(),
                "gc_frozen_objects": frozen,
                "pid": os.getpid(),
            },
        )
        await stop_requested.wait()
        await running.stop(settings.grace_seconds, pause=shutdown_pause)
    finally:
        if freezer is not None:
            freezer.stop()
        for signum in handled:
            loop.remove_signal_handler(signum)


SURVIVORS_KEPT_FROZEN_SECONDS: Final = 600.0
"""How long the survivors of full collections stay out of the collector's reach before they
are all handed back to it, so that reference cycles among them that have since become
garbage are freed."""


class SurvivorFreezer:
    """Keeps a server's full garbage collections short.

    A full collection walks every object the collector tracks, and a tables replica holds a
    great many of them for as long as their watch streams last: at a thousand tables a walk
    paused the service for 150 ms.  What a full collection leaves alive is long-lived, so
    right after one (on the event loop, not inside the collector) it is frozen, and the next
    full collection walks only what came since.  Frozen objects are never collected, so every
    ``thaw_seconds`` they are all handed back (one long walk then, not one every few seconds).

    Python's own thresholds stay: every gRPC call leaves a few objects in a reference cycle
    (made inside grpc's handler lookup), and frequent small young collections keep each pause
    short, where a young threshold of 5,000 rather than 700 paused the tables service 15 ms at
    a time.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        thaw_seconds: float = SURVIVORS_KEPT_FROZEN_SECONDS,
    ) -> None:
        self._loop = loop
        self._thaw_seconds = thaw_seconds
        self._thaw: asyncio.TimerHandle | None = None
        self.thaws = 0

    def start(self) -> int:
        """Freeze what start-up built and follow full collections from now on; returns how
        many objects are frozen."""
        gc.collect()
        gc.freeze()
        gc.callbacks.append(self._after_collection)
        self._thaw = self._loop.call_later(self._thaw_seconds, self._hand_back)
        return gc.get_freeze_count()

    def stop(self) -> None:
        """Stop following collections (what is frozen stays frozen)."""
        if self._after_collection in gc.callbacks:
            gc.callbacks.remove(self._after_collection)
        if self._thaw is not None:
            self._thaw.cancel()
            self._thaw = None

    def _after_collection(self, phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2 and not self._loop.is_closed():
            # Collections may run in any thread; the freeze waits for the loop's own.
            self._loop.call_soon_threadsafe(gc.freeze)

    def _hand_back(self) -> None:
        gc.unfreeze()
        self.thaws += 1
        self._thaw = self._loop.call_later(self._thaw_seconds, self._hand_back)


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop  # noqa: PLC0415 -- optional: not built for every platform
    except ImportError:
        return None
    return uvloop.new_event_loop


def run(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``main()`` to completion on a fresh event loop: uvloop when it is installed (it
    saves 10-20% of a gRPC service's CPU), else asyncio's own."""
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        return runner.run(main())


def run_service(
    name: str,
    bind: Bind,
    settings: Settings,
    *,
    port: int | None = None,
    drain: Drain | None = None,
    shutdown_pause: float = SHUTDOWN_PAUSE_SECONDS,
) -> None:
    """Configure logging, then :func:`serve` until SIGTERM or SIGINT (blocks).

    ``goti serve`` and the services' ``__main__`` call this; ``port`` is for other servers
    (see :func:`serve`).
    """
    configure_logging(settings)
    for note in unknown_variables():
        log.warning("ignoring unknown setting %s", note, extra={"variable": note})
    run(lambda: serve(name, bind, settings, port=port, drain=drain, shutdown_pause=shutdown_pause))


def main(name: ServiceName, bind: Bind, *, drain: Drain | None = None) -> None:
    """A service's ``__main__``: settings from the environment, then :func:`run_service`.

    Exits with status 2 and one line per problem when a ``GOTI_*`` variable is unusable.
    """
    try:
        settings = Settings.from_env()
    except SettingsError as error:
        print(f"goti {name}: bad configuration:\n{error}", file=sys.stderr)
        raise SystemExit(2) from None
    run_service(name, bind, settings, drain=drain)


# ---------------------------------------------------------------------------------------------
# Registering a servicer so that garbage is refused as a bad request.


@dataclass(frozen=True, slots=True)
class _UndecodableRequest:
    """Request bytes that do not parse as the method's request message."""

    message_type: str
    problem: str


def _lenient_decoder(message_class: type[Message]) -> Callable[[bytes], object]:
    def decode(data: bytes) -> object:
        try:
            return message_class.FromString(data)
        except DecodeError as error:
            return _UndecodableRequest(message_class.DESCRIPTOR.full_name, str(error))

    return decode


async def _refuse_undecodable(context: Any, request: _UndecodableRequest) -> None:
    status = ErrorStatus.of(
        errors_pb2.ERROR_REASON_INVALID_REQUEST,
        f"the request is not a {request.message_type}: {request.problem}",
        # The whole request is at fault: the empty path.
        field="",
    )
    await context.abort(status.code, status.message, status.trailing_metadata())


def _unary_handler(method: Callable[[Any, Any], Awaitable[Message]]) -> Callable[..., Any]:
    async def handle(request: object, context: Any) -> Message:
        if isinstance(request, _UndecodableRequest):
            await _refuse_undecodable(context, request)
        return await method(request, context)

    return handle


def _streaming_handler(method: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    async def handle(request: object, context: Any) -> AsyncGenerator[Message, None]:
        if isinstance(request, _UndecodableRequest):
            await _refuse_undecodable(context, request)
        stream = method(request, context)
        async with contextlib.aclosing(stream):
            async for message in stream:
                yield message

    return handle


def add_servicer(server: grpc.aio.Server, service: ServiceDescriptor, servicer: object) -> str:
    """Add ``servicer``'s methods for ``service`` to ``server``; returns the service's name.

    Requests are decoded here rather than by gRPC, so that bytes that are no request message
    at all are refused as INVALID_ARGUMENT with reason INVALID_REQUEST, instead of the
    UNKNOWN status gRPC gives a failing deserializer.
    """
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for method in service.methods:
        request_class = message_factory.GetMessageClass(method.input_type)
        response_class = message_factory.GetMessageClass(method.output_type)
        behavior = getattr(servicer, method.name)
        if method.server_streaming:
            handlers[method.name] = grpc.unary_stream_rpc_method_handler(
                _streaming_handler(behavior),
                request_deserializer=_lenient_decoder(request_class),
                response_serializer=response_class.SerializeToString,
            )
        else:
            handlers[method.name] = grpc.unary_unary_rpc_method_handler(
                _unary_handler(behavior),
                request_deserializer=_lenient_decoder(request_class),
                response_serializer=response_class.SerializeToString,
            )
    name: str = service.full_name
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
    server.add_registered_method_handlers(name, handlers)
    return name
