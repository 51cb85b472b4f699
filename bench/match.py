"""Play a match between two Goti levels, or Goti and any engine speaking the line protocol.

Every opening is played twice with the colours swapped: the English 3-move ballots and the
Russian opening table from ``bench/openings.json`` (which names their sources).  Games go on
under the rules of ``goti.rules.game`` (threefold repetition and the 40-move rule draw) and a
game still running at ``--max-plies`` is scored a draw.

The report gives wins, draws and losses for the first player, its score, and an Elo
difference: ``Elo = -400 log10(1/score - 1)`` (the logistic model), with a 95% interval from
the normal approximation of the mean score over game pairs (each opening with both colours
is one pair, so the interval accounts for an opening that favours one colour); when every
pair scored the same (a clean sweep) that spread is zero, and the Wilson interval over games
gives the bound instead.

    python bench/match.py --first hard --second normal --variant both --openings 20
    python bench/match.py --first hard --engine "goti engine" --movetime 150
    python bench/match.py --first hard --engine "python -m bench.engines.baseline_2026_12" \
        --movetime 150 --second-movetime 600      # the old Hard with four times the time
    python bench/match.py --first hard --engine "python -m bench.engines.baseline_2026_12" \
        --movetime 150 --position-only      # Hard, like the engine, sees the position alone
    python bench/match.py --first master --engine "goti engine" --engine-sees-game
                                            # both see the whole game, as levels in play do

An engine over the line protocol sees only the position, not the game's earlier positions:
it cannot tell a move that repeats one for the third time (a draw) from any other.  Goti's
levels in this process see the whole game unless ``--position-only``; with
``--engine-sees-game`` the engine is sent the game's first position and its moves (the line
protocol's ``moves=``, which ``goti engine`` reads) and sees the whole game too.

The figures go to ``bench/results/ai_match_<first>_vs_<second>.json`` with the date, the
machine and the command line.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from goti.ai import Level, choose_move
from goti.ai.endgames.probing import IncompleteTablesError
from goti.ai.player import use_master_tables
from goti.benchmarking import cpu_model
from goti.rules.color import Color
from goti.rules.game import Game
from goti.rules.moves import Move

BENCH = Path(__file__).resolve().parent
OPENINGS = BENCH / "openings.json"
RESULTS = BENCH / "results"


class Player(Protocol):
    """One side of the match."""

    name: str

    def choose(self, game: Game) -> tuple[Move, int, int]:
        """The move to play, the depth reached and the nodes searched (0 when unknown)."""
        ...

    def close(self) -> None:
        """Release whatever the player holds."""
        ...


@dataclass
class LevelPlayer:
    """Goti at one level, in this process."""

    level: Level
    movetime_ms: int | None
    seed: int
    position_only: bool = False
    """Search from the position alone, as an engine over the line protocol does: no earlier
    positions (repetitions) and no quiet-move count."""
    name: str = ""

    def __post_init__(self) -> None:
        self.name = self.level.value

    def choose(self, game: Game) -> tuple[Move, int, int]:
        self.seed += 1
        budget = None if self.movetime_ms is None else self.movetime_ms / 1000
        seen = Game(game.variant, start=game.position) if self.position_only else game
        result = choose_move(seen.state(), self.level, time_budget=budget, seed=self.seed)
        return result.move, result.depth, result.nodes

    def close(self) -> None:
        pass


class EngineFailedError(RuntimeError):
    """An engine process ended or would not start: the match stops, since its games would
    count as the engine's losses."""


