"""Where a match's games turned: the first player's score, by a fixed-depth search, along
every game of match results files.

Each game is replayed from its start; from ply 8 on, every other position where the first
player (``--first`` of ``bench/match.py``, Master in the Master-Hard runs) is to move with more
than one legal move is searched to ``--depth`` with the timed levels' search and Master's
contempt, one memory carried through the game.  For each result it reports how many games
ever showed the first player ``--ahead`` (hundredths of a man; half a man by default) and, for
those that did, the ply where it first did: a draw that never got there was level throughout,
one that did was an advantage not converted.

    make compiled
    PYTHONPATH=build/mypyc python bench/game_scores.py --depth 13 --jobs 2 \\
        bench/results/ai_match_master_vs_hard_two_slot_table_english.json \\
        bench/results/ai_match_master_vs_hard_two_slot_table_english_other_openings.json

Figures go to ``bench/results/game_scores_<variant>.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from goti.ai import player
from goti.ai.kernel_build import describe_kernel_build
from goti.ai.levels import Level
from goti.ai.search import SearchLimits
from goti.benchmarking import finish_description, run_record, write_figures
from goti.rules.color import Color
from goti.rules.game import Game

BENCH = Path(__file__).resolve().parent
FIRST_PLY = 8
RESULTS = {1.0: "wins", 0.5: "draws", 0.0: "losses"}


def score_game(game: dict[str, Any], depth: int, megabytes: float) -> list[tuple[int, int]]:
    """(ply, score for the first player) at every other one of its moves from ``FIRST_PLY``."""
    player.limit_search_memory(megabytes)  # a fresh memory for the game
    replayed = Game(game["variant"])
    first = Color(game["first_plays"])
    scores: list[tuple[int, int]] = []
    own_moves = 0
    for ply, text in enumerate(game["moves"]):
        if ply >= FIRST_PLY and replayed.turn is first:
            own_moves += 1
            if own_moves % 2 == 1 and len(replayed.legal_moves) > 1:
                searcher = player.level_searcher(replayed.state(), Level.MASTER)
                report = searcher.iterate(SearchLimits(max_depth=depth))
                scores.append((ply, report.score))
        replayed.play(text)
    return scores


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("games", type=Path, nargs="+", help="match results files")
    parser.add_argument("--depth", type=int, default=13, help="Hard's median depth: 13-14")
    parser.add_argument("--ahead", type=int, default=50)
    parser.add_argument("--memory-mb", type=float, default=128)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    games = [game for path in args.games for game in json.loads(path.read_text())["games"]]
    variants = {game["variant"] for game in games}
    if len(variants) != 1:
        parser.error(f"the files hold games of {len(variants)} variants; give one variant's")
    variant = variants.pop()
    record = run_record("game_scores")
    score = partial(score_game, depth=args.depth, megabytes=args.memory_mb)
    with ProcessPoolExecutor(args.jobs) as pool:
        scored = list(pool.map(score, games))
    by_result: dict[str, dict[str, Any]] = {}
    lines = []
    for game, scores in zip(games, scored, strict=True):
        ahead_at = next((ply for ply, value in scores if value >= args.ahead), None)
        group = by_result.setdefault(RESULTS[game["score"]], {"games": 0, "first_ahead_plies": []})
        group["games"] += 1
        if ahead_at is not None:
            group["first_ahead_plies"].append(ahead_at)
        lines.append(
            {
                "opening_id": game["opening_id"],
                "first_plays": game["first_plays"],
                "score": game["score"],
                "plies": game["plies"],
                "first_ahead_ply": ahead_at,
                "scores": scores,
            }
        )
    for name, group in by_result.items():
        plies = group["first_ahead_plies"]
        group["ever_ahead"] = len(plies)
        median = group["median_first_ahead_ply"] = statistics.median(plies) if plies else None
        spread = f", first at ply {min(plies)}-{max(plies)} (median {median})" if plies else ""
        print(
            f"{name}: {group['games']} games, {len(plies)} with the first player {args.ahead} "
            f"ahead at depth {args.depth}{spread}"
        )
    print(finish_description(record["machine"]))
    record.update(
        files=[str(path) for path in args.games],
        variant=variant,
        depth=args.depth,
        ahead=args.ahead,
        memory_mb=args.memory_mb,
        kernel=describe_kernel_build(),
        results=by_result,
        games=lines,
    )
    write_figures(record, args.out or BENCH / "results" / f"game_scores_{variant}.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
