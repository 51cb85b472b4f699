"""What Goti's benchmarks (``bench/``) share: what they record about the machine they ran on,
the head and the file of their figures, and Goti's servers run as child processes on loopback.

A shared machine's speed drifts by a third within an hour, so each benchmark that compares
with another run writes down how fast this machine ran Python at its start and end: leaves
per CPU-second of English perft from the start position.  Figures of runs whose speeds differ
are not comparable.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Self

import grpc
from redis.asyncio import Redis

from goti.healthcheck import wait_until_serving
from goti.redis_server import RedisServer, free_port
from goti.rules.perft import perft
from goti.rules.position import Position
from goti.rules.variants import ENGLISH

CALIBRATION_DEPTH: Final = 8
LOOPBACK: Final = "127.0.0.1"
SERVICE_START_SECONDS: Final = 60.0
SERVICE_STOP_SECONDS: Final = 15.0


def perft_leaves_per_cpu_second() -> int:
    """Leaves per CPU-second of English perft from the start (the best of two)."""
    start = Position.initial(ENGLISH)
    best = float("inf")
    nodes = 0
    for _ in range(2):
        started = time.process_time()
        nodes = perft(start, CALIBRATION_DEPTH)
        best = min(best, time.process_time() - started)
    return round(nodes / best)


def cpu_model() -> str:
    """The CPU's model name, from /proc/cpuinfo where there is one."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def describe_machine() -> dict[str, Any]:
    """The CPU, the software versions, the load and the speed, as a run starts."""
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "grpcio": grpc.__version__,
        "platform": platform.platform(),
        "load_average_at_start": [round(value, 2) for value in os.getloadavg()],
        "perft_leaves_per_cpu_second_at_start": perft_leaves_per_cpu_second(),
    }


def finish_description(machine: dict[str, Any]) -> str:
    """Add the load and the speed at the end of the run; a line saying both speeds."""
    machine["load_average_at_end"] = [round(value, 2) for value in os.getloadavg()]
    machine["perft_leaves_per_cpu_second_at_end"] = perft_leaves_per_cpu_second()
    return (
        "this machine's speed (English perft leaves per CPU-second): "
        f"{machine['perft_leaves_per_cpu_second_at_start']:,} at the start, "
        f"{machine['perft_leaves_per_cpu_second_at_end']:,} at the end"
    )


def percentile(values: Sequence[float], fraction: float) -> float:
    """The value ``fraction`` of the way through ``values`` sorted (nearest rank); NaN for
    none.  Benchmarks whose figures are read against each other use this one definition."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def whole_numbers(text: str) -> list[int]:
    """A command line's comma-separated counts (``10,100,1000``)."""
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"whole numbers separated by commas, not {text!r}") from None


def milliseconds(seconds: float) -> float:
    """Seconds as milliseconds, to the microsecond."""
    return round(seconds * 1000, 3)


