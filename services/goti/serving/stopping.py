"""Stopping a server gracefully: the calls in flight it waits for, and the stop itself."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias
from wsgiref.simple_server import WSGIServer

import grpc
from grpc_health.v1.health import aio as health_aio
from prometheus_client import CollectorRegistry

from goti.serving.interceptors import (
    CallBehavior,
    Handler,
    StreamBehavior,
    rewrapped,
    service_of,
)
from goti.serving.metrics import close_metrics_endpoint
from goti.setting_values import unbracketed

# One logger for the whole harness, whichever module writes: operators filter on one name.
log = logging.getLogger("goti.serving")

Drain: TypeAlias = Callable[[], Awaitable[None]]
"""Ends a service's long-lived streams at shutdown, so their clients reconnect elsewhere."""

SHUTDOWN_PAUSE_SECONDS: Final = 0.5
"""How long a server stopped by a signal keeps serving new calls once health says NOT_SERVING,
so that load balancers and health-checking clients move to other replicas first."""

_LONGER_THAN_ANY_GRACE_SECONDS: Final = 7 * 24 * 3600.0
"""The grace period a stop hands gRPC's own: the stop ends the grace itself, on time."""

_QUIET_SECONDS: Final = 0.05
"""At shutdown, how long no call may come before the server takes the stream of calls to
have ended."""


class CallsInFlight:
    """Counts the service's calls under way, so that a stopping server waits for them (and
    only them) before it cuts off what is left.

    Calls of the ``uncounted`` services are not counted.
    """

    def __init__(self, *, uncounted: frozenset[str]) -> None:
        self._uncounted = uncounted
        self.in_flight = 0
        """Calls begun and not yet done."""
        self.arrivals = 0
        """Calls begun so far; changes while calls still come."""

    def wrap(self, method: str, handler: Handler) -> Handler:
        if service_of(method) in self._uncounted:
            return handler
        return rewrapped(handler, self._count_call, self._count_stream)

    def _enter(self) -> None:
        self.arrivals += 1
        self.in_flight += 1

    def _count_call(self, behavior: CallBehavior) -> CallBehavior:
        async def counted(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            self._enter()
            try:
                return await behavior(request, context)
            finally:
                self.in_flight -= 1

        return counted

    def _count_stream(self, behavior: StreamBehavior) -> StreamBehavior:
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
    _calls: CallsInFlight = field(repr=False)
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
            await asyncio.to_thread(close_metrics_endpoint, self._metrics_http)
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
