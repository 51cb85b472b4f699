"""Prometheus metrics: the registry, the per-call metrics, and the /metrics endpoint."""

from __future__ import annotations

import socket
import socketserver
import threading
from typing import Any, Final
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Histogram

from goti.setting_values import unbracketed

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
    timed, when its stream ends; each call a bidirectional stream carries (the referee's
    streamed Applies) may count too, as a call of its own method and ``grpc_type``
    ``bidi_stream`` (:func:`~goti.serving.interceptors.carried_call_observer`).
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


class _MetricsHTTPServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _MetricsHTTPServer6(_MetricsHTTPServer):
    address_family = socket.AF_INET6


class _QuietRequestHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Scrapes every few seconds would flood the log; say nothing."""


def start_metrics_endpoint(
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


def close_metrics_endpoint(http_server: WSGIServer) -> None:
    """Stop serving /metrics; waits for the serving thread's next poll."""
    http_server.shutdown()
    http_server.server_close()
