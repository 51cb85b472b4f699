"""Prometheus metrics of the web port's calls, beside the gRPC server's in the same registry:
how many started and ended, by protocol (Connect, gRPC-Web, gRPC), service, method and status
code, and how long they took (a watch stream's whole life)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Histogram

# From a quarter of a millisecond (a read) to minutes (a watch stream), as the gRPC server's.
_BUCKETS: Final = (
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


def protocol_of(content_type: str) -> str:
    """The protocol a request's content type names: ``grpc-web``, ``grpc`` or ``connect``."""
    if content_type.startswith("application/grpc-web"):
        return "grpc-web"
    if content_type.startswith("application/grpc"):
        return "grpc"
    return "connect"


@dataclass(slots=True)
class WebCall:
    """One call under way."""

    metrics: WebCallMetrics
    labels: tuple[str, str, str]
    started_at: float

    def finish(self, code: str) -> None:
        """The call ended with ``code`` (``OK``, or a status code's name)."""
        self.metrics.handled.labels(*self.labels, code).inc()
        self.metrics.seconds.labels(*self.labels).observe(time.perf_counter() - self.started_at)


class WebCallMetrics:
    """Counts and times the web port's calls."""

    def __init__(self, registry: CollectorRegistry) -> None:
        labels = ("protocol", "rpc_service", "rpc_method")
        self.started = Counter(
            "goti_web_calls_started_total", "Web port calls started.", labels, registry=registry
        )
        self.handled = Counter(
            "goti_web_calls_handled_total",
            "Web port calls ended, by status code.",
            (*labels, "code"),
            registry=registry,
        )
        self.seconds = Histogram(
            "goti_web_call_seconds",
            "Time from the start of a web port call to its end (a stream's whole life).",
            labels,
            buckets=_BUCKETS,
            registry=registry,
        )

    def start(self, content_type: str, service: str, method: str) -> WebCall:
        """Count a call starting now."""
        labels = (protocol_of(content_type), service, method)
        self.started.labels(*labels).inc()
        return WebCall(self, labels, time.perf_counter())
