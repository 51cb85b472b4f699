"""Two builds of Goti's move path and its floor, in one run, in rounds that take turns.

This machine's speed drifts by a factor of two over a day and by a third within minutes, so a
figure measured at one time cannot be held against one measured at another.  This runs, round
after round, each build's ``bench/tables.py`` (one Redis, one referee, one tables process,
this tree's bots and watchers; ``--server-path`` points the two servers at the build) and
``bench/move_path_floor.py``, rotating their order from round to round, and reports for each
round, then as the median over rounds:

- server CPU per move in the closed loop (tables + referee + Redis), each build against the
  ``--before`` commit's: the figure a change to the path must lower;
- the 10-table open loop's round-trip p50 of each build against the floor's of that round.

    python bench/move_path_compare.py --before d2fc89d                  # 6 rounds
    python bench/move_path_compare.py --before d2fc89d --build compiled=build/mypyc

``--before REV`` is checked out into a temporary git worktree (its ``services`` and
``clients`` folders on the servers' path); ``--build NAME=PATH`` adds a build whose servers
import Goti from PATH (``make compiled`` leaves the compiled wheels in ``build/mypyc``).  The
working tree is always measured, as ``after``.  Figures go to
``bench/results/move_path_compare.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

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
RESULTS: Final = BENCH / "results" / "move_path_compare.json"
FLOOR: Final = "floor"


def _load_arguments(args: argparse.Namespace, output: Path) -> list[str]:
    """The options both benchmarks take alike: the two loops' sizes and the results file."""
    return [
        "--tables",
        str(args.open_tables),
        "--measure",
        str(args.open_seconds),
        "--closed-tables",
        str(args.closed_tables),
        "--closed-seconds",
        str(args.closed_seconds),
        "--output",
        str(output),
    ]


def _tables_run(server_path: str | None, args: argparse.Namespace, output: Path) -> list[str]:
    command = [sys.executable, str(BENCH / "tables.py"), *_load_arguments(args, output)]
    command += ["--anatomy-rounds", "0"]
    return command if server_path is None else [*command, "--server-path", server_path]


def _floor_run(args: argparse.Namespace, output: Path) -> list[str]:
    floor = [sys.executable, str(BENCH / "move_path_floor.py"), *_load_arguments(args, output)]
    return [*floor, "--hop-rounds", "1"]


def _figures(result: dict[str, Any]) -> dict[str, Any]:
    """The closed loop's CPU per move (by process and in all) and the open loop's p50."""
    closed = result["closed_loop"]
    return {
        "closed_loop_moves_per_second": closed["moves_per_second"],
        "server_cpu_ms_per_move": closed["server_cpu_ms_per_move"],
        "open_loop_p50_ms": result["open_loop"][0]["round_trip_ms"]["p50"],
        "perft_leaves_per_cpu_second": [
            result["machine"].get("perft_leaves_per_cpu_second_at_start"),
            result["machine"].get("perft_leaves_per_cpu_second_at_end"),
        ],
    }


def _rounds(args: argparse.Namespace, server_paths: dict[str, str | None]) -> list[Any]:
    names = [*server_paths, FLOOR]
    rounds = []
    with tempfile.TemporaryDirectory(prefix="goti-compare-") as scratch:
        for number in range(args.rounds):
            shift = number % len(names)
            measured: dict[str, Any] = {}
            for name in names[shift:] + names[:shift]:
                output = Path(scratch) / f"{name}_{number}.json"
                command = (
                    _floor_run(args, output)
                    if name == FLOOR
                    else _tables_run(server_paths[name], args, output)
                )
                subprocess.run(command, check=True, cwd=REPOSITORY, stdout=subprocess.DEVNULL)
                measured[name] = _figures(json.loads(output.read_text()))
            rounds.append(_ratios(measured))
            print(_describe_round(number + 1, rounds[-1]), flush=True)
    return rounds


def _ratios(measured: dict[str, Any]) -> dict[str, Any]:
    before_cpu = measured[BEFORE]["server_cpu_ms_per_move"]["total"]
    floor_p50 = measured[FLOOR]["open_loop_p50_ms"]
    builds = [name for name in measured if name not in (BEFORE, FLOOR)]
    return {
        "measured": measured,
        "cpu_per_move_against_before": {
            name: round(measured[name]["server_cpu_ms_per_move"]["total"] / before_cpu, 3)
            for name in builds
        },
        "open_loop_p50_against_floor": {
            name: round(measured[name]["open_loop_p50_ms"] / floor_p50, 3)
            for name in [BEFORE, *builds]
        },
    }


def _describe_round(number: int, round_figures: dict[str, Any]) -> str:
    measured = round_figures["measured"]
    cpu = ", ".join(
        f"{name} {figures['server_cpu_ms_per_move']['total']} ms"
        for name, figures in measured.items()
    )
    p50 = ", ".join(
        f"{name} {figures['open_loop_p50_ms']} ms" for name, figures in measured.items()
    )
    return (
        f"round {number}: CPU/move {cpu}; against before "
        f"{round_figures['cpu_per_move_against_before']}\n"
        f"         10-table p50 {p50}; against the floor "
        f"{round_figures['open_loop_p50_against_floor']}"
    )


def _medians(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    def median_of(part: str) -> dict[str, float]:
        names = rounds[0][part]
        return {name: round(statistics.median(r[part][name] for r in rounds), 3) for name in names}

    return {
        "cpu_per_move_against_before": median_of("cpu_per_move_against_before"),
        "open_loop_p50_against_floor": median_of("open_loop_p50_against_floor"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--before", required=True, help="the commit to measure against")
    parser.add_argument(
        "--build", type=build_option(BEFORE, AFTER, FLOOR), action="append", default=[]
    )
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--open-tables", type=int, default=10)
    parser.add_argument("--open-seconds", type=float, default=15.0)
    parser.add_argument("--closed-tables", type=int, default=16)
    parser.add_argument("--closed-seconds", type=float, default=10.0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    record = run_record(
        f"the move path against {args.before} and the floor: rounds taking turns, "
        "closed-loop server CPU per move and the open loop's round-trip p50"
    )
    with compared_builds(REPOSITORY, args.before, args.build) as server_paths:
        rounds = _rounds(args, server_paths)
    record["before"] = args.before
    record["builds"] = {name: path or "the working tree" for name, path in server_paths.items()}
    record["rounds"] = rounds
    record["median"] = _medians(rounds)
    print(f"median over {len(rounds)} rounds: {record['median']}")
    print(finish_description(record["machine"]))
    write_figures(record, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
