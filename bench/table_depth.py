"""The search's nodes and CPU time to a fixed depth along played games, one search memory kept
from move to move as the computer keeps it in a game: what the transposition table saves a
search of Master's length, build against build.

Each game of a match results file (``bench/results/ai_match_*.json``) is replayed from its
start; from ply 10 to ply 43, every position at an even ply (the side that moved first,
whoever played it) with more than one legal move is searched to ``--depth`` as Master
searches, the game's memory (``--memory-mb``, the AI service's ``GOTI_AI_SEARCH_MEMORY_MB``)
carried from one to the next.  Each build runs in a child process of its own, the builds
taking turns game by game so that the machine's drift falls on all of them.  Tables that keep
different entries change the moves chosen, so moves are not compared; a build that needs fewer
nodes and less CPU to the same depth has its time left to search deeper.

    make compiled
    python bench/table_depth.py --build two-slot=build/mypyc --build before=/tmp/mypyc-before \\
        --games bench/results/ai_match_master_vs_hard_refitted_russian.json --depth 17

Figures go to ``bench/results/table_depth_<variant>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from goti.benchmarking import build_option, finish_description, run_record, write_figures

BENCH = Path(__file__).resolve().parent
REPOSITORY = BENCH.parent
FIRST_PLY = 10
LAST_PLY = 43


def search_game(moves: list[str], variant: str, depth: int, megabytes: float) -> dict[str, Any]:
    """In a child: one game's searches, one memory carried from each to the next."""
    from goti.ai import player  # noqa: PLC0415 (from the child's path)
    from goti.ai.kernel_build import describe_kernel_build  # noqa: PLC0415
    from goti.ai.levels import SETTINGS, Level  # noqa: PLC0415
    from goti.ai.search import SearchLimits  # noqa: PLC0415
    from goti.rules.game import Game  # noqa: PLC0415

    player.limit_search_memory(megabytes)  # a fresh memory for the game
    contempt = SETTINGS[Level.MASTER].contempt
    game = Game(variant)
    seconds = 0.0
    nodes = searches = 0
    for ply, text in enumerate(moves[: LAST_PLY + 1]):
        if ply >= FIRST_PLY and ply % 2 == 0 and len(game.legal_moves) > 1:
            # The private helper rather than player.level_searcher: builds from before that
            # function was added must run this too.
            searcher = player._searcher(game.state(), timed=True, contempt=contempt)
            started = time.thread_time()
            report = searcher.iterate(SearchLimits(max_depth=depth))
            seconds += time.thread_time() - started
            nodes += report.nodes
            searches += 1
        game.play(text)
    return {
        "seconds": seconds,
        "nodes": nodes,
        "searches": searches,
        "kernel": describe_kernel_build(),
    }


def _child(folder: str, game: dict[str, Any], depth: int, megabytes: float) -> dict[str, Any]:
    request = json.dumps({"moves": game["moves"], "variant": game["variant"]})
    result = subprocess.run(
        [sys.executable, __file__, "--child", str(depth), str(megabytes)],
        input=request,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": folder},
        cwd=REPOSITORY,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"the child of {folder} failed:\n{result.stderr}")
    figures: dict[str, Any] = json.loads(result.stdout)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--build", type=build_option(), action="append", default=[])
    parser.add_argument("--games", type=Path, help="a match results file")
    parser.add_argument("--count", type=int, default=6, help="its first this many games")
    parser.add_argument("--depth", type=int, default=17, help="Master's median depth: 16-18")
    parser.add_argument("--memory-mb", type=float, default=128)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.child:
        request = json.loads(sys.stdin.read())
        figures = search_game(
            request["moves"], request["variant"], int(args.child[0]), float(args.child[1])
        )
        print(json.dumps(figures))
        return 0
    if len(args.build) < 1 or args.games is None:
        parser.error("name at least one --build NAME=FOLDER and the --games file")
    games = json.loads(args.games.read_text())["games"][: args.count]
    variant = games[0]["variant"]
    record = run_record("table_depth")
    totals: dict[str, dict[str, Any]] = {
        name: {"seconds": 0.0, "nodes": 0, "searches": 0} for name, _ in args.build
    }
    kernels: dict[str, str] = {}
    for game in games:
        for name, folder in args.build:
            figures = _child(folder, game, args.depth, args.memory_mb)
            kernels[name] = figures["kernel"]
            for part in ("seconds", "nodes", "searches"):
                totals[name][part] += figures[part]
    first = args.build[0][0]
    first_seconds, first_nodes = totals[first]["seconds"], totals[first]["nodes"]
    for name, _ in args.build:
        total = totals[name]
        total["seconds_to_first"] = round(total["seconds"] / first_seconds, 3)
        total["nodes_to_first"] = round(total["nodes"] / first_nodes, 3)
        total["seconds"] = round(total["seconds"], 2)
        print(
            f"{name}: {total['searches']} searches to depth {args.depth}, "
            f"{total['seconds']:.1f} s of CPU ({total['seconds_to_first']:.3f} of {first}'s), "
            f"{total['nodes']:,} nodes ({total['nodes_to_first']:.3f} of {first}'s)"
        )
    print(finish_description(record["machine"]))
    record.update(
        games=str(args.games),
        count=len(games),
        variant=variant,
        depth=args.depth,
        memory_mb=args.memory_mb,
        builds=dict(args.build),
        kernels=kernels,
        totals=totals,
    )
    write_figures(record, args.out or BENCH / "results" / f"table_depth_{variant}.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
