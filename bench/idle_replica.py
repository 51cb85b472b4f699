"""What a tables replica costs while nobody plays: its CPU and its Redis commands a second.

A replica with no tables and no seeks still runs its background work: the timer worker
polls for due timers, the pairing worker for the matchmaking pools, the pub/sub reader and
the gRPC server keep their connections.  Operators run several replicas that sit idle most
of the night, and whatever an idle replica spends it spends all the time.  Here each build
(``--before REV`` checked out into a temporary worktree, the working tree as ``after``, any
``--build NAME=PATH``) runs its own Redis, referee and tables process, all at once, and once
``--warmup`` seconds have passed the CPU time of each process and the commands each Redis ran
are read over the same ``--seconds``: whatever the machine does then, it does to every build.

    python bench/idle_replica.py --before 8cff301

Figures go to ``bench/results/idle_replica.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

from goti.benchmark_bots import TablesBackend
from goti.benchmarking import (
    AFTER,
    BEFORE,
    build_option,
    compared_builds,
    finish_description,
    run_record,
    write_figures,
)

BENCH: Final = Path(__file__).resolve().parent
REPOSITORY: Final = BENCH.parent
RESULTS: Final = BENCH / "results" / "idle_replica.json"


async def _round(paths: dict[str, str | None], args: argparse.Namespace) -> dict[str, Any]:
    """Every build idling at once; each one's CPU (ms a second) and Redis commands a second."""
    with tempfile.TemporaryDirectory(prefix="goti-idle-") as scratch:
        async with contextlib.AsyncExitStack() as stack:
            backends: dict[str, TablesBackend] = {}
            for name, path in paths.items():
                folder = Path(scratch) / name
                folder.mkdir()
                backend = TablesBackend(folder, persistent_redis=True, server_path=path)
                await stack.enter_async_context(backend.running())
                backends[name] = backend
            await asyncio.sleep(args.warmup)
            loop = asyncio.get_running_loop()
            started = loop.time()
            cpu_before = {name: backend.cpu() for name, backend in backends.items()}
            commands_before = {
                name: sum((await backend.redis_command_counts()).values())
                for name, backend in backends.items()
            }
            await asyncio.sleep(args.seconds)
            seconds = loop.time() - started
            measured: dict[str, Any] = {}
            for name, backend in backends.items():
                cpu = backend.cpu()
                # INFO itself is one of the commands counted: the read at the start is.
                commands = sum((await backend.redis_command_counts()).values()) - 1
                measured[name] = {
                    "cpu_ms_per_second": {
                        kind: round((cpu[kind] - cpu_before[name][kind]) * 1000 / seconds, 2)
                        for kind in cpu
                    },
                    "redis_commands_per_second": round(
                        (commands - commands_before[name]) / seconds, 1
                    ),
                }
            return measured


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--before", required=True, help="the commit to measure against")
    parser.add_argument("--build", type=build_option(BEFORE, AFTER), action="append", default=[])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds (20)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    record = run_record(
        f"an idle tables replica against {args.before}'s, all idling at once: CPU a second "
        "of each process, Redis commands a second"
    )
    rounds = []
    with compared_builds(REPOSITORY, args.before, args.build) as paths:
        for number in range(args.rounds):
            measured = asyncio.run(_round(paths, args))
            rounds.append(measured)
            for name, figures in measured.items():
                print(
                    f"round {number + 1}: {name} tables "
                    f"{figures['cpu_ms_per_second']['tables']} ms/s, referee "
                    f"{figures['cpu_ms_per_second']['referee']} ms/s, redis "
                    f"{figures['cpu_ms_per_second']['redis']} ms/s; "
                    f"{figures['redis_commands_per_second']} Redis commands/s"
                )
    record["before"] = args.before
    record["builds"] = {name: path or "the working tree" for name, path in paths.items()}
    record["measured_seconds"] = args.seconds
    record["rounds"] = rounds
    record["median"] = {
        name: {
            "tables_cpu_ms_per_second": statistics.median(
                r[name]["cpu_ms_per_second"]["tables"] for r in rounds
            ),
            "redis_commands_per_second": statistics.median(
                r[name]["redis_commands_per_second"] for r in rounds
            ),
        }
        for name in rounds[0]
    }
    print(f"median over {len(rounds)} rounds: {record['median']}")
    print(finish_description(record["machine"]))
    write_figures(record, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
