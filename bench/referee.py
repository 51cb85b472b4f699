"""Referee speed: Apply calls per second, their latency, and the referee's CPU per call.

One referee process (``goti serve referee --port 0``) is driven from this process over one
gRPC channel with Goti's client options, the way the tables service calls it.  The requests
are real mid-game moves of both variants (plies 6-60 of games played with random legal moves,
half sent as paths and half as notation), encoded once up front so that the client spends
its time on the calls.  When two CPUs are available the referee is pinned to one and this
client to the other, so the referee's figures are those of one core.

Measured, for each load:

- closed loops of 1, 4 and 16 calls in flight: calls per second, and the latency of each
  call from send to answer as the client sees it (p50, p99, max);
- open loops at steady rates well under capacity (moderate loads): the same latencies;
- the referee's own CPU (user + system, from ``/proc/<pid>/stat``) per call, and from it the
  Apply calls one core can serve;
- from the referee's Prometheus histogram, the share of calls it handled within 0.5 ms and
  1 ms (its own time, without the network or the client).

Each load runs ``--repeat`` times (3), in rounds of every load, and the run with the median
p99 is reported, with every run's p99 beside it: on a shared machine one unlucky run says
more about the neighbours than about the referee; the kernel's CPU pressure before and after
is written down for the same reason.

Goals: p99 under 1 ms at moderate load (500 calls/s, a fifth of what one core serves), and
at least 2,000 Apply calls per second per core.

Run: ``python bench/referee.py`` (figures to ``bench/results/referee.json``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import grpc
from prometheus_client.parser import text_string_to_metric_families

from goti import serving
from goti.api import convert
from goti.api.v1 import referee_pb2
from goti.benchmarking import cpu_model
from goti.rules.game import Game
from goti.rules.variants import ENGLISH, RUSSIAN, Variant
from goti.settings import Settings

RESULTS: Final = Path(__file__).parent / "results" / "referee.json"
APPLY: Final = "/goti.api.v1.RefereeService/Apply"
GOAL_P99_MS: Final = 1.0
GOAL_APPLIES_PER_CORE: Final = 2000
MODERATE_RATE: Final = 500.0
START_TIMEOUT_SECONDS: Final = 60.0
CALL_TIMEOUT_SECONDS: Final = 10.0
CLOCK_TICKS: Final = os.sysconf("SC_CLK_TCK")
HANDLED_WITHIN: Final = ("0.0005", "0.001")
"""Bucket bounds of the referee's latency histogram read back, in seconds."""

Apply = grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]


