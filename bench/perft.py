"""Perft speed: leaf nodes per CPU-second from the start position, with bulk counting.

English to depth 9 and Russian to depth 8, as the published reference figures allow.  When
py-draughts (``pip install py-draughts==1.10.1``) is importable it is measured in the same run
on the same work, so the two are compared on one machine at one moment.  py-draughts lets
captures be optional in its American board, so its English count differs from the published
figure (PERFT.md): its English rate is reported but it is not the same work.

Run: ``python bench/perft.py`` (``make bench`` does).  Figures go to
``bench/results/perft.json``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from goti.rules.perft import perft
from goti.rules.position import Position

RESULTS = Path(__file__).parent / "results" / "perft.json"
PUBLISHED = {("english", 9): 3963680, ("russian", 8): 929905}
GOAL_LEAVES_PER_SECOND = 750_000


def _timed(count: Callable[[], int]) -> tuple[int, float]:
    started = time.process_time()
    nodes = count()
    return nodes, time.process_time() - started


def _best_of(rounds: int, count: Callable[[], int]) -> tuple[int, float]:
    """The fastest of ``rounds`` runs: (nodes, CPU seconds)."""
    return min((_timed(count) for _ in range(rounds)), key=lambda run: run[1])


def _fresh_py_draughts_perft(board_class: Any, depth: int) -> int:
    return _py_draughts_perft(board_class(), depth)


def _py_draughts_perft(board: Any, depth: int) -> int:
    moves = list(board.legal_moves)
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        board.push(move)
        total += _py_draughts_perft(board, depth - 1)
        board.pop()
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()
    try:
        draughts: Any = importlib.import_module("draughts")
    except ImportError:
        draughts = None
    rows = []
    for (variant, depth), expected in PUBLISHED.items():
        start = Position.initial(variant)
        nodes, seconds = _best_of(args.rounds, partial(perft, start, depth))
        row: dict[str, Any] = {
            "variant": variant,
            "depth": depth,
            "nodes": nodes,
            "published": expected,
            "correct": nodes == expected,
            "cpu_seconds": round(seconds, 3),
            "leaves_per_cpu_second": round(nodes / seconds),
        }
        if draughts is not None:
            board_class = draughts.AmericanBoard if variant == "english" else draughts.RussianBoard
            other_nodes, other_seconds = _best_of(
                args.rounds, partial(_fresh_py_draughts_perft, board_class, depth)
            )
            row["py_draughts"] = {
                "version": getattr(draughts, "__version__", "?"),
                "nodes": other_nodes,
                "same_work": other_nodes == expected,
                "cpu_seconds": round(other_seconds, 3),
                "leaves_per_cpu_second": round(other_nodes / other_seconds),
            }
            row["speed_ratio"] = round(
                row["leaves_per_cpu_second"] / row["py_draughts"]["leaves_per_cpu_second"], 2
            )
        rows.append(row)
        verdict = "correct" if row["correct"] else "WRONG"
        line = (
            f"{variant:>8} depth {depth}: {nodes} leaves ({verdict}), "
            f"{seconds:.2f} s CPU, {row['leaves_per_cpu_second']:,} leaves/s "
            f"(goal {GOAL_LEAVES_PER_SECOND:,})"
        )
        if "py_draughts" in row:
            other = row["py_draughts"]
            line += (
                f"; py-draughts {other['leaves_per_cpu_second']:,} leaves/s"
                f"{'' if other['same_work'] else ' (different count: not the same work)'}"
                f", ratio {row['speed_ratio']}x"
            )
        print(line)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "perft from the start position, bulk-counted last ply, best of "
                f"{args.rounds}",
                "command": "python bench/perft.py",
                "when": datetime.now(UTC).isoformat(timespec="seconds"),
                "python": platform.python_version(),
                "machine": platform.machine(),
                "results": rows,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
