"""A service's process: the event loop, logging and settings, and serving until a signal."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from prometheus_client import CollectorRegistry

from goti.serving.logs import configure_logging
from goti.serving.memory import SurvivorFreezer
from goti.serving.server import Bind, listening_address, start_server
from goti.serving.stopping import SHUTDOWN_PAUSE_SECONDS, Drain, RunningServer
from goti.settings import (
    SERVICE_NAMES,
    ServiceName,
    Settings,
    SettingsError,
    unknown_variables,
)

T = TypeVar("T")

# One logger for the whole harness, whichever module writes: operators filter on one name.
log = logging.getLogger("goti.serving")


def _goti_service(name: str) -> ServiceName | None:
    for known in SERVICE_NAMES:
        if name == known:
            return known
    return None


def _ports(
    name: str, settings: Settings, port: int | None, metrics_port: int | None
) -> tuple[int, int | None]:
    """The gRPC port and the metrics port (None: no endpoint) that :func:`serve` uses."""
    service = _goti_service(name)
    if service is not None:
        port = settings.port(service) if port is None else port
        if metrics_port is None:
            metrics_port = settings.metrics_port(service) or None
    elif port is None:
        raise ValueError(
            f"{name!r} is not a Goti service ({', '.join(SERVICE_NAMES)}): give a port"
        )
    return port, metrics_port


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
    port, metrics_port = _ports(name, settings, port, metrics_port)
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
            listening_address(settings.host, running.port),
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
