"""The compiled kernel (mypyc) against the Python one, in one run: the search's nodes per
CPU-second and median depth at Hard's 0.15 s a move, perft leaves per CPU-second, the search's
nodes per CPU-second at a fixed depth, and the legal moves a referee lists per CPU-second,
English and Russian.

The compiled modules are the wheels' as ``make compiled`` unpacks them (``build/mypyc``); the
Python ones are the sources.  ``--build NAME=FOLDER`` adds another compiled build to compare
(a folder with only the server's wheel unpacked, say: the search compiled, the rules not).
Each build is measured in child processes of its own, the builds taking turns round after
round, so that the machine's drift falls on all of them; a rate is the best of its rounds, a
median depth that of every search of every round.  All must find the same: the published
perft counts, and the same move, score and node count for every search at a fixed depth (a
build of other code, ``--build`` of an older commit, is named where it differs).

    make compiled && python bench/kernel.py              # 3 rounds
    python bench/kernel.py --rounds 5 --build search-only=build/mypyc-search

Figures go to ``bench/results/kernel.json``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from goti.benchmarking import build_option, finish_description, run_record, write_figures

BENCH = Path(__file__).resolve().parent
REPOSITORY = BENCH.parent
RESULTS = BENCH / "results" / "kernel.json"
OPENINGS = BENCH / "openings.json"
PERFT = {"english": (9, 3963680), "russian": (8, 929905)}
"""Depth and the published count (shared/rules/PERFT.md) of each variant's perft."""
SEARCH_DEPTH = {"english": 12, "russian": 10}
"""The fixed depth of the search from each opening: no clock decides anything."""
SEARCH_OPENINGS = 10
LISTING_OPENINGS = 16
HARD_OPENINGS = 24
PYTHON = "python"
COMPILED = "compiled"


# -- in a child process: one build, every measurement -----------------------------------------


def _opening_states(variant: str, count: int, *, past_the_book: bool = False) -> list[Any]:
    """Game states after ``count`` openings spread over the variant's table, forced moves
    played (a search with one move to choose says nothing); with ``past_the_book``, the
    book's moves too, up to where Hard starts to search."""
    from goti.ai.opening_book import shipped_book  # noqa: PLC0415 (from the child's path)
    from goti.rules.game import Game  # noqa: PLC0415

    table = json.loads(OPENINGS.read_text())[variant]["openings"]
    book = shipped_book(variant)
    step = len(table) / count
    states = []
    for index in range(count):
        game = Game(variant)
        for text in table[int(index * step)]["moves"]:
            game.play(text)
        while not game.is_over:
            if len(game.legal_moves) == 1:
                game.push(game.legal_moves[0])
            elif past_the_book and (booked := book.moves(game.position)):
                game.play(booked[0].notation)
            else:
                break
        states.append(game.state())
    return states


def _perft(variant: str) -> dict[str, Any]:
    from goti.rules.perft import perft  # noqa: PLC0415
    from goti.rules.position import Position  # noqa: PLC0415

    depth, _ = PERFT[variant]
    started = time.process_time()
    leaves = perft(Position.initial(variant), depth)
    return {"leaves": leaves, "cpu_seconds": time.process_time() - started}


def _fixed_depth_search(variant: str) -> dict[str, Any]:
    from goti.ai.search import Searcher, SearchLimits  # noqa: PLC0415

    nodes, seconds, found = 0, 0.0, []
    for state in _opening_states(variant, SEARCH_OPENINGS):
        searcher = Searcher(state.position, history=state.repetition, quiet_plies=state.quiet_plies)
        report = searcher.iterate(SearchLimits(max_depth=SEARCH_DEPTH[variant]))
        nodes += report.nodes
        seconds += report.seconds
        found.append([report.move_index, report.score, report.nodes])
    return {"nodes": nodes, "cpu_seconds": seconds, "found": found}


