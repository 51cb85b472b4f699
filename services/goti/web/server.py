"""The web port of a tables process: uvicorn serving :class:`~goti.web.app.WebApplication` as a
task of the event loop the gRPC server runs in, so both reach the same servicers, the same
Redis pool and the same watch fan-out.

Signals stay with the tables process: it tells the web server when to stop accepting calls
(when its gRPC server drains) and waits for it to finish, within the grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import socket
from collections.abc import Iterator
from typing import Final

import uvicorn
from prometheus_client import CollectorRegistry

from goti.settings import Settings
from goti.web.adapter import goti_endpoints
from goti.web.app import PageFiles, WebApplication, packaged_page
from goti.web.metrics import WebCallMetrics

log = logging.getLogger(__name__)

_START_POLL_SECONDS: Final = 0.01
KEEP_ALIVE_SECONDS: Final = 20
"""How long an idle browser connection stays open: longer than the pause between a player's
moves, so most commands reuse the connection."""


class _SignalsBelongToTheProcess(uvicorn.Server):
    """A uvicorn server that leaves SIGINT and SIGTERM to the tables process, which stops it."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _listen(host: str, port: int) -> socket.socket:
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if bare == "::":
        # Every interface, IPv4 included, as the gRPC server listens on [::].
        return socket.create_server(
            (bare, port), family=socket.AF_INET6, dualstack_ipv6=socket.has_dualstack_ipv6()
        )
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    return socket.create_server((bare, port), family=family)


def _local_host(host: str) -> str:
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if bare in ("::", "0.0.0.0", ""):
        return "localhost"
    return f"[{bare}]" if ":" in bare else bare


class WebServer:
    """A started web port."""

    def __init__(
        self, server: uvicorn.Server, task: asyncio.Task[None], host: str, port: int
    ) -> None:
        self._server = server
        self._task = task
        self.host = host
        self.port = port

    @property
    def url(self) -> str:
        """The page's address on this machine."""
        return f"http://{_local_host(self.host)}:{self.port}/"

    @classmethod
    async def start(
        cls, application: WebApplication, *, host: str, port: int, grace_seconds: float
    ) -> WebServer:
        """Listen on ``host`` and ``port`` (0: any free port) and serve ``application`` from
        the running event loop; returns once connections are accepted."""
        try:
            listener = _listen(host, port)
        except OSError as error:
            raise OSError(f"web page: cannot listen on {host}:{port}: {error}") from error
        config = uvicorn.Config(
            application,
            lifespan="off",
            ws="none",
            log_config=None,
            access_log=False,
            server_header=False,
            # GOTI_TRUSTED_PROXIES alone decides whose X-Forwarded-For is believed, for gRPC
            # and the web port alike; uvicorn would otherwise believe any local peer's.
            proxy_headers=False,
            timeout_keep_alive=KEEP_ALIVE_SECONDS,
            timeout_graceful_shutdown=max(1, math.ceil(grace_seconds)),
        )
        server = _SignalsBelongToTheProcess(config)
        task = asyncio.create_task(server.serve(sockets=[listener]), name="web-server")
        while not server.started and not task.done():
            await asyncio.sleep(_START_POLL_SECONDS)
        if task.done():
            listener.close()
            task.result()
            raise OSError("web page: the server stopped as it started")
        return cls(server, task, host, listener.getsockname()[1])

    def drop_connections(self) -> int:
        """Close every open connection at once, as a failing network would (pages then
        reconnect and resume); returns how many there were."""
        connections = list(self._server.server_state.connections)
        for connection in connections:
            connection.transport.close()
        return len(connections)

    def stop_accepting(self) -> None:
        """Begin stopping: no new connections; calls under way may finish (the grace
        period)."""
        self._server.should_exit = True

    async def stop(self) -> None:
        """Stop, letting calls under way finish within the grace period, then cancelling the
        rest."""
        self.stop_accepting()
        await asyncio.shield(self._task)


def web_application(
    tables_servicer: object,
    players_servicer: object,
    matchmaking_servicer: object,
    settings: Settings,
    registry: CollectorRegistry | None = None,
) -> WebApplication:
    """The web port's application over the tables process's servicer objects; its calls are
    counted in ``registry`` when given."""
    metrics = WebCallMetrics(registry) if registry is not None else None
    return WebApplication(
        goti_endpoints(tables_servicer, players_servicer, matchmaking_servicer, metrics),
        PageFiles(packaged_page()),
        read_max_bytes=settings.max_message_bytes,
        allowed_origins=settings.web_allowed_origins,
    )


async def start_web_server(
    tables_servicer: object,
    players_servicer: object,
    matchmaking_servicer: object,
    settings: Settings,
    *,
    port: int,
    registry: CollectorRegistry | None = None,
) -> WebServer:
    """Serve the page and the API on ``port`` of ``settings.host``; logs where. Calls are
    counted in ``registry`` (the gRPC server's) when given."""
    server = await WebServer.start(
        web_application(
            tables_servicer, players_servicer, matchmaking_servicer, settings, registry
        ),
        host=settings.host,
        port=port,
        grace_seconds=settings.grace_seconds,
    )
    log.info(
        "web page and Connect API on %s",
        server.url,
        extra={"service": "tables", "web_port": server.port},
    )
    return server
