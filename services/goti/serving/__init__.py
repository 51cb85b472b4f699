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

One module a job, each importing only those before it (``make lint`` holds them to it):
:mod:`~goti.serving.options` (channel and server options), :mod:`~goti.serving.logs`,
:mod:`~goti.serving.memory` (garbage-collector freezing) and
:mod:`~goti.serving.registration` (:func:`add_servicer`), which stand alone;
:mod:`~goti.serving.metrics` (the registry and the /metrics endpoint),
:mod:`~goti.serving.interceptors` (the one interceptor, and per-call metrics),
:mod:`~goti.serving.stopping` (calls in flight, and :class:`RunningServer`'s graceful stop),
:mod:`~goti.serving.server` (:func:`start_server`) and :mod:`~goti.serving.process`
(:func:`serve` until a signal, :func:`run_service`, :func:`main`). The names below are the
harness's API; the services, the tests and the benchmarks import them from here.
"""

from goti.serving.interceptors import CallObserver, carried_call_observer
from goti.serving.logs import JsonLogFormatter, TextLogFormatter, configure_logging
from goti.serving.memory import SURVIVORS_KEPT_FROZEN_SECONDS, SurvivorFreezer
from goti.serving.metrics import LATENCY_BUCKETS, RpcMetrics, new_registry
from goti.serving.options import SERVICE_CONFIG, channel_options, open_channel, server_options
from goti.serving.process import main, run, run_service, serve
from goti.serving.registration import add_servicer
from goti.serving.server import HEALTH_SERVICE, REFLECTION_SERVICE, Bind, start_server
from goti.serving.stopping import SHUTDOWN_PAUSE_SECONDS, Drain, RunningServer

__all__ = [
    "HEALTH_SERVICE",
    "LATENCY_BUCKETS",
    "REFLECTION_SERVICE",
    "SERVICE_CONFIG",
    "SHUTDOWN_PAUSE_SECONDS",
    "SURVIVORS_KEPT_FROZEN_SECONDS",
    "Bind",
    "CallObserver",
    "Drain",
    "JsonLogFormatter",
    "RpcMetrics",
    "RunningServer",
    "SurvivorFreezer",
    "TextLogFormatter",
    "add_servicer",
    "carried_call_observer",
    "channel_options",
    "configure_logging",
    "main",
    "new_registry",
    "open_channel",
    "run",
    "run_service",
    "serve",
    "server_options",
    "start_server",
]