def _hard(variant: str) -> dict[str, Any]:
    """Hard's move from each opening past the book, as a player gets it: 0.15 s of CPU,
    deepening."""
    from goti.ai import Level, choose_move  # noqa: PLC0415

    states = _opening_states(variant, HARD_OPENINGS, past_the_book=True)
    results = [choose_move(state, Level.HARD) for state in states]
    return {
        "nodes": sum(result.nodes for result in results),
        "cpu_seconds": sum(result.seconds for result in results),
        "depths": [result.depth for result in results],
    }


def _legal_moves(variant: str) -> dict[str, Any]:
    """Every position of a game's first plies, its legal moves listed as the referee lists
    them (a fresh position each time: nothing cached)."""
    from goti.rules.position import Position  # noqa: PLC0415

    positions = [
        (state.position.variant, state.position.white, state.position.black)
        for state in _opening_states(variant, LISTING_OPENINGS)
    ]
    rounds = 2000
    listed = 0
    started = time.process_time()
    for _ in range(rounds):
        for rules, white, black in positions:
            for turn in (rules.first_to_move, rules.first_to_move.opponent):
                listed += len(list(Position(rules, white, black, 0, turn).legal_moves))
    return {"moves": listed, "cpu_seconds": time.process_time() - started}


def measure_here() -> dict[str, Any]:
    """Every measurement, with the build of the kernel that made them."""
    kernel = importlib.import_module("goti.ai.kernel_build")
    figures: dict[str, Any] = {
        "kernel": kernel.describe_kernel_build(),
        "compiled_modules": list(kernel.compiled_kernel_modules()),
    }
    for variant in PERFT:
        figures[variant] = {
            "hard": _hard(variant),
            "perft": _perft(variant),
            "search": _fixed_depth_search(variant),
            "legal_moves": _legal_moves(variant),
        }
    return figures


# -- in the parent: children in turn, the best of their rounds, ratios -------------------------


def _environment(folder: Path | None, builds: dict[str, Path]) -> dict[str, str]:
    """PYTHONPATH with ``folder`` first and no other build's folder."""
    others = [
        entry
        for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if entry and Path(entry).resolve() not in builds.values()
    ]
    path = others if folder is None else [str(folder), *others]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}


def _child(name: str, builds: dict[str, Path]) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, __file__, "--child"],
        capture_output=True,
        text=True,
        env=_environment(builds.get(name), builds),
        cwd=REPOSITORY,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"the {name} child failed:\n{result.stderr}")
    figures: dict[str, Any] = json.loads(result.stdout)
    if bool(figures["compiled_modules"]) != (name != PYTHON):
        raise SystemExit(
            f"the {name} run imported the kernel {figures['kernel']}: run `make compiled` "
            "(and keep a non-editable Goti out of the virtual environment)"
        )
    return figures


def _summary(runs: list[dict[str, Any]], variant: str) -> dict[str, Any]:
    """The fastest round of each measurement, as rates; the median depth of every Hard search
    of every round (Hard's CPU time is its budget: its rate is in the nodes it searched)."""

    def fastest(part: str, counted: str) -> dict[str, Any]:
        found: dict[str, Any] = max(
            (run[variant][part] for run in runs),
            key=lambda figures: figures[counted] / figures["cpu_seconds"],
        )
        return found

    hard, perft = fastest("hard", "nodes"), fastest("perft", "leaves")
    search, moves = fastest("search", "nodes"), fastest("legal_moves", "moves")
    return {
        "hard_nodes_per_cpu_second": round(hard["nodes"] / hard["cpu_seconds"]),
        "hard_median_depth": statistics.median(
            depth for run in runs for depth in run[variant]["hard"]["depths"]
        ),
        "hard_median_depth_per_round": [
            statistics.median(run[variant]["hard"]["depths"]) for run in runs
        ],
        "hard_positions": HARD_OPENINGS,
        "perft_depth": PERFT[variant][0],
        "perft_leaves": perft["leaves"],
        "perft_correct": all(run[variant]["perft"]["leaves"] == PERFT[variant][1] for run in runs),
        "perft_leaves_per_cpu_second": round(perft["leaves"] / perft["cpu_seconds"]),
        "search_depth": SEARCH_DEPTH[variant],
        "search_positions": SEARCH_OPENINGS,
        "search_nodes": search["nodes"],
        "search_nodes_per_cpu_second": round(search["nodes"] / search["cpu_seconds"]),
        "legal_moves_listed_per_cpu_second": round(moves["moves"] / moves["cpu_seconds"]),
        "found": search["found"],
    }


