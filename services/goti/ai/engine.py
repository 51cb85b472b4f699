"""``goti engine``: the line protocol that lets match harnesses play Goti against other engines.

One request per line on standard input, one answer per line on standard output::

    <variant> <FEN>[ movetime=<ms>][ level=<easy|normal|hard|master|quick>][ moves=<m1>,<m2>,...]

``variant`` is ``english`` or ``russian`` (the aliases of :func:`goti.rules.find_variant`
work too) and the FEN is PDN FEN with numeric or algebraic squares.  The answer is the move
in the variant's standard notation with every landing square (``22x15x8``, ``c3:e5:g7``).
``movetime`` is the CPU time to think in milliseconds (the level's own budget when absent);
the level is Hard unless given.  ``moves`` lists the moves played since the FEN's position,
comma-separated in the same notation: the engine then plays the position after them, seeing
the game as Goti's own levels do (its repetitions and the quiet-move count of the move
limit).  ``quit`` (or the end of input) stops the engine.  A line that
cannot be answered gets ``error: <why>`` and the engine waits for the next one.  Empty lines
and lines starting with ``#`` are ignored.

Without ``moves`` the engine knows only the position it is given, not the game's history, so
it cannot see repetitions or the move-limit clock of the game it plays in.

>>> import io
>>> answers = io.StringIO()
>>> run_engine(io.StringIO("english B:W21-32:B1-12 level=quick movetime=5\\nquit\\n"), answers)
>>> len(answers.getvalue().splitlines())
1
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

from goti.ai.levels import Level
from goti.ai.player import choose_move
from goti.rules.game import Game
from goti.rules.position import Position
from goti.rules.variants import find_variant

_QUIT = "quit"
_OPTIONS = ("movetime", "level", "moves")


@dataclass(frozen=True, slots=True)
class EngineRequest:
    """One parsed request line."""

    position: Position
    level: Level
    movetime_ms: int | None
    moves: tuple[str, ...] = ()
    """The moves played since ``position``, in the variant's notation."""

    def game(self) -> Game:
        """The game to play on: ``position`` with ``moves`` played; raises ``ValueError``
        naming the first move that is not legal."""
        game = Game(self.position.variant, start=self.position)
        for number, move in enumerate(self.moves, start=1):
            try:
                game.play(move)
            except ValueError as error:
                raise ValueError(f"move {number} ({move}) cannot be played: {error}") from None
        return game


def parse_request(line: str) -> EngineRequest:
    """Read a request line; raises ``ValueError`` with a message fit for the ``error:`` answer."""
    words = line.split()
    if len(words) < 2:
        raise ValueError(
            "expected '<variant> <FEN>[ movetime=<ms>][ level=<level>][ moves=<m1>,<m2>,...]'"
        )
    variant = find_variant(words[0])
    fen_words: list[str] = []
    options: dict[str, str] = {}
    for word in words[1:]:
        name, equals, value = word.partition("=")
        if equals and name.lower() in _OPTIONS:
            if name.lower() in options:
                raise ValueError(f"{name} is given twice")
            options[name.lower()] = value
        elif options:
            raise ValueError(f"unexpected {word!r} after the options")
        else:
            fen_words.append(word)
    if not fen_words:
        raise ValueError("the FEN is missing")
    position = Position.from_fen(" ".join(fen_words), variant)
    if not position.is_valid():
        raise ValueError("the FEN describes a position the rules do not allow")
    level = Level.parse(options["level"]) if "level" in options else Level.HARD
    movetime_ms = None
    if "movetime" in options:
        text = options["movetime"]
        if not text.isdigit() or int(text) <= 0:
            raise ValueError(
                f"movetime must be a positive whole number of milliseconds, not {text!r}"
            )
        movetime_ms = int(text)
    moves = tuple(options["moves"].split(",")) if options.get("moves") else ()
    if "" in moves:
        raise ValueError("moves must be moves separated by single commas, with none empty")
    return EngineRequest(position, level, movetime_ms, moves)


def answer(line: str) -> str:
    """The answer line to one request line (without the newline)."""
    try:
        request = parse_request(line)
        game = request.game()
        if game.outcome is not None:
            if game.outcome.winner is None:
                drawn_by = game.outcome.termination.value.replace("_", " ")
                raise ValueError(f"no move to play: the game is drawn ({drawn_by})")
            loser = game.position.turn.value
            raise ValueError(f"no legal move: {loser} to move has lost")
        budget = None if request.movetime_ms is None else request.movetime_ms / 1000
        return choose_move(game.state(), request.level, time_budget=budget).notation
    except ValueError as error:
        message = " ".join(str(error).split())
        return f"error: {message}"


def run_engine(stdin: TextIO, stdout: TextIO) -> None:
    """Answer request lines from ``stdin`` on ``stdout`` until ``quit`` or the end of input."""
    for raw in stdin:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.lower() == _QUIT:
            break
        stdout.write(answer(line) + "\n")
        stdout.flush()


def main() -> int:
    """Run the engine on the process's standard input and output; the exit status."""
    try:
        run_engine(sys.stdin, sys.stdout)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
