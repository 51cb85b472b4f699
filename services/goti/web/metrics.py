"""Prometheus metrics of the web port's calls, beside the gRPC server's in the same registry:
how many started and ended, by protocol (Connect, gRPC-Web, gRPC), service, method and status
code, and how long they took (a watch stream's whole life)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram

from goti.serving import LATENCY_BUCKETS


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
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )

    def start(self, content_type: str, service: str, method: str) -> WebCall:
        """Count a call starting now."""
        labels = (protocol_of(content_type), service, method)
        self.started.labels(*labels).inc()
        return WebCall(self, labels, time.perf_counter())