@dataclass
class EnginePlayer:
    """An engine process speaking the line protocol of ``goti engine``."""

    command: str
    movetime_ms: int | None
    sees_game: bool = False
    """Send the game's first position and its moves (``moves=``), not the position alone."""
    name: str = ""
    process: subprocess.Popen[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.name = self.command

    def choose(self, game: Game) -> tuple[Move, int, int]:
        if self.process is None:
            self.process = subprocess.Popen(
                shlex.split(self.command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                bufsize=1,
            )
        assert self.process.stdin is not None and self.process.stdout is not None
        request = self.request_line(game)
        try:
            self.process.stdin.write(request + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            raise EngineFailedError(self._ended(request)) from None
        reply = self.process.stdout.readline()
        if not reply:
            raise EngineFailedError(self._ended(request))
        reply = reply.strip()
        if not reply or reply.startswith("error:"):
            raise ValueError(f"the engine answered {reply!r} to {request!r}")
        return game.position.parse_move(reply), 0, 0

    def request_line(self, game: Game) -> str:
        """The line asking the engine for its move in ``game``."""
        shown = game.start if self.sees_game else game.position
        request = f"{game.variant.name} {shown.fen()}"
        if self.movetime_ms is not None:
            request += f" movetime={self.movetime_ms}"
        if self.sees_game and game.moves:
            request += f" moves={','.join(game.moves)}"
        return request

    def _ended(self, request: str) -> str:
        assert self.process is not None
        status = self.process.wait()
        return f"the engine {self.command!r} ended (status {status}), not answering {request!r}"

    def close(self) -> None:
        if self.process is not None:
            assert self.process.stdin is not None
            try:
                self.process.stdin.write("quit\n")
                self.process.stdin.close()
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
            self.process = None


@dataclass(frozen=True)
class GameTask:
    variant: str
    opening_id: str
    opening_moves: tuple[str, ...]
    first_plays: str
    """The colour the first player takes: 'white' or 'black'."""
    first: str
    second: str
    engine: bool
    movetime_ms: int | None
    second_movetime_ms: int | None
    max_plies: int
    seed: int
    position_only: bool = False
    engine_sees_game: bool = False


@dataclass(frozen=True)
class GameResult:
    variant: str
    opening_id: str
    first_plays: str
    score: float
    """For the first player: 1 win, 0.5 draw, 0 loss."""
    termination: str
    plies: int
    first_depths: list[int]
    second_depths: list[int]
    first_nodes: int
    second_nodes: int
    moves: list[str]
    first_seconds: float
    first_searched_moves: int = 0
    """The first player's moves that searched (a book move searches nothing)."""
    first_search_seconds: float = 0.0
    """CPU seconds of those moves."""


def _player(task: GameTask, spec: str, engine: bool, movetime_ms: int | None, seed: int) -> Player:
    if engine:
        return EnginePlayer(spec, movetime_ms, task.engine_sees_game)
    return LevelPlayer(Level.parse(spec), movetime_ms, seed, task.position_only)


def play_game(task: GameTask) -> GameResult:
    """Play one game of the match (in a worker process)."""
    game = Game(task.variant)
    for text in task.opening_moves:
        game.play(text)
    first = _player(task, task.first, False, task.movetime_ms, task.seed)
    second = _player(task, task.second, task.engine, task.second_movetime_ms, task.seed + 500_000)
    first_color = Color(task.first_plays)
    depths: dict[str, list[int]] = {"first": [], "second": []}
    nodes = Counter[str]()
    termination = "max_plies"
    score = 0.5
    first_seconds = first_search_seconds = 0.0
    first_searched_moves = 0
    try:
        while not game.is_over and game.ply < task.max_plies:
            is_first = game.turn is first_color
            player = first if is_first else second
            started = time.process_time()
            try:
                move, depth, searched = player.choose(game)
            except ValueError as error:
                termination = f"forfeit: {error}"
                score = 0.0 if is_first else 1.0
                break
            if is_first:
                spent = time.process_time() - started
                first_seconds += spent
                if searched:
                    first_searched_moves += 1
                    first_search_seconds += spent
            who = "first" if is_first else "second"
            depths[who].append(depth)
            nodes[who] += searched
            game.push(move)
        else:
            if game.outcome is not None:
                termination = game.outcome.termination.value
                winner = game.outcome.winner
                score = 0.5 if winner is None else (1.0 if winner is first_color else 0.0)
    finally:
        first.close()
        second.close()
    return GameResult(
        variant=task.variant,
        opening_id=task.opening_id,
        first_plays=task.first_plays,
        score=score,
        termination=termination,
        plies=game.ply,
        first_depths=depths["first"],
        second_depths=depths["second"],
        first_nodes=nodes["first"],
        second_nodes=nodes["second"],
        moves=list(game.moves),
        first_seconds=first_seconds,
        first_searched_moves=first_searched_moves,
        first_search_seconds=first_search_seconds,
    )


def elo(score: float) -> float:
    """The logistic Elo difference of a mean score (infinite at 0 and 1)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def wilson(score: float, games: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a mean score over ``games``: finite even at 0% or 100%."""
    if games == 0:
        return 0.0, 1.0
    centre = (score + z * z / (2 * games)) / (1 + z * z / games)
    spread = z * math.sqrt(score * (1 - score) / games + z * z / (4 * games * games))
    spread /= 1 + z * z / games
    return max(centre - spread, 0.0), min(centre + spread, 1.0)


def summarize(results: list[GameResult]) -> dict[str, Any]:
    """Wins, draws, losses, score and Elo with its 95% interval, from the first player's side."""
    wins = sum(1 for r in results if r.score == 1.0)
    draws = sum(1 for r in results if r.score == 0.5)
    losses = sum(1 for r in results if r.score == 0.0)
    games = len(results)
    score = (wins + 0.5 * draws) / games if games else 0.0
    pairs: dict[tuple[str, str], list[float]] = {}
    for r in results:
        pairs.setdefault((r.variant, r.opening_id), []).append(r.score)
    pair_means = [statistics.fmean(scores) for scores in pairs.values()]
    if len(pair_means) > 1 and statistics.stdev(pair_means) > 0:
        error = 1.96 * statistics.stdev(pair_means) / math.sqrt(len(pair_means))
        low, high = max(score - error, 0.0), min(score + error, 1.0)
    else:
        low, high = wilson(score, games)
    return {
        "games": games,
        "wins": wins,
        "draws": draws,
        "losses": losses,
        "score": round(score, 4),
        "elo": _finite(elo(score)),
        "elo_95": [_finite(elo(low)), _finite(elo(high))],
        "score_95": [round(low, 4), round(high, 4)],
        "terminations": dict(Counter(r.termination for r in results)),
    }


def _finite(value: float) -> float | str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return round(value, 1)


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "system": platform.platform(),
    }


def openings(variant: str, count: int | None, shift: int = 0) -> list[dict[str, Any]]:
    """``count`` openings spread evenly over the variant's table (all when None), starting
    ``shift`` places in: a shift of half the spacing picks openings none of the unshifted
    spread holds, for a second match that does not replay the first one's games."""
    table: list[dict[str, Any]] = json.loads(OPENINGS.read_text())[variant]["openings"]
    if count is None or count >= len(table):
        return table
    step = len(table) / count
    return [table[(int(i * step) + shift) % len(table)] for i in range(count)]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--first", default="hard", help="the level of the first player")
    opponent = parser.add_mutually_exclusive_group()
    opponent.add_argument("--second", default="normal", help="the level of the second player")
    opponent.add_argument("--engine", help="a command running an engine for the second player")
    parser.add_argument("--variant", choices=["english", "russian", "both"], default="both")
    parser.add_argument("--openings", type=int, default=None, help="openings per variant")
    parser.add_argument(
        "--opening-shift",
        type=int,
        default=0,
        help="start the spread of openings this many places into the table",
    )
    parser.add_argument("--movetime", type=int, default=None, help="CPU ms per move for both")
    parser.add_argument(
        "--second-movetime",
        type=int,
        default=None,
        help="CPU ms per move for the second player alone (default: --movetime)",
    )
    sight = parser.add_mutually_exclusive_group()
    sight.add_argument(
        "--position-only",
        action="store_true",
        help="Goti's levels see only the position, as an engine over the line protocol does "
        "(no repetitions, no quiet-move count): a match against an engine on equal terms",
    )
    sight.add_argument(
        "--engine-sees-game",
        action="store_true",
        help="send the engine the game's first position and its moves (moves=, as goti engine "
        "reads them), so that it sees the whole game as Goti's levels in this process do",
    )
    parser.add_argument(
        "--master-endgames",
        type=Path,
        default=None,
        help="a folder of endgame tables that Master reads in this process (as the AI "
        "service's GOTI_AI_MASTER_ENDGAMES), e.g. five-piece ones from goti endgames build",
    )
    parser.add_argument("--max-plies", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="the results file")
    return parser


def _tasks(args: argparse.Namespace, variants: list[str]) -> list[GameTask]:
    """Each opening played twice, the first player taking each colour once."""
    second = args.engine or args.second
    second_movetime = args.movetime if args.second_movetime is None else args.second_movetime
    tasks = []
    for variant in variants:
        for number, opening in enumerate(openings(variant, args.openings, args.opening_shift)):
            for first_plays in ("black", "white"):
                tasks.append(
                    GameTask(
                        variant=variant,
                        opening_id=str(opening["id"]),
                        opening_moves=tuple(opening["moves"]),
                        first_plays=first_plays,
                        first=args.first,
                        second=second,
                        engine=args.engine is not None,
                        movetime_ms=args.movetime,
                        second_movetime_ms=second_movetime,
                        max_plies=args.max_plies,
                        position_only=args.position_only,
                        engine_sees_game=args.engine_sees_game,
                        seed=args.seed * 1_000_003 + number * 2 + (first_plays == "white"),
                    )
                )
    return tasks


def _report(
    args: argparse.Namespace, variants: list[str], results: list[GameResult], wall: float
) -> dict[str, Any]:
    """The match's figures, overall and by variant, and every game."""
    second = args.engine or args.second
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv]),
        "machine": machine(),
        "first": args.first,
        "second": second,
        "movetime_ms": args.movetime,
        "second_movetime_ms": (
            args.movetime if args.second_movetime is None else args.second_movetime
        ),
        "position_only": args.position_only,
        "engine_sees_game": args.engine_sees_game,
        "wall_seconds": round(wall, 1),
        "elo_formula": "Elo = -400*log10(1/score - 1); 95% interval: score +- 1.96 * stdev of "
        "the per-opening pair means / sqrt(pairs), converted with the same formula (the Wilson "
        "interval over games when every pair scored alike, as at 0% or 100%)",
        "overall": summarize(results),
    }
    for variant in variants:
        subset = [r for r in results if r.variant == variant]
        depths = [d for r in subset for d in r.first_depths]
        other_depths = [d for r in subset for d in r.second_depths]
        report[variant] = summarize(subset)
        report[variant]["first_median_depth"] = statistics.median(depths) if depths else None
        report[variant]["second_median_depth"] = (
            statistics.median(other_depths) if other_depths else None
        )
        report[variant]["mean_plies"] = round(statistics.fmean(r.plies for r in subset), 1)
        searched = sum(r.first_searched_moves for r in subset)
        report[variant]["first_mean_cpu_seconds_per_searched_move"] = (
            round(sum(r.first_search_seconds for r in subset) / searched, 4) if searched else None
        )
    report["games"] = [asdict(r) for r in results]
    return report


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        master_pieces = use_master_tables(args.master_endgames)  # checked before a game starts
    except IncompleteTablesError as error:
        parser.error(str(error))
    variants = ["english", "russian"] if args.variant == "both" else [args.variant]
    tasks = _tasks(args, variants)
    started = time.monotonic()
    with ProcessPoolExecutor(
        max_workers=args.jobs, initializer=use_master_tables, initargs=(args.master_endgames,)
    ) as pool:
        results = list(pool.map(play_game, tasks))
    wall = time.monotonic() - started
    report = _report(args, variants, results, wall)
    report["master_endgame_pieces"] = master_pieces

    label = "engine" if args.engine else args.second
    out = args.out or RESULTS / f"ai_match_{args.first}_vs_{label}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    for key in ["overall", *variants]:
        part = report[key]
        print(
            f"{key:8} {args.first} vs {label}: +{part['wins']} ={part['draws']} -{part['losses']}"
            f"  score {part['score']:.3f}  Elo {part['elo']} (95%: {part['elo_95'][0]} .. "
            f"{part['elo_95'][1]})"
        )
    print(f"wrote {out} ({wall:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
