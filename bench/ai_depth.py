"""How deep Hard sees in its 0.15 s of CPU, and how many nodes a second one core searches
(or another timed level in its budget: ``--level quick``, whose answers should take about 20
ms of CPU).

The positions are those of real openings: the English 3-move ballots and the Russian opening
table of ``bench/openings.json`` (which names their sources).  Where the side to move has a
single legal move (a forced capture), the forced moves are played first, and so are the
opening book's moves: Goti plays both at once, and the depth of a search that had nothing to
choose says nothing.  For each position Hard chooses a move exactly as a player gets it
(``goti.ai.choose_move``) and the depth of its last finished iteration is recorded, with the
nodes searched and the CPU time spent.

Goal: a median depth of 10 plies or more in both variants, for Hard.

    python bench/ai_depth.py                   # every opening of both variants
    python bench/ai_depth.py --openings 40 --budget 0.15 --jobs 2
    python bench/ai_depth.py --level quick     # to bench/results/ai_depth_quick.json

Searches run in ``--jobs`` processes, one per core; the budget is CPU time, so they do not
slow each other down, but a busy machine makes the caches colder: the machine's CPU pressure
before and after is written down.  Figures go to ``bench/results/ai_depth.json`` (for Hard).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from goti.ai import Level, choose_move
from goti.ai.levels import SETTINGS
from goti.ai.opening_book import shipped_book
from goti.benchmarking import cpu_model
from goti.rules.game import Game

BENCH = Path(__file__).resolve().parent
OPENINGS = BENCH / "openings.json"
RESULTS = BENCH / "results"
GOAL_DEPTH = 10


@dataclass(frozen=True)
class Measurement:
    variant: str
    opening_id: str
    fen: str
    depth: int
    nodes: int
    seconds: float
    move: str


def measure(task: tuple[str, str, tuple[str, ...], float, Level]) -> Measurement:
    """The level's search from one opening (in a worker process)."""
    variant, opening_id, moves, budget, level = task
    game = Game(variant)
    for text in moves:
        game.play(text)
    # Forced moves, and the book's: Goti plays both without searching.
    book = shipped_book(variant)
    while not game.is_over:
        if len(game.legal_moves) == 1:
            game.push(game.legal_moves[0])
        elif booked := book.moves(game.position):
            game.play(booked[0].notation)
        else:
            break
    result = choose_move(game.state(), level, time_budget=budget)
    return Measurement(
        variant=variant,
        opening_id=opening_id,
        fen=game.position.fen(),
        depth=result.depth,
        nodes=result.nodes,
        seconds=round(result.seconds, 4),
        move=result.notation,
    )


def openings(variant: str, count: int | None) -> list[dict[str, Any]]:
    """``count`` openings spread evenly over the variant's table (all when None)."""
    table: list[dict[str, Any]] = json.loads(OPENINGS.read_text())[variant]["openings"]
    if count is None or count >= len(table):
        return table
    step = len(table) / count
    return [table[int(i * step)] for i in range(count)]


def summarize(found: Sequence[Measurement]) -> dict[str, Any]:
    depths = sorted(m.depth for m in found)
    rates = sorted(m.nodes / m.seconds for m in found if m.seconds > 0)
    return {
        "positions": len(found),
        "median_depth": statistics.median(depths),
        "mean_depth": round(statistics.fmean(depths), 2),
        "depths": dict(sorted(Counter(depths).items())),
        "share_at_goal": round(sum(d >= GOAL_DEPTH for d in depths) / len(depths), 3),
        "median_nodes": statistics.median(m.nodes for m in found),
        "nodes_per_second_per_core": round(statistics.median(rates)),
        "median_cpu_seconds": statistics.median(m.seconds for m in found),
        "max_cpu_seconds": max(m.seconds for m in found),
    }


def _cpu_pressure() -> str | None:
    try:
        return Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except (OSError, IndexError):
        return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--variant", choices=["english", "russian", "both"], default="both")
    parser.add_argument("--openings", type=int, default=None, help="openings per variant")
    timed = [level.value for level, settings in SETTINGS.items() if settings.depth is None]
    parser.add_argument("--level", choices=timed, default=Level.HARD.value)
    parser.add_argument(
        "--budget", type=float, default=None, help="CPU seconds a move (the level's own)"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    level = Level(args.level)
    if args.budget is None:
        args.budget = SETTINGS[level].cpu_seconds
    if args.out is None:
        suffix = "" if level is Level.HARD else f"_{level.value}"
        args.out = RESULTS / f"ai_depth{suffix}.json"

    variants = ["english", "russian"] if args.variant == "both" else [args.variant]
    tasks = [
        (variant, str(opening["id"]), tuple(opening["moves"]), args.budget, level)
        for variant in variants
        for opening in openings(variant, args.openings)
    ]
    pressure_before = _cpu_pressure()
    started = time.monotonic()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        found = list(pool.map(measure, tasks, chunksize=4))
    wall = time.monotonic() - started

    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv]),
        "machine": {
            "cpu": cpu_model(),
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "implementation": platform.python_implementation(),
            "system": platform.platform(),
            "cpu_pressure_before": pressure_before,
            "cpu_pressure_after": _cpu_pressure(),
        },
        "level": level.value,
        "budget_cpu_seconds": args.budget,
        "jobs": args.jobs,
        "goal_median_depth": GOAL_DEPTH,
        "wall_seconds": round(wall, 1),
    }
    for variant in variants:
        report[variant] = summarize([m for m in found if m.variant == variant])
    report["positions"] = [asdict(m) for m in found]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    for variant in variants:
        part = report[variant]
        print(
            f"{variant:8} median depth {part['median_depth']} (mean {part['mean_depth']}, "
            f"{part['share_at_goal']:.0%} at {GOAL_DEPTH}+) over {part['positions']} positions; "
            f"{part['nodes_per_second_per_core']:,} nodes/s per core"
        )
    print(f"wrote {args.out} ({wall:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
