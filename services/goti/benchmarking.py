"""What Goti's benchmarks (``bench/``) record about the machine they ran on.

A shared machine's speed drifts by a third within an hour, so each benchmark that compares
with another run writes down how fast this machine ran Python at its start and end: leaves
per CPU-second of English perft from the start position.  Figures of runs whose speeds differ
are not comparable.
"""

from __future__ import annotations

import contextlib
import os
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import grpc

from goti.rules.perft import perft
from goti.rules.position import Position
from goti.rules.variants import ENGLISH

CALIBRATION_DEPTH: Final = 8


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


def milliseconds(seconds: float) -> float:
    """Seconds as milliseconds, to the microsecond."""
    return round(seconds * 1000, 3)


def process_cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process, from its own counters in ``/proc``."""
    # Fields after the command name (which may hold spaces) start at field 3 (state).
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / os.sysconf("SC_CLK_TCK")
