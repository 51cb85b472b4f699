"""Tune the static evaluation's weights by Texel's method, for English and Russian draughts.

Three steps, each its own subcommand, each rerunnable:

1. ``games``: Goti plays itself from the opening sets of ``bench/openings.json`` (Hard against
   Hard, and Hard against Normal, at a few tens of ms a move, colours swapped), writing each
   game's moves and result to ``<data>/games_<variant>.jsonl`` as it ends, so a run can be
   stopped at any time and what it wrote is kept.
2. ``fit``: every quiet position of those games (no capture to make for either side), past
   the first plies after the opening, is labelled with the game's result for the side to
   move.  The evaluation is linear in its weights (:mod:`goti.ai.evaluation` gives each
   position's features), so the fit minimizes the logistic loss
   ``mean((result - sigmoid(K * score / 100)) ** 2)`` first over the scale ``K`` with today's
   weights, then over the weights by gradient descent; the games of a fifth of the openings
   are held out and their loss reported before and after.
3. The weights printed by ``fit`` go into ``goti.ai.evaluation``; ``bench/match.py`` then
   says whether they play better.

Instead of step 1, ``matches`` takes the games of ``bench/match.py``'s result files (played at
match time controls, a stronger game than the tuning games' few tens of ms) into the same
files, so that ``fit`` can learn from them too.

    .venv/bin/python -m bench.tune_evaluation games --variant both --minutes 30
    .venv/bin/python -m bench.tune_evaluation fit --variant both
    .venv/bin/python -m bench.tune_evaluation matches bench/results/ai_match_*hard*.json

Generated data lives under ``/tmp/goti-tune`` unless ``--data`` names another folder: it is
big and can be remade, so it stays out of git.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

from bench.match import GameTask, openings, play_game
from goti.ai import evaluation
from goti.rules.game import Game
from goti.rules.movegen import capturers, count_quiet_moves
from goti.rules.squares import SQUARE_OF_BIT
from goti.rules.variants import Variant, find_variant

DATA = Path("/tmp/goti-tune")
PAIRINGS = (("hard", "hard"), ("hard", "normal"))
"""Who plays whom: Hard against itself for the main line of play, against Normal for
positions where one side went wrong and the game's result shows what that cost."""


def white_result(first_plays: str, first_score: float) -> float:
    """The game's result for White: 1 a White win, 0.5 a draw, 0 a Black win."""
    return first_score if first_plays == "white" else 1.0 - first_score


def generate_games(variant: str, data: Path, deadline: float, movetimes: list[int]) -> int:
    """Play games until ``deadline`` (a ``time.monotonic()`` instant), appending each."""
    table = openings(variant, None)
    out = data / f"games_{variant}.jsonl"
    data.mkdir(parents=True, exist_ok=True)
    played = 0
    round_number = 0
    while time.monotonic() < deadline:
        movetime = movetimes[round_number % len(movetimes)]
        first, second = PAIRINGS[round_number % len(PAIRINGS)]
        for number, opening in enumerate(table):
            if time.monotonic() >= deadline:
                break
            first_plays = "white" if (number + round_number) % 2 else "black"
            task = GameTask(
                variant=variant,
                opening_id=str(opening["id"]),
                opening_moves=tuple(opening["moves"]),
                first_plays=first_plays,
                first=first,
                second=second,
                engine=False,
                movetime_ms=movetime,
                second_movetime_ms=movetime,
                max_plies=300,
                seed=round_number * 100_003 + number,
            )
            result = play_game(task)
            record = {
                "variant": variant,
                "opening": task.opening_id,
                "opening_plies": len(task.opening_moves),
                "pairing": f"{first}-{second}@{movetime}ms",
                "white_result": white_result(first_plays, result.score),
                "termination": result.termination,
                "moves": result.moves,
            }
            with out.open("a") as sink:
                sink.write(json.dumps(record) + "\n")
            played += 1
        round_number += 1
    return played


