"""Two builds of the move path at once, side by side at the same move rate: each one's server
CPU per move, read over the same seconds.

Measured one after the other (``bench/move_path_compare.py``), two builds meet two different
machines: on a slow day this machine's speed moved by half between the start and the end of
one 30-second run, more than any change to the path is worth.  Here each build runs its own
Redis, referee and tables process (``bench/tables.py``'s backend, ``--server-path`` pointing
its two services at the build), both at once, and this process's bots drive both at the same
steady rate: an open loop of ``--tables`` tables a side, each moving every ``--mean-interval``
seconds on average, well under what either serves, so that neither is starved by the other
and both answer every move.  The CPU time each build's processes spend per move is read over
one window for both: whatever the machine does then, it does to both.  Rounds alternate which
build starts first; the ratio of each round and its median over the rounds are reported.

    python bench/move_path_paired.py --before d2fc89d                          # after vs before
    python bench/move_path_paired.py --before d2fc89d --build compiled=build/mypyc
    python bench/move_path_paired.py --before d2fc89d --floor     # and the floor at that load

``--before REV`` is checked out into a temporary git worktree, as ``move_path_compare.py``
does; the working tree is measured as ``after``; ``--build NAME=PATH`` adds a build whose
servers import Goti from PATH; ``--floor`` adds ``bench/move_path_floor.py``'s stand-ins (the
same hops with handlers that do nothing) under the same load, which says how far below
``before`` the machine lets any build go.  Each round pairs ``before`` with every other build
in turn.
Figures go to ``bench/results/move_path_paired.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

from goti.benchmark_bots import Bots, TablesBackend, playing_tables, run_phase
from goti.benchmark_floor import FloorBackend, play_phase
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
RESULTS: Final = BENCH / "results" / "move_path_paired.json"
FLOOR: Final = "floor"
"""The move path with handlers that do nothing (``bench/move_path_floor.py``)."""
CHANNELS: Final = 8
"""Client connections per build's bots."""


async def _side(
    backend: TablesBackend, args: argparse.Namespace, started: asyncio.Barrier
) -> dict[str, Any]:
    """One build's open loop, started together with the other's once both have set up."""
    bots = Bots([backend.tables_target], CHANNELS)
    try:
        async with playing_tables(bots, args.tables, args.watchers) as (tables, recorder):
            await started.wait()
            return await run_phase(
                backend,
                tables,
                recorder,
                mean_interval=args.mean_interval,
                warmup=args.warmup,
                measure=args.seconds,
                idle=0.5,
            )
    finally:
        await bots.close()


async def _floor_side(
    folder: Path, args: argparse.Namespace, started: asyncio.Barrier
) -> dict[str, Any]:
    """The floor's open loop at the same load, started together with the other side's."""
    backend = FloorBackend(folder, persistent_redis=True)
    async with backend.serving(CHANNELS) as channels:
        await started.wait()
        return await play_phase(
            channels,
            args.tables,
            mean_interval=args.mean_interval,
            warmup=args.warmup,
            measure=args.seconds,
            cpu=backend.cpu,
        )


async def _pair(
    names: tuple[str, str], paths: dict[str, str | None], args: argparse.Namespace
) -> dict[str, Any]:
    """Both builds at once; each one's figures."""
    started = asyncio.Barrier(2)

    async def side(name: str, scratch: Path) -> dict[str, Any]:
        folder = scratch / name
        folder.mkdir()
        if name == FLOOR:
            return await _floor_side(folder, args, started)
        backend = TablesBackend(folder, persistent_redis=True, server_path=paths[name])
        async with backend.running() as running:
            return await _side(running, args, started)

    with tempfile.TemporaryDirectory(prefix="goti-paired-") as scratch:
        results = await asyncio.gather(*(side(name, Path(scratch)) for name in names))
    return dict(zip(names, results, strict=True))


def _cpu(figures: dict[str, Any]) -> float:
    total: float = figures["server_cpu_ms_per_move"]["total"]
    return total


def _describe(build: str, figures: dict[str, Any]) -> str:
    cpu = figures["server_cpu_ms_per_move"]
    return (
        f"{build} {cpu['total']} ms (tables {cpu['tables']}, referee {cpu['referee']}, "
        f"redis {cpu['redis']}; {figures['moves_per_second']} moves/s)"
    )


async def _rounds(args: argparse.Namespace, paths: dict[str, str | None]) -> list[Any]:
    others = [name for name in paths if name != BEFORE]
    rounds = []
    for number in range(args.rounds):
        pairs: dict[str, Any] = {}
        for other in others:
            names = (BEFORE, other) if number % 2 == 0 else (other, BEFORE)
            measured = await _pair(names, paths, args)
            pairs[other] = {
                "started_first": names[0],
                "measured": measured,
                "cpu_per_move_against_before": round(
                    _cpu(measured[other]) / _cpu(measured[BEFORE]), 3
                ),
            }
            print(
                f"round {number + 1}: {_describe(BEFORE, measured[BEFORE])}; "
                f"{_describe(other, measured[other])}: "
                f"x{pairs[other]['cpu_per_move_against_before']}",
                flush=True,
            )
        rounds.append(pairs)
    return rounds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--before", required=True, help="the commit to measure against")
    parser.add_argument(
        "--build", type=build_option(BEFORE, AFTER, FLOOR), action="append", default=[]
    )
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--tables", type=int, default=48, help="tables a build (48)")
    parser.add_argument(
        "--mean-interval", type=float, default=0.3, help="mean seconds between a table's moves"
    )
    parser.add_argument("--watchers", type=int, default=2, help="watchers per table (2)")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds (20)")
    parser.add_argument(
        "--floor",
        action="store_true",
        help="pair the commit with the floor too: what the same load costs with handlers that "
        "do nothing (two watchers a table, whatever --watchers says)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    record = run_record(
        f"the move path against {args.before}, side by side at the same move rate: server CPU "
        "per move of both, read over the same window"
    )
    with compared_builds(REPOSITORY, args.before, args.build) as paths:
        if args.floor:
            paths[FLOOR] = None
        rounds = asyncio.run(_rounds(args, paths))
    record["before"] = args.before
    record["builds"] = {name: path or "the working tree" for name, path in paths.items()}
    if args.floor:
        record["builds"][FLOOR] = "bench/move_path_floor.py"
    record["load"] = {
        "tables_per_build": args.tables,
        "mean_interval_seconds": args.mean_interval,
        "watchers_per_table": args.watchers,
        "measured_seconds": args.seconds,
    }
    record["rounds"] = rounds
    record["median_cpu_per_move_against_before"] = {
        name: round(statistics.median(r[name]["cpu_per_move_against_before"] for r in rounds), 3)
        for name in rounds[0]
    }
    print(f"median over {len(rounds)} rounds: {record['median_cpu_per_move_against_before']}")
    print(finish_description(record["machine"]))
    write_figures(record, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
