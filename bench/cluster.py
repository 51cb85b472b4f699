"""One Redis against a Redis Cluster, and moves per second as the cluster's primaries are added.

The load is ``bench/tables.py``'s (``goti.benchmark_bots``): bots play real games through the
public API, two watchers per table, on deployments this benchmark starts on loopback, each
its own processes: a referee, a tables process, and either one ``redis-server`` or a Redis
Cluster (``tests/redis_topologies.py``'s, one replica per primary, reached as
``redis+cluster://`` with the tables over ``GOTI_REDIS_SHARDS``' 16 shards).  Neither Redis
writes to disk, so that the two differ only in being a cluster.

- One Redis or a cluster: the open loop (tables moving after exponential think times, 3 s on
  average) at 10 and 1,000 tables against one Redis and against a cluster of three primaries
  and three replicas, back to back, in rounds that swap which goes first (a shared machine's
  speed drifts).  For each: the round trip from the Play call to the move's event at both
  watchers (p50, p99), the server CPU per move of the tables process, the referee, the
  primaries and the replicas (each group's processes summed, from ``/proc/<pid>/stat``), the
  Redis commands per move (``INFO commandstats`` summed over the primaries), and the
  cluster's figures over one Redis's.
- Moves per second as primaries are added: ``--closed-tables`` tables moving as fast as the
  service answers, through ``--tables-replicas`` tables processes and ``--referee-replicas``
  referees, against one Redis and clusters of ``--primaries`` primaries; the moves per second
  and where the CPU went (cores busy in each group, and in the bots).  On a machine of a few
  cores the Python processes, the bots' included, take the cores long before Redis does: the
  curve shows what Redis costs, not what more primaries would carry.  A bigger machine runs
  ``python bench/cluster.py --skip-comparison --primaries 1,2,4,8 --tables-replicas 8
  --referee-replicas 4 --closed-tables 512`` (the bots need cores of their own, too).

Run: ``python bench/cluster.py`` (about 10 minutes on 2 cores; ``--quick`` for a smoke run).
Figures go to ``bench/results/cluster.json``, with the machine's load and speed (perft) at
the start and the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from redis.asyncio import Redis

from goti import serving
from goti.benchmark_bots import Bots, crowd_environment, describe_phase, playing_tables, run_phase
from goti.benchmarking import (
    LOOPBACK,
    LoopbackServers,
    finish_description,
    process_cpu_seconds,
    redis_command_counts,
    run_record,
    whole_numbers,
    write_figures,
)
from goti.redis_server import find_redis_server, free_port, redis_server_version

# The cluster is the tests' own (tests/ is no package: its modules import by name).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from redis_topologies import LocalCluster, RedisProcess

RESULTS: Final = Path(__file__).parent / "results" / "cluster.json"
ONE_REDIS: Final = 0
"""``primaries`` of a deployment on one plain Redis rather than a cluster."""
COMPARED_PRIMARIES: Final = 3
CLUSTER_NODE_TIMEOUT_MS: Final = 15_000
"""Redis's own default: a node starved of CPU for a moment on a machine this busy must not
be failed over mid-run (the tests' 2 s would)."""
BIGGER_MACHINE: Final = (
    "python bench/cluster.py --skip-comparison --primaries 1,2,4,8 "
    "--tables-replicas 8 --referee-replicas 4 --closed-tables 512"
)


def topology_name(primaries: int) -> str:
    return "one Redis" if primaries == ONE_REDIS else f"cluster of {primaries} primaries"


@dataclass
class Deployment(LoopbackServers):
    """Referees and tables processes on one Redis (``primaries`` 0) or on a Redis Cluster of
    ``primaries`` primaries with a replica each."""

    primaries: int = ONE_REDIS
    tables_replicas: int = 1
    referee_replicas: int = 1
    cluster: LocalCluster | None = None
    tables_targets: list[str] = field(default_factory=list)
    redis_groups: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    """``redis`` (one Redis, or the primaries) and ``redis_replicas``: (port, pid) of each."""

    async def start(self) -> None:
        if self.primaries == ONE_REDIS:
            await super().start()
            assert self.redis is not None and self.redis.pid is not None
            url = self.redis.url
            self.redis_groups = {"redis": [(self.redis.port, self.redis.pid)]}
        else:
            self.cluster = LocalCluster(
                self.folder / "cluster",
                primaries=self.primaries,
                node_timeout_ms=CLUSTER_NODE_TIMEOUT_MS,
            )
            await asyncio.to_thread(self.cluster.start)
            url = self.cluster.goti_url
            primaries = await asyncio.to_thread(self.cluster.primaries)
            replicas = [node for node in self.cluster.running_nodes if node not in primaries]
            self.redis_groups = {
                group: [(node.port, _pid(node)) for node in nodes]
                for group, nodes in (("redis", primaries), ("redis_replicas", replicas))
            }
        referee_ports = [free_port() for _ in range(self.referee_replicas)]
        for index, port in enumerate(referee_ports):
            command = [sys.executable, "-m", "goti.referee"]
            await self.spawn(
                f"referee-{index}", command, crowd_environment(url, port), f"{LOOPBACK}:{port}"
            )
        # Several referees: the tables service's channel spreads its calls round-robin.
        referee_target = "ipv4:" + ",".join(f"{LOOPBACK}:{port}" for port in referee_ports)
        for index in range(self.tables_replicas):
            port = free_port()
            environment = {
                **crowd_environment(url, referee_ports[0]),
                "GOTI_REFEREE_TARGET": referee_target,
                "GOTI_TABLES_PORT": str(port),
            }
            target = f"{LOOPBACK}:{port}"
            await self.spawn(
                f"tables-{index}", [sys.executable, "-m", "goti.tables"], environment, target
            )
            self.tables_targets.append(target)

    async def stop(self) -> None:
        await super().stop()
        if self.cluster is not None:
            await asyncio.to_thread(self.cluster.stop)

    def cpu(self) -> dict[str, float]:
        """CPU seconds of the tables processes, the referees, and each Redis group."""
        groups = {
            kind: sum(
                process_cpu_seconds(process.pid)
                for name, process in self.services.items()
                if name.startswith(f"{kind}-")
            )
            for kind in ("tables", "referee")
        }
        for group, nodes in self.redis_groups.items():
            groups[group] = sum(process_cpu_seconds(pid) for _, pid in nodes)
        return groups

    async def failed_over(self) -> bool:
        """Whether a primary of the cluster is not the one it started with."""
        if self.cluster is None:
            return False
        primaries = await asyncio.to_thread(self.cluster.primaries)
        return {node.port for node in primaries} != {port for port, _ in self.redis_groups["redis"]}

    async def redis_command_counts(self) -> dict[str, int]:
        """Commands run so far, summed over one Redis or the cluster's primaries."""
        totals: dict[str, int] = {}
        for port, _ in self.redis_groups["redis"]:
            client = Redis(host=LOOPBACK, port=port)
            try:
                for name, calls in (await redis_command_counts(client)).items():
                    totals[name] = totals.get(name, 0) + calls
            finally:
                await client.aclose()
        return totals


def _pid(node: RedisProcess) -> int:
    assert node.process is not None
    return node.process.pid


async def _measure(
    deployment: Deployment, args: argparse.Namespace, tables: int, mean_interval: float
) -> dict[str, Any]:
    """One run of ``tables`` tables on a running deployment (closed loop at interval 0)."""
    bots = Bots(deployment.tables_targets, args.channels)
    try:
        async with playing_tables(bots, tables, args.watchers) as (players, recorder):
            figures = await run_phase(
                deployment,
                players,
                recorder,
                mean_interval=mean_interval,
                warmup=args.warmup,
                measure=args.measure if mean_interval else args.closed_seconds,
                idle=args.idle,
            )
    finally:
        await bots.close()
    if await deployment.failed_over():
        figures["errors"]["a primary failed over during the run"] = 1
    return figures


async def compare(args: argparse.Namespace, folder: Path, deadline: float) -> dict[str, Any]:
    """The open loop on one Redis and on a cluster, back to back, rounds swapping the order."""
    runs: list[dict[str, Any]] = []
    for round_number in range(args.rounds):
        order = [ONE_REDIS, COMPARED_PRIMARIES]
        if round_number % 2:
            order.reverse()
        for primaries in order:
            if time.monotonic() > deadline:
                print(f"time budget spent: skipping {topology_name(primaries)}")
                continue
            deployment = Deployment(
                folder / f"compare-{round_number}-{primaries}",
                persistent_redis=False,
                primaries=primaries,
            )
            async with deployment.running():
                for count in args.tables:
                    figures = await _measure(deployment, args, count, args.mean_interval)
                    label = f"{topology_name(primaries)}, round {round_number + 1}"
                    print(describe_phase(label, figures), flush=True)
                    runs.append({"topology": topology_name(primaries), "round": round_number + 1})
                    runs[-1].update(figures)
    return {
        "mean_interval_seconds": args.mean_interval,
        "measured_seconds": args.measure,
        "runs": runs,
        "summary": [_summary(runs, count) for count in args.tables],
    }


def _summary(runs: list[dict[str, Any]], tables: int) -> dict[str, Any]:
    """Each topology's figures at ``tables`` (the median over its rounds), and the cluster's
    over one Redis's."""
    row: dict[str, Any] = {"tables": tables}
    for primaries in (ONE_REDIS, COMPARED_PRIMARIES):
        name = topology_name(primaries)
        chosen = [run for run in runs if run["tables"] == tables and run["topology"] == name]
        if not chosen:
            return row
        row[name] = _medians(chosen)
    one, cluster = (row[topology_name(p)] for p in (ONE_REDIS, COMPARED_PRIMARIES))
    row["cluster_over_one_redis"] = {
        what: round(cluster[what] / one[what], 2)
        for what in (
            "round_trip_p50_ms",
            "round_trip_p99_ms",
            "server_cpu_ms_per_move_above_idle",
            "redis_commands_per_move",
        )
    } | {
        "server_cpu_ms_per_move": round(
            cluster["server_cpu_ms_per_move"]["total"] / one["server_cpu_ms_per_move"]["total"], 2
        )
    }
    return row


def _medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The round trip, the CPU per move and the commands per move of ``runs`` (one
    topology's rounds at one table count), each the median over the runs."""

    def median(values: Iterable[float]) -> float:
        return round(statistics.median(values), 3)

    groups = runs[0]["server_cpu_ms_per_move"].keys()
    return {
        "rounds": len(runs),
        "round_trip_p50_ms": median(run["round_trip_ms"]["p50"] for run in runs),
        "round_trip_p99_ms": median(run["round_trip_ms"]["p99"] for run in runs),
        "server_cpu_ms_per_move": {
            group: median(run["server_cpu_ms_per_move"][group] for run in runs) for group in groups
        },
        "server_cpu_ms_per_move_above_idle": median(
            run["server_cpu_ms_per_move_above_idle"]["total"] for run in runs
        ),
        "redis_commands_per_move": median(
            sum(run["redis_commands_per_move"].values()) for run in runs
        ),
    }


async def scale(args: argparse.Namespace, folder: Path, deadline: float) -> dict[str, Any]:
    """The closed loop on one Redis and on clusters of each of ``args.primaries``."""
    rows: list[dict[str, Any]] = []
    for primaries in [ONE_REDIS, *args.primaries]:
        if time.monotonic() > deadline:
            print(f"time budget spent: skipping {topology_name(primaries)}")
            continue
        deployment = Deployment(
            folder / f"scale-{primaries}",
            persistent_redis=False,
            primaries=primaries,
            tables_replicas=args.tables_replicas,
            referee_replicas=args.referee_replicas,
        )
        async with deployment.running():
            figures = await _measure(deployment, args, args.closed_tables, 0.0)
        busy = dict(figures["server_cpu_utilisation"])
        busy["bots"] = round(
            (figures["client_cpu_ms_per_move"] or 0) * figures["moves_per_second"] / 1000, 3
        )
        rows.append(
            {
                "topology": topology_name(primaries),
                "primaries": primaries,
                "moves_per_second": figures["moves_per_second"],
                "round_trip_ms": figures["round_trip_ms"],
                "cores_busy": busy | {"all": round(sum(busy.values()), 2)},
                "server_cpu_ms_per_move": figures["server_cpu_ms_per_move"],
                "errors": figures["errors"],
            }
        )
        print(
            f"{topology_name(primaries)}: {figures['moves_per_second']} moves/s; cores busy "
            + ", ".join(f"{name} {value}" for name, value in rows[-1]["cores_busy"].items()),
            flush=True,
        )
    return {
        "tables": args.closed_tables,
        "tables_replicas": args.tables_replicas,
        "referee_replicas": args.referee_replicas,
        "measured_seconds": args.closed_seconds,
        "rows": rows,
        "bound_by": _bound_by(rows),
        "bigger_machine_command": BIGGER_MACHINE,
    }


def _bound_by(rows: list[dict[str, Any]]) -> str:
    """What held the closed loop back, read from where its CPU went."""
    if not rows:
        return "not measured"
    busiest = max(rows, key=lambda row: row["cores_busy"]["all"])["cores_busy"]
    cores = len(os.sched_getaffinity(0))
    python = sum(busiest[name] for name in ("tables", "referee", "bots"))
    redis = busiest["all"] - python
    said = (
        f"{busiest['all']} of {cores} cores busy at most: {python:.2f} in the Python processes "
        f"(tables, referee, bots), {redis:.2f} in Redis"
    )
    if busiest["all"] >= 0.8 * cores and python > redis:
        return (
            f"{said}; the cores ran out in the Python processes, not in Redis, so more "
            "primaries cannot show their gain on this machine"
        )
    return said


async def run(args: argparse.Namespace) -> dict[str, Any]:
    deadline = time.monotonic() + args.max_minutes * 60
    results: dict[str, Any] = run_record(
        "one Redis against a Redis Cluster, and moves per second as primaries are added"
    )
    binary = find_redis_server()
    results["machine"]["redis"] = ".".join(map(str, redis_server_version(binary)))
    results["machine"]["redis_persistence"] = "off (one Redis and the cluster alike)"
    with tempfile.TemporaryDirectory(prefix="goti-bench-cluster-") as folder:
        if not args.skip_comparison:
            results["one_redis_vs_cluster"] = await compare(args, Path(folder), deadline)
            for row in results["one_redis_vs_cluster"]["summary"]:
                print(f"{row['tables']} tables: {row}", flush=True)
        results["moves_per_second_by_primaries"] = await scale(args, Path(folder), deadline)
        print(results["moves_per_second_by_primaries"]["bound_by"])
        print(f"on a bigger machine: {BIGGER_MACHINE}")
    print(finish_description(results["machine"]))
    return results


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tables", type=whole_numbers, default=[10, 1000], help="open-loop tables (10,1000)"
    )
    parser.add_argument(
        "--mean-interval",
        type=float,
        default=3.0,
        help="mean seconds between a table's moves in the open loop (3)",
    )
    parser.add_argument("--rounds", type=int, default=2, help="comparison rounds (2)")
    parser.add_argument(
        "--measure", type=float, default=20.0, help="seconds measured per open-loop run (20)"
    )
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring (3)")
    parser.add_argument(
        "--idle", type=float, default=2.0, help="quiet seconds read before each run's moves (2)"
    )
    parser.add_argument(
        "--primaries",
        type=whole_numbers,
        default=[1, 2, 3],
        help="cluster primaries in the closed loop, beside one Redis (1,2,3)",
    )
    parser.add_argument(
        "--tables-replicas", type=int, default=2, help="tables processes in the closed loop (2)"
    )
    parser.add_argument(
        "--referee-replicas", type=int, default=1, help="referees in the closed loop (1)"
    )
    parser.add_argument(
        "--closed-tables", type=int, default=64, help="tables in the closed loop (64)"
    )
    parser.add_argument(
        "--closed-seconds", type=float, default=15.0, help="seconds measured per closed loop (15)"
    )
    parser.add_argument("--watchers", type=int, default=2, help="watchers per table (2)")
    parser.add_argument(
        "--channels", type=int, default=16, help="client connections the bots spread over (16)"
    )
    parser.add_argument(
        "--skip-comparison", action="store_true", help="only the moves per second by primaries"
    )
    parser.add_argument(
        "--max-minutes", type=float, default=20.0, help="start no new run after this long (20)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 10 and 100 tables, 5 s each, 1 round"
    )
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"figures file ({RESULTS})")
    args = parser.parse_args(argv)
    if args.quick:
        args.tables, args.rounds, args.measure, args.closed_seconds = [10, 100], 1, 5.0, 5.0
        args.warmup, args.idle, args.primaries = 1.0, 1.0, [1, 3]
    write_figures(serving.run(lambda: run(args)), args.output)


if __name__ == "__main__":
    main()