def mid_game_requests(variant: Variant, count: int, seed: int) -> list[bytes]:
    """``count`` encoded Apply requests, each a legal move in a game of random moves."""
    chooser = random.Random(seed)
    requests: list[bytes] = []
    while len(requests) < count:
        game = Game(variant)
        stop_at = chooser.randrange(6, 60)
        while not game.is_over and game.ply < stop_at:
            game.push(chooser.choice(game.legal_moves))
        if game.is_over:
            continue
        move = chooser.choice(game.legal_moves)
        request = referee_pb2.ApplyRequest(state=convert.game_state_to_proto(game.state()))
        if len(requests) % 2:
            request.move_notation = game.notation(move)
        else:
            request.move_path.squares.extend(move.path)
        requests.append(request.SerializeToString())
    return requests


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class RefereeProcess:
    """``goti serve referee --port 0`` in a child process, its port read from its log."""

    def __init__(self, cpu: int | None) -> None:
        self.metrics_port = _free_port()
        environment = {
            **{name: value for name, value in os.environ.items() if not name.startswith("GOTI_")},
            "GOTI_HOST": "127.0.0.1",
            "GOTI_LOG_FORMAT": "json",
            "GOTI_REFEREE_METRICS_PORT": str(self.metrics_port),
        }
        self.command = [sys.executable, "-m", "goti.cli", "serve", "referee", "--port", "0"]
        self.process = subprocess.Popen(
            self.command,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if cpu is not None:
            os.sched_setaffinity(self.process.pid, {cpu})
        self._port: int | None = None
        self._serving = threading.Event()
        threading.Thread(target=self._read_log, daemon=True).start()

    def _read_log(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if str(record.get("message", "")).startswith("referee serving on"):
                self._port = int(record["port"])
                self._serving.set()

    def target(self) -> str:
        if not self._serving.wait(START_TIMEOUT_SECONDS) or self._port is None:
            raise RuntimeError(f"the referee did not start: {' '.join(self.command)}")
        return f"127.0.0.1:{self._port}"

    def cpu_seconds(self) -> float:
        """User plus system CPU time the referee has used so far."""
        with open(f"/proc/{self.process.pid}/stat") as stat:
            # The command name, in parentheses, may hold spaces: count fields after it.
            fields = stat.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS

    def apply_histogram(self) -> dict[str, float]:
        """The referee's cumulative Apply latency histogram: bucket bound -> calls."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            text = response.read().decode()
        buckets = {}
        for family in text_string_to_metric_families(text):
            if family.name != "grpc_server_handling_seconds":
                continue
            for sample in family.samples:
                if sample.name.endswith("_bucket") and sample.labels["grpc_method"] == "Apply":
                    buckets[sample.labels["le"]] = sample.value
        return buckets

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


@dataclass
class Run:
    """One load, once: what was asked and what was seen."""

    load: str
    seconds: float
    latencies: list[float] = field(default_factory=list)
    failures: int = 0
    referee_cpu_seconds: float = 0.0
    client_cpu_seconds: float = 0.0
    handled_within: dict[str, float] = field(default_factory=dict)

    def p99_ms(self) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1000

    def report(self) -> dict[str, Any]:
        calls = len(self.latencies)
        ordered = sorted(self.latencies)

        def percentile_ms(fraction: float) -> float:
            return round(ordered[min(calls - 1, int(fraction * calls))] * 1000, 3)

        cpu_per_call = self.referee_cpu_seconds / calls
        return {
            "load": self.load,
            "calls": calls,
            "failures": self.failures,
            "seconds": round(self.seconds, 3),
            "calls_per_second": round(calls / self.seconds),
            "latency_ms": {
                "p50": percentile_ms(0.50),
                "p90": percentile_ms(0.90),
                "p99": percentile_ms(0.99),
                "max": round(ordered[-1] * 1000, 3),
                "mean": round(statistics.fmean(ordered) * 1000, 3),
            },
            "referee_cpu_ms_per_call": round(cpu_per_call * 1000, 4),
            "referee_applies_per_core_second": round(1 / cpu_per_call) if cpu_per_call else None,
            "referee_handled_within_ms": {
                f"{float(bound) * 1000:g}": round(share, 4)
                for bound, share in self.handled_within.items()
            },
            "client_cpu_ms_per_call": round(self.client_cpu_seconds / calls * 1000, 4),
        }


async def _timed_call(apply: Apply, request: bytes, run: Run) -> None:
    sent = time.perf_counter()
    try:
        await apply(request, timeout=CALL_TIMEOUT_SECONDS)
    except grpc.aio.AioRpcError:
        run.failures += 1
        return
    run.latencies.append(time.perf_counter() - sent)


async def closed_loop(apply: Apply, requests: Sequence[bytes], in_flight: int, run: Run) -> None:
    """``in_flight`` callers, each sending its next call as soon as the last is answered."""
    deadline = time.perf_counter() + run.seconds

    async def caller(offset: int) -> None:
        index = offset
        while time.perf_counter() < deadline:
            await _timed_call(apply, requests[index % len(requests)], run)
            index += in_flight

    await asyncio.gather(*(caller(offset) for offset in range(in_flight)))


async def open_loop(apply: Apply, requests: Sequence[bytes], rate: float, run: Run) -> None:
    """Calls started at a steady ``rate`` whatever the answers.

    The event loop's timers tick in whole milliseconds, so a call may start up to a
    millisecond after its slot; its latency runs from the moment it is sent.
    """
    interval = 1 / rate
    started = time.perf_counter()
    pending: set[asyncio.Task[None]] = set()
    for index in range(int(rate * run.seconds)):
        delay = started + index * interval - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        task = asyncio.ensure_future(_timed_call(apply, requests[index % len(requests)], run))
        pending.add(task)
        task.add_done_callback(pending.discard)
    await asyncio.gather(*pending)


async def _run_load(
    referee: RefereeProcess,
    apply: Apply,
    requests: Sequence[bytes],
    kind: str,
    amount: float,
    seconds: float,
) -> Run:
    name = f"closed loop, {amount:g} in flight" if kind == "closed" else f"open loop, {amount:g}/s"
    run = Run(name, seconds)
    histogram_before = referee.apply_histogram()
    cpu_before, client_before = referee.cpu_seconds(), time.process_time()
    started = time.perf_counter()
    if kind == "closed":
        await closed_loop(apply, requests, int(amount), run)
    else:
        await open_loop(apply, requests, amount, run)
    run.seconds = time.perf_counter() - started
    run.referee_cpu_seconds = referee.cpu_seconds() - cpu_before
    run.client_cpu_seconds = time.process_time() - client_before
    histogram_after = referee.apply_histogram()
    handled = histogram_after["+Inf"] - histogram_before.get("+Inf", 0.0)
    run.handled_within = {
        bound: (histogram_after[bound] - histogram_before.get(bound, 0.0)) / handled
        for bound in HANDLED_WITHIN
    }
    return run


async def _measure(
    referee: RefereeProcess, requests: list[bytes], arguments: argparse.Namespace
) -> list[list[Run]]:
    """Every load, each ``--repeat`` times: a list of runs per load."""
    async with serving.open_channel(referee.target(), Settings()) as channel:
        apply: Apply = channel.unary_unary(APPLY)
        # Every request is a legal move: check once, and warm both processes up.
        for request in requests:
            answer = referee_pb2.ApplyResponse.FromString(await apply(request, timeout=30))
            assert answer.HasField("move"), answer
        warm_up = Run("warm-up", arguments.warmup)
        await closed_loop(apply, requests, 4, warm_up)

        loads = [("closed", float(n)) for n in arguments.in_flight]
        loads += [("open", float(rate)) for rate in arguments.rates]
        results: list[list[Run]] = [[] for _ in loads]
        # Round after round of every load, so that a busy spell on a shared machine spoils
        # one run of several loads rather than every run of one.
        for _ in range(arguments.repeat):
            for runs, (kind, amount) in zip(results, loads, strict=True):
                runs.append(
                    await _run_load(referee, apply, requests, kind, amount, arguments.seconds)
                )
        for runs in results:
            report = _median_run(runs).report()
            latency = report["latency_ms"]
            within = report["referee_handled_within_ms"]
            print(
                f"{report['load']:<24} {report['calls_per_second']:>5} calls/s  "
                f"p50 {latency['p50']:6.3f} ms  p99 {latency['p99']:6.3f} ms "
                f"(runs: {', '.join(f'{run.p99_ms():.3f}' for run in runs)})  "
                f"referee {report['referee_cpu_ms_per_call']:.3f} ms CPU/call, "
                f"{within['1'] * 100:.2f}% within 1 ms  failures {report['failures']}",
                flush=True,
            )
        return results


def _median_run(runs: Sequence[Run]) -> Run:
    return sorted(runs, key=Run.p99_ms)[len(runs) // 2]


def _cpu_pressure() -> str | None:
    """The kernel's CPU pressure line (share of time tasks waited for a CPU), if it keeps one:
    what the neighbours were doing to the figures."""
    try:
        with open("/proc/pressure/cpu") as pressure:
            return pressure.readline().strip()
    except OSError:
        return None


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each run (2)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each load (3)")
    parser.add_argument("--warmup", type=float, default=2.0, help="warm-up seconds (2)")
    parser.add_argument(
        "--in-flight", type=int, nargs="+", default=[1, 4, 16], help="closed loops (1 4 16)"
    )
    parser.add_argument(
        "--rates",
        type=float,
        nargs="+",
        default=[250, MODERATE_RATE, 1000],
        help="open loops, calls per second (250 500 1000)",
    )
    parser.add_argument("--requests", type=int, default=200, help="positions per variant (200)")
    parser.add_argument("--no-write", action="store_true", help=f"do not write {RESULTS.name}")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    arguments = _arguments(argv)
    load_average_before = os.getloadavg()
    pressure_before = _cpu_pressure()
    requests = [
        *mid_game_requests(ENGLISH, arguments.requests, seed=1),
        *mid_game_requests(RUSSIAN, arguments.requests, seed=2),
    ]
    random.Random(3).shuffle(requests)
    cpus = sorted(os.sched_getaffinity(0))
    pinned = len(cpus) >= 2
    referee = RefereeProcess(cpus[0] if pinned else None)
    if pinned:
        os.sched_setaffinity(0, {cpus[1]})
    try:
        results = serving.run(lambda: _measure(referee, requests, arguments))
    finally:
        exit_code = referee.stop()

    reports = []
    for runs in results:
        report = _median_run(runs).report()
        report["p99_ms_of_each_run"] = [round(run.p99_ms(), 3) for run in runs]
        reports.append(report)
    every_run = [run for runs in results for run in runs]
    cpu_per_call = sum(run.referee_cpu_seconds for run in every_run) / sum(
        len(run.latencies) for run in every_run
    )
    per_core = round(1 / cpu_per_call)
    moderate = next(
        (report for report in reports if report["load"] == f"open loop, {MODERATE_RATE:g}/s"),
        None,
    )
    moderate_p99 = None if moderate is None else moderate["latency_ms"]["p99"]
    moderate_within = None if moderate is None else moderate["referee_handled_within_ms"]["1"]
    summary = {
        "referee_cpu_ms_per_call": round(cpu_per_call * 1000, 4),
        "applies_per_core_second": per_core,
        "moderate_load": f"{MODERATE_RATE:g} calls/s",
        "moderate_load_p99_ms": moderate_p99,
        "goal_applies_per_core_second": GOAL_APPLIES_PER_CORE,
        "goal_p99_ms": GOAL_P99_MS,
        "meets_throughput_goal": per_core >= GOAL_APPLIES_PER_CORE,
        "meets_latency_goal": moderate_p99 is not None and moderate_p99 < GOAL_P99_MS,
        # The referee's own view: its handling time, from its histogram, without the client.
        "moderate_load_referee_share_within_1_ms": moderate_within,
        "referee_p99_within_1_ms": moderate_within is not None and moderate_within >= 0.99,
        "cpu_pressure_after": _cpu_pressure(),
        "failures": sum(run.failures for run in every_run),
        "referee_exit_code": exit_code,
    }
    print(json.dumps(summary, indent=2))
    if arguments.no_write:
        return
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "RefereeService.Apply from another process, one referee process",
                "command": " ".join(["python", "bench/referee.py", *sys.argv[1:]]),
                "when": datetime.now(UTC).isoformat(timespec="seconds"),
                "python": platform.python_version(),
                "grpcio": grpc.__version__,
                "machine": platform.machine(),
                "cpu": cpu_model(),
                "cpus_available": len(cpus),
                "pinned": pinned,
                "load_average_before": [round(value, 2) for value in load_average_before],
                "cpu_pressure_before": pressure_before,
                "requests": {"english": arguments.requests, "russian": arguments.requests},
                "repeat": arguments.repeat,
                "summary": summary,
                "loads": reports,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
