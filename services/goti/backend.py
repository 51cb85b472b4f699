"""The whole backend on one machine: what ``goti serve`` runs.

Redis (the one ``GOTI_REDIS_URL`` names, else an embedded one keeping its data in
``GOTI_DATA_DIR``), then the referee, the AI and the tables service (with the web page), each
its own process.  It waits until each answers its health check, prints where clients connect
(the page's address among them), and on Ctrl-C, SIGTERM or a closed terminal (SIGHUP) stops
them in order — tables first, so no move is accepted that cannot be finished — then Redis,
which the services need until they have drained.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TextIO

from goti.healthcheck import wait_until_serving
from goti.redis_server import RedisServer, RedisServerError
from goti.settings import Settings

START_TIMEOUT_SECONDS = 60.0
"""How long each service gets to answer its health check."""
STOP_MARGIN_SECONDS = 5.0
"""Beyond the grace period, how long a service gets to exit before it is killed."""
POLL_SECONDS = 0.2


class BackendError(RuntimeError):
    """The backend could not start: the message says what failed and what to do."""


@dataclass(slots=True)
class ServiceProcess:
    """One running service."""

    name: str
    process: subprocess.Popen[bytes]
    target: str


def _local_target(port: int) -> str:
    return f"localhost:{port}"


WEB_PORT = 8080
"""The web page's port when GOTI_WEB_PORT is unset: on one machine the page is part of Goti
(a lone tables service serves it only when told a port)."""


def backend_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """``goti serve``'s settings: the environment's (``os.environ`` unless given), and where
    it leaves them unset, the web page on :data:`WEB_PORT` and join links that open the page.

    Raises :class:`~goti.settings.SettingsError` as :meth:`Settings.from_env` does.
    """
    unset = {"GOTI_WEB_PORT": str(WEB_PORT)}
    settings = Settings.from_env(environ, unset=unset)
    page = page_address(settings.web_port)
    if page is None:
        return settings
    # On one machine the join links open the page it serves, unless the operator named
    # another place (a public address, or the mobile app's own links).
    return Settings.from_env(environ, unset={**unset, "GOTI_JOIN_BASE_URL": f"{page}join/"})


def page_address(port: int) -> str | None:
    """Where a browser on this machine opens the web page; None when it is off."""
    return f"http://localhost:{port}/" if port else None


def child_environment(
    settings: Settings, redis_url: str, base: Mapping[str, str]
) -> dict[str, str]:
    """The environment of the services: ``base`` (the caller's, handed on), with this
    backend's settings for the parts it puts together."""
    environment = dict(base)
    environment.update(
        {
            "GOTI_REDIS_URL": redis_url,
            "GOTI_REFEREE_TARGET": settings.referee_target or _local_target(settings.referee_port),
            "GOTI_AI_TARGET": settings.ai_target or _local_target(settings.ai_port),
            "GOTI_TABLES_PORT": str(settings.tables_port),
            "GOTI_REFEREE_PORT": str(settings.referee_port),
            "GOTI_AI_PORT": str(settings.ai_port),
            "GOTI_WEB_PORT": str(settings.web_port),
            "GOTI_JOIN_BASE_URL": settings.join_base_url,
        }
    )
    return environment


def _start_service(name: str, environment: Mapping[str, str], port: int) -> ServiceProcess:
    # Each service gets a session of its own so that Ctrl-C reaches only this process, which
    # then stops them in order.
    process = subprocess.Popen(
        [sys.executable, "-m", f"goti.{name}"],
        env=dict(environment),
        start_new_session=True,
    )
    return ServiceProcess(name, process, _local_target(port))


def _stop(service: ServiceProcess, grace_seconds: float) -> int:
    """Stop one service: SIGTERM (a graceful stop), then SIGKILL if it overstays."""
    process = service.process
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(grace_seconds + STOP_MARGIN_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


def _wait_healthy(services: Sequence[ServiceProcess]) -> None:
    async def wait_all() -> None:
        for service in services:
            try:
                await wait_until_serving(service.target, timeout=START_TIMEOUT_SECONDS)
            except Exception as error:
                exited = service.process.poll()
                detail = f"it exited with status {exited}" if exited is not None else str(error)
                raise BackendError(
                    f"the {service.name} service did not become healthy at "
                    f"{service.target}: {detail}"
                ) from error

    asyncio.run(wait_all())


def _data_folder(settings: Settings) -> Path:
    return Path(os.path.expanduser(settings.data_dir)) / "redis"


class _StopSignals:
    """Ctrl-C, SIGTERM and SIGHUP, caught while the backend runs: each asks it to stop, in
    order, and the handlers from before come back on the way out."""

    # The services and Redis have sessions of their own, out of the terminal's reach: a
    # closed terminal too must stop them, in order, rather than leave them running.
    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self.requested = False
        self._previous: dict[int, signal.Handlers | Callable[..., object] | int | None] = {}

    def _request(self, signum: int, frame: FrameType | None) -> None:
        self.requested = True

    def __enter__(self) -> _StopSignals:
        self._previous = {signum: signal.signal(signum, self._request) for signum in self.SIGNALS}
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)


@dataclass(slots=True)
class _Running:
    """What this backend has started so far, so that however it ends, all of that stops."""

    redis: RedisServer | None = None
    services: list[ServiceProcess] = field(default_factory=list)


def _start_redis(settings: Settings, running: _Running, out: TextIO) -> str:
    """Start the embedded Redis, with its data in the data folder; returns its URL."""
    folder = _data_folder(settings)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        # Kept before it starts: a start that fails halfway still leaves a server to stop.
        running.redis = redis = RedisServer(folder, persistent=True)
        redis.start()
    except RedisServerError as error:
        raise BackendError(str(error)) from error
    print(f"Redis {'.'.join(map(str, redis.version()))} at {redis.url}, data in {folder}", file=out)
    return redis.url


def _start_services(
    settings: Settings, environment: Mapping[str, str], services: list[ServiceProcess]
) -> None:
    """Start the services, each kept in ``services`` as it starts; the tables service comes
    last, as it calls the other two."""
    for name, port in (
        ("referee", settings.referee_port),
        ("ai", settings.ai_port),
        ("tables", settings.tables_port),
    ):
        services.append(_start_service(name, environment, port))


def _announce(settings: Settings, tables: str, out: TextIO) -> None:
    """Say where clients connect: the tables service, and the web page if it is on."""
    page = page_address(settings.web_port)
    browser = f"  Play in a browser:   {page}\n" if page is not None else ""
    print(
        f"Goti is running. Clients connect to {tables} (gRPC).\n"
        f"{browser}"
        f"  Play in a terminal:  goti play --server {tables}\n"
        "  Stop:                Ctrl-C",
        file=out,
        flush=True,
    )


def _serve_until_stopped(
    services: Sequence[ServiceProcess], stop: _StopSignals, out: TextIO
) -> int:
    """Wait for a stop signal, or a service that exits by itself; returns the exit status."""
    while not stop.requested:
        for service in services:
            if service.process.poll() is not None:
                print(
                    f"the {service.name} service exited with status "
                    f"{service.process.returncode}; stopping Goti",
                    file=out,
                    flush=True,
                )
                return 1
        time.sleep(POLL_SECONDS)
    return 0


def _stop_all(running: _Running, grace_seconds: float) -> None:
    """Stop the services, the last started first (tables, then AI, then referee), then
    Redis, which they need until they have drained."""
    for service in reversed(running.services):
        _stop(service, grace_seconds)
    if running.redis is not None:
        running.redis.stop()


def run_backend(
    settings: Settings,
    *,
    out: TextIO = sys.stdout,
    environment: Mapping[str, str] | None = None,
    started: Callable[[], None] | None = None,
) -> int:
    """Run the backend until Ctrl-C, SIGTERM or SIGHUP; returns the exit status.

    ``settings`` come from :func:`backend_settings`; the services get ``environment``
    (``os.environ`` unless given) with those settings on top.
    """
    running = _Running()
    status = 0
    with _StopSignals() as stop:
        try:
            redis_url = settings.redis_url or _start_redis(settings, running, out)
            base = os.environ if environment is None else environment
            _start_services(
                settings, child_environment(settings, redis_url, base), running.services
            )
            _wait_healthy(running.services)
            _announce(settings, running.services[-1].target, out)
            if started is not None:
                started()
            status = _serve_until_stopped(running.services, stop, out)
        except BackendError as error:
            print(f"goti: error: {error}", file=sys.stderr, flush=True)
            status = 1
        finally:
            _stop_all(running, settings.grace_seconds)
    if status == 0:
        print("Goti stopped.", file=out, flush=True)
    return status