RATES = (
    "hard_nodes_per_cpu_second",
    "perft_leaves_per_cpu_second",
    "search_nodes_per_cpu_second",
    "legal_moves_listed_per_cpu_second",
)


def compare(rounds: int, builds: dict[str, Path]) -> dict[str, Any]:
    names = [PYTHON, *builds]
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for round_number in range(rounds):
        for name in names:
            runs[name].append(_child(name, builds))
        print(f"round {round_number + 1} of {rounds} done", file=sys.stderr)
    figures: dict[str, Any] = {
        "builds": {
            name: {
                "folder": str(builds[name]) if name in builds else "the sources",
                "kernel": runs[name][0]["kernel"],
                "compiled_modules": runs[name][0]["compiled_modules"],
            }
            for name in names
        }
    }
    for variant in PERFT:
        summaries = {name: _summary(runs[name], variant) for name in names}
        python = summaries[PYTHON]
        figures[variant] = {
            name: {key: value for key, value in summary.items() if key != "found"}
            for name, summary in summaries.items()
        }
        # Whether each build found what the sources found: a build of other code (an older
        # commit's, say) may well not.
        figures[variant]["same_search_results"] = {
            name: summary["found"] == python["found"] for name, summary in summaries.items()
        }
        figures[variant]["ratio"] = {
            name: {rate: round(summaries[name][rate] / python[rate], 2) for rate in RATES}
            for name in builds
        }
    return figures


def _print(figures: dict[str, Any]) -> None:
    for variant in PERFT:
        part = figures[variant]
        different = [name for name, same in part["same_search_results"].items() if not same]
        verdict = f"results differ: {', '.join(different)}" if different else "same results"
        print(f"{variant} ({verdict})")
        for name in figures["builds"]:
            build = part[name]
            ratio = part["ratio"].get(name, {})
            times = {rate: f" ({ratio[rate]}x)" if rate in ratio else "" for rate in RATES}
            print(
                f"  {name:12} Hard {build['hard_nodes_per_cpu_second']:,} nodes/s"
                f"{times['hard_nodes_per_cpu_second']}, median depth "
                f"{build['hard_median_depth']}; perft {build['perft_depth']} "
                f"{build['perft_leaves_per_cpu_second']:,} leaves/s"
                f"{times['perft_leaves_per_cpu_second']}"
                f"{'' if build['perft_correct'] else ' WRONG COUNT'}; depth "
                f"{build['search_depth']} {build['search_nodes_per_cpu_second']:,} nodes/s"
                f"{times['search_nodes_per_cpu_second']}; legal moves "
                f"{build['legal_moves_listed_per_cpu_second']:,}/s"
                f"{times['legal_moves_listed_per_cpu_second']}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=3, help="best of this many rounds")
    parser.add_argument("--compiled", type=Path, default=REPOSITORY / "build" / "mypyc")
    parser.add_argument(
        "--build", type=build_option(PYTHON), action="append", default=[], help="NAME=FOLDER, too"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure_here()))
        return 0
    builds = {
        COMPILED: args.compiled.resolve(),
        **{name: Path(folder) for name, folder in args.build},
    }
    for name, folder in builds.items():
        if not (folder / "goti").is_dir():
            parser.error(f"{name}: no compiled modules in {folder}: run `make compiled` first")
    record = run_record(
        "the compiled kernel (mypyc) against the Python one: Hard at 0.15 s, perft, a "
        f"fixed-depth search, legal moves; best of {args.rounds} rounds each, in turn"
    )
    record.update(compare(args.rounds, builds))
    _print(record)
    print(finish_description(record["machine"]))
    write_figures(record, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