def process_cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process, from its own counters in ``/proc``."""
    # Fields after the command name (which may hold spaces) start at field 3 (state).
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / os.sysconf("SC_CLK_TCK")


def run_record(benchmark: str) -> dict[str, Any]:
    """The head of a run's figures: the benchmark, when and how it ran, and on what machine
    (finish the machine's description with :func:`finish_description`)."""
    return {
        "benchmark": benchmark,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(shlex.quote(part) for part in ["python", *sys.argv]),
        "machine": describe_machine(),
    }


async def call_seconds(
    call: Callable[[], Awaitable[object]], rounds: int, pause: float = 0.0
) -> list[float]:
    """How long each of ``rounds`` calls took, one after another, each after ``pause`` seconds
    of quiet (0: none)."""
    times = []
    for _ in range(rounds):
        if pause:
            await asyncio.sleep(pause)
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return times


BEFORE: Final = "before"
"""The build of the commit a comparison measures against (``--before REV``)."""
AFTER: Final = "after"
"""The working tree's build."""


@contextlib.contextmanager
def compared_builds(
    repository: Path, revision: str, others: Iterable[tuple[str, str]]
) -> Iterator[dict[str, str | None]]:
    """The builds a comparison runs, each as the ``PYTHONPATH`` of its servers: :data:`BEFORE`,
    ``revision`` of the git ``repository`` checked out into a temporary worktree (its
    ``services`` and ``clients``; removed at the end), :data:`AFTER`, None (the working tree as
    installed), then ``others`` (``--build NAME=PATH``, see :func:`build_option`)."""
    with tempfile.TemporaryDirectory(prefix="goti-before-") as folder:
        tree = Path(folder) / "before"
        subprocess.run(
            ["git", "-C", str(repository), "worktree", "add", "--detach", str(tree), revision],
            check=True,
            capture_output=True,
        )
        try:
            yield {BEFORE: f"{tree / 'services'}:{tree / 'clients'}", AFTER: None, **dict(others)}
        finally:
            subprocess.run(
                ["git", "-C", str(repository), "worktree", "remove", "--force", str(tree)],
                check=False,
                capture_output=True,
            )


def build_option(*taken: str) -> Callable[[str], tuple[str, str]]:
    """The argparse type of a ``--build NAME=PATH`` option: the name, and PATH made absolute;
    the names ``taken`` by the benchmark itself are refused."""

    def parse(text: str) -> tuple[str, str]:
        name, separator, path = text.partition("=")
        if not separator or not name or name in taken:
            raise argparse.ArgumentTypeError(
                f"NAME=PATH, the name not one of {', '.join(taken)}: {text!r}"
            )
        return name, str(Path(path).resolve())

    return parse


def write_figures(results: dict[str, Any], output: Path) -> None:
    """Write a run's figures as JSON, saying where."""
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written to {output}")


async def redis_command_counts(redis: Redis) -> dict[str, int]:
    """How often Redis has run each command (``INFO commandstats``)."""
    stats = await redis.info("commandstats")
    return {
        name.removeprefix("cmdstat_"): int(values["calls"])
        for name, values in stats.items()
        if isinstance(values, dict)
    }


def service_environment(redis_url: str, referee_port: int) -> dict[str, str]:
    """The environment of a Goti service on loopback beside one referee, no computer player
    and quiet logs, with the per-address rate limits a crowd of bots would trip turned off
    (a benchmark adds the limits and ports of its own)."""
    return {
        **os.environ,
        "GOTI_HOST": LOOPBACK,
        "GOTI_REDIS_URL": redis_url,
        "GOTI_REFEREE_PORT": str(referee_port),
        "GOTI_REFEREE_TARGET": f"{LOOPBACK}:{referee_port}",
        # Nothing listens here: no computer plays in the benchmarks.
        "GOTI_AI_TARGET": f"{LOOPBACK}:{free_port()}",
        "GOTI_LOG_LEVEL": "warning",
        "GOTI_LOG_FORMAT": "text",
        # Thousands of bot players from one address, as no real crowd would be.
        "GOTI_GUESTS_PER_MINUTE": "0",
    }


@dataclass
class LoopbackServers:
    """Redis and Goti's services, each its own process on loopback, logging into ``folder``.

    A benchmark's backend extends :meth:`start` (Redis) with the services it runs, started
    with :meth:`spawn`; :meth:`running` starts them all and stops them, last started first.
    """

    folder: Path
    persistent_redis: bool
    redis: RedisServer | None = None
    services: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    async def start(self) -> None:
        self.redis = RedisServer(self.folder / "redis", persistent=self.persistent_redis)
        await self.redis.astart()

    def launch(self, name: str, command: Sequence[str], environment: dict[str, str]) -> None:
        """Start ``command`` as service ``name``, its output kept in ``<name>.log``."""
        with (self.folder / f"{name}.log").open("ab") as log:
            self.services[name] = subprocess.Popen(
                list(command),
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    async def spawn(
        self, name: str, command: Sequence[str], environment: dict[str, str], target: str
    ) -> None:
        """Start ``command`` as service ``name`` and wait until ``target`` serves (gRPC
        health)."""
        self.launch(name, command, environment)
        try:
            await wait_until_serving(target, timeout=SERVICE_START_SECONDS)
        except TimeoutError:
            raise RuntimeError(f"{name} did not start:\n{self.log_tail(name)}") from None

    def cpu(self) -> dict[str, float]:
        """CPU seconds each kind of process has used so far: the services by name, replicas
        (``tables-0``, ``tables-1``) together, and Redis."""
        spent: dict[str, float] = {}
        for name, process in self.services.items():
            kind = name.partition("-")[0]
            spent[kind] = spent.get(kind, 0.0) + process_cpu_seconds(process.pid)
        assert self.redis is not None and self.redis.pid is not None
        spent["redis"] = process_cpu_seconds(self.redis.pid)
        return spent

    def log_tail(self, name: str, lines: int = 30) -> str:
        path = self.folder / f"{name}.log"
        if not path.exists():
            return "(no log)"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def describe_redis(self, machine: dict[str, Any]) -> None:
        """Add the Redis version and its persistence to a run's machine description."""
        assert self.redis is not None
        machine["redis"] = ".".join(map(str, self.redis.version()))
        machine["redis_persistence"] = (
            "appendonly, fsync every second" if self.persistent_redis else "off"
        )

    async def stop(self) -> None:
        """Stop the services, last started first (each waited for), then Redis."""
        for process in reversed(self.services.values()):
            if process.poll() is not None:
                continue
            process.terminate()
            try:
                await asyncio.to_thread(process.wait, SERVICE_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                await asyncio.to_thread(process.wait)
        if self.redis is not None:
            await self.redis.astop()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Self]:
        """Start everything, and stop it at the end, showing the services' logs when
        anything failed."""
        try:
            await self.start()
            yield self
        except BaseException:
            self._show_logs()
            raise
        finally:
            await self.stop()

    def _show_logs(self) -> None:
        for name in self.services:
            print(f"--- {name} log ---\n{self.log_tail(name)}", file=sys.stderr)