def collect_match_games(paths: Sequence[Path], data: Path) -> dict[str, int]:
    """Append every game of ``bench/match.py`` result files to the variants' game files, in
    the records ``generate_games`` writes; returns how many each variant got."""
    opening_plies = {
        variant: {str(o["id"]): len(o["moves"]) for o in openings(variant, None)}
        for variant in ("english", "russian")
    }
    data.mkdir(parents=True, exist_ok=True)
    added = {"english": 0, "russian": 0}
    for path in paths:
        report = json.loads(path.read_text())
        records = [
            {
                "variant": game["variant"],
                "opening": game["opening_id"],
                "opening_plies": opening_plies[game["variant"]][str(game["opening_id"])],
                "pairing": f"{path.stem}: {report['first']}-{report['second']}",
                "white_result": white_result(game["first_plays"], game["score"]),
                "termination": game["termination"],
                "moves": game["moves"],
            }
            for game in report.get("games", [])
        ]
        for variant in added:
            chosen = [r for r in records if r["variant"] == variant]
            if chosen:
                with (data / f"games_{variant}.jsonl").open("a") as sink:
                    sink.writelines(json.dumps(r) + "\n" for r in chosen)
                added[variant] += len(chosen)
    return added


FEATURES = (
    "man",
    "king",
    "man_trade",
    "king_trade",
    *(f"square_{s}" for s in range(1, 33)),
    "advance",
    "runaway",
    "mobility",
    "king_square",
    "tempo",
)
"""The evaluation's terms, each the side to move's count less the other side's; the score is
their sum weighted.  ``square_s`` is a man on square ``s`` as White sees the board (a Black
man on ``33 - s``)."""
_INDEX = {name: i for i, name in enumerate(FEATURES)}
Sparse = list[tuple[int, float]]


def current_weights(variant: Variant) -> list[float]:
    """Today's evaluation in the feature basis, to start the fit from and compare against."""
    weights = evaluation.weights_for(variant)
    start = [0.0] * len(FEATURES)
    start[_INDEX["man"]] = weights.man
    start[_INDEX["king"]] = weights.king
    start[_INDEX["man_trade"]] = weights.man_trade
    start[_INDEX["king_trade"]] = weights.king_trade
    for square, value in enumerate(weights.man_table, start=1):
        start[_INDEX[f"square_{square}"]] = value
    start[_INDEX["advance"]] = weights.advance / 16
    start[_INDEX["runaway"]] = weights.runaway
    start[_INDEX["mobility"]] = weights.mobility / 4
    start[_INDEX["king_square"]] = weights.king_square / 4
    start[_INDEX["tempo"]] = weights.tempo
    return start


def _runaway_count(men: int, their_pieces: int, their_kings: int, white: bool) -> float:
    cones = evaluation.WHITE_CONES if white else evaluation.BLACK_CONES
    rows = evaluation.WHITE_RUN_ROWS if white else evaluation.BLACK_RUN_ROWS
    total = 0.0
    candidates = men & rows
    while candidates:
        bit = candidates & -candidates
        candidates ^= bit
        if not cones[bit] & their_pieces:
            square = SQUARE_OF_BIT[bit]
            to_go = (square - 1) // 4 if white else 7 - (square - 1) // 4
            total += (1 - to_go / 10) * (0.5 if their_kings else 1.0)
    return total


def features(variant: Variant, mine: int, theirs: int, kings: int, white: bool) -> Sparse:
    """The position's terms for the side to move (``white`` when White is to move)."""
    flying = variant.flying_kings
    found: dict[int, float] = {}
    my_kings, their_kings = mine & kings, theirs & kings
    my_men, their_men = mine ^ my_kings, theirs ^ their_kings
    pieces = (mine | theirs).bit_count()
    men_diff = my_men.bit_count() - their_men.bit_count()
    king_diff = my_kings.bit_count() - their_kings.bit_count()
    found[_INDEX["man"]] = men_diff
    found[_INDEX["king"]] = king_diff
    found[_INDEX["man_trade"]] = men_diff * (24 - pieces) / 24
    found[_INDEX["king_trade"]] = king_diff * (24 - pieces) / 24
    for men, sign, man_white in ((my_men, 1, white), (their_men, -1, not white)):
        advance = 0
        while men:
            bit = men & -men
            men ^= bit
            square = SQUARE_OF_BIT[bit]
            seen = square if man_white else 33 - square
            index = _INDEX[f"square_{seen}"]
            found[index] = found.get(index, 0) + sign
            advance += 7 - (seen - 1) // 4
        if pieces < 20:
            found[_INDEX["advance"]] = found.get(_INDEX["advance"], 0) + sign * advance * (
                24 - pieces
            )
    found[_INDEX["runaway"]] = _runaway_count(my_men, theirs, their_kings, white) - (
        _runaway_count(their_men, mine, my_kings, not white)
    )
    found[_INDEX["mobility"]] = count_quiet_moves(
        mine, theirs, kings, white, flying
    ) - count_quiet_moves(theirs, mine, kings, not white, flying)
    table = evaluation.king_table(flying)
    found[_INDEX["king_square"]] = sum(
        table[SQUARE_OF_BIT[b] - 1] for b in _bits_of(my_kings)
    ) - sum(table[SQUARE_OF_BIT[b] - 1] for b in _bits_of(their_kings))
    found[_INDEX["tempo"]] = 1
    return [(i, v) for i, v in found.items() if v]


