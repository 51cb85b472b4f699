"""Building and starting a Goti gRPC server: health, reflection, per-call metrics, and the
/metrics endpoint."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Final, TypeAlias
from wsgiref.simple_server import WSGIServer

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection
from prometheus_client import CollectorRegistry

from goti.serving.interceptors import CallMetrics, MethodWrappingInterceptor
from goti.serving.metrics import RpcMetrics, new_registry, start_metrics_endpoint
from goti.serving.options import server_options
from goti.serving.stopping import CallsInFlight, Drain, RunningServer
from goti.setting_values import unbracketed
from goti.settings import Settings

Bind: TypeAlias = Callable[[grpc.aio.Server], Sequence[str] | Awaitable[Sequence[str]]]
"""Adds a service's servicers to the server; returns the full names of the services added."""

HEALTH_SERVICE: Final = health.SERVICE_NAME
REFLECTION_SERVICE: Final = reflection.SERVICE_NAME


def listening_address(host: str, port: int) -> str:
    """``host:port``, with an IPv6 host in brackets."""
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
    # A health watch lasts until the server is gone, and must not hold the stop for the whole
    # grace period.
    calls = CallsInFlight(uncounted=frozenset({HEALTH_SERVICE, REFLECTION_SERVICE}))
    server = grpc.aio.server(
        interceptors=[
            MethodWrappingInterceptor(CallMetrics(RpcMetrics(registry)).wrap, calls.wrap)
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

    address = listening_address(settings.host, port)
    try:
        bound_port = server.add_insecure_port(address)
    except RuntimeError as error:
        raise OSError(f"{name}: cannot listen on {address}: {error}") from error
    await server.start()

    metrics_http: WSGIServer | None = None
    bound_metrics_port: int | None = None
    if metrics_port is not None:
        try:
            metrics_http, bound_metrics_port = start_metrics_endpoint(
                settings.host, metrics_port, registry
            )
        except OSError as error:
            await server.stop(None)
            metrics_address = listening_address(settings.host, metrics_port)
            raise OSError(f"{name}: cannot serve metrics on {metrics_address}: {error}") from error

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