def _bits_of(board: int) -> list[int]:
    bits = []
    while board:
        bit = board & -board
        board ^= bit
        bits.append(bit)
    return bits


def quiet_positions(
    data: Path, variant: Variant, skip_plies: int
) -> tuple[list[tuple[Sparse, float, int]], list[int], list[str]]:
    """Every quiet position of the variant's games: its terms, its result for the side to
    move and the game's number; beside them, today's evaluation of each (a check on the
    terms), and each game's opening."""
    samples: list[tuple[Sparse, float, int]] = []
    today: list[int] = []
    game_openings: list[str] = []
    evaluate = evaluation.make_evaluator(variant)
    backwards, flying = variant.men_capture_backwards, variant.flying_kings
    path = data / f"games_{variant.name}.jsonl"
    for number, line in enumerate(path.read_text().splitlines()):
        record = json.loads(line)
        game_openings.append(str(record["opening"]))
        game = Game(variant)
        for ply, text in enumerate(record["moves"]):
            if ply >= record["opening_plies"] + skip_plies:
                position = game.position
                mine, theirs = position.sides()
                kings, white = position.kings, position.white_to_move
                quiet = not capturers(mine, theirs, kings, white, backwards, flying) and not (
                    capturers(theirs, mine, kings, not white, backwards, flying)
                )
                has_men = (mine | theirs) & ~kings
                if quiet and has_men and count_quiet_moves(mine, theirs, kings, white, flying):
                    result = record["white_result"] if white else 1 - record["white_result"]
                    samples.append((features(variant, mine, theirs, kings, white), result, number))
                    today.append(evaluate(mine, theirs, kings, white))
            game.play(text)
    return samples, today, game_openings


def held_out(opening: str) -> bool:
    """Whether a game from this opening is held out of the fit: a fifth of the openings, so
    that no held-out game is a replay of a fitted one (deterministic levels replay a game
    move for move wherever the same players meet on the same opening)."""
    return zlib.crc32(opening.encode()) % 5 == 0


def _sigmoid(x: float) -> float:
    if x < -500:
        return 0.0
    return 1.0 / (1.0 + math.exp(-x))


def score_of(weights: Sequence[float], terms: Sparse) -> float:
    return sum(weights[i] * v for i, v in terms)


def loss(weights: Sequence[float], samples: list[tuple[Sparse, float, int]], k: float) -> float:
    """The mean squared gap between each result and the win chance its score predicts."""
    total = 0.0
    for terms, result, _ in samples:
        total += (result - _sigmoid(k * score_of(weights, terms) / 100)) ** 2
    return total / len(samples)


def fit_scale(weights: Sequence[float], samples: list[tuple[Sparse, float, int]]) -> float:
    """The ``K`` that fits today's weights best (a golden-section search)."""
    low, high = 0.05, 5.0
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(40):
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        if loss(weights, samples, a) < loss(weights, samples, b):
            high = b
        else:
            low = a
    return (low + high) / 2


def descend(
    start: list[float], samples: list[tuple[Sparse, float, int]], k: float, epochs: int
) -> list[float]:
    """Adam on the loss, with a light pull towards today's weights for terms seen rarely."""
    weights = list(start)
    first = [0.0] * len(weights)
    second = [0.0] * len(weights)
    rate, beta1, beta2, pull = 0.2, 0.9, 0.999, 1e-6
    scale = k / 100
    for epoch in range(1, epochs + 1):
        gradient = [2 * pull * (w - s) for w, s in zip(weights, start, strict=True)]
        share = 1 / len(samples)
        for terms, result, _ in samples:
            chance = _sigmoid(scale * score_of(weights, terms))
            factor = -2 * (result - chance) * chance * (1 - chance) * scale * share
            for i, v in terms:
                gradient[i] += factor * v
        for i, g in enumerate(gradient):
            first[i] = beta1 * first[i] + (1 - beta1) * g
            second[i] = beta2 * second[i] + (1 - beta2) * g * g
            mean, spread = first[i] / (1 - beta1**epoch), second[i] / (1 - beta2**epoch)
            weights[i] -= rate * mean / (math.sqrt(spread) + 1e-12)
    return weights


def fit_variant(name: str, data: Path, skip_plies: int, epochs: int) -> dict[str, object]:
    """Fit one variant's weights; print and return the losses and the weights."""
    variant = find_variant(name)
    samples, today, game_openings = quiet_positions(data, variant, skip_plies)
    start = current_weights(variant)
    gaps = [abs(score_of(start, s[0]) - t) for s, t in zip(samples, today, strict=True)]
    drift = sum(gaps) / len(gaps)
    held_games = {number for number, opening in enumerate(game_openings) if held_out(opening)}
    held = [s for s in samples if s[2] in held_games]
    train = [s for s in samples if s[2] not in held_games]
    k = fit_scale(start, train)
    before = (loss(start, train, k), loss(start, held, k))
    fitted = descend(start, train, k, epochs)
    after = (loss(fitted, train, k), loss(fitted, held, k))
    games = len({s[2] for s in samples})
    print(f"{name}: {games} games, {len(train)} positions to fit, {len(held)} held out")
    print(f"  terms against today's evaluate: mean gap {drift:.1f} hundredths; K = {k:.3f}")
    print(f"  loss fitted {before[0]:.5f} -> {after[0]:.5f}")
    print(f"  loss held out {before[1]:.5f} -> {after[1]:.5f}")
    for feature, old, new in zip(FEATURES, start, fitted, strict=True):
        print(f"  {feature:12} {old:8.2f} -> {new:8.2f}")
    return {
        "games": games,
        "positions_fitted": len(train),
        "positions_held_out": len(held),
        "scale_k": round(k, 4),
        "loss_fitted": [round(before[0], 6), round(after[0], 6)],
        "loss_held_out": [round(before[1], 6), round(after[1], 6)],
        "weights": dict(zip(FEATURES, (round(w, 2) for w in fitted), strict=True)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the folder for generated data")
    commands = parser.add_subparsers(dest="command", required=True)
    games = commands.add_parser("games", help="play the tuning games")
    games.add_argument("--variant", choices=["english", "russian", "both"], default="both")
    games.add_argument("--minutes", type=float, default=30.0, help="wall time, all variants")
    games.add_argument("--movetime", type=int, nargs="+", default=[20, 40], help="ms a move")
    matches = commands.add_parser("matches", help="take the games of match result files")
    matches.add_argument("results", type=Path, nargs="+", help="bench/match.py result files")
    fit = commands.add_parser("fit", help="fit the weights to the games")
    fit.add_argument("--variant", choices=["english", "russian", "both"], default="both")
    fit.add_argument("--skip-plies", type=int, default=6, help="plies after the opening skipped")
    fit.add_argument("--epochs", type=int, default=300)
    fit.add_argument("--out", type=Path, default=None, help="a JSON file for the fitted weights")
    args = parser.parse_args(argv)
    if args.command == "matches":
        added = collect_match_games(args.results, args.data)
        for variant, count in added.items():
            print(f"{variant}: {count} games to {args.data / f'games_{variant}.jsonl'}")
        return 0
    variants = ["english", "russian"] if args.variant == "both" else [args.variant]
    if args.command == "games":
        share = args.minutes * 60 / len(variants)
        for variant in variants:
            deadline = time.monotonic() + share
            played = generate_games(variant, args.data, deadline, args.movetime)
            print(f"{variant}: {played} games to {args.data / f'games_{variant}.jsonl'}")
        return 0
    fitted = {v: fit_variant(v, args.data, args.skip_plies, args.epochs) for v in variants}
    if args.out is not None:
        args.out.write_text(json.dumps(fitted, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
