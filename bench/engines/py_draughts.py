"""py-draughts' ``SimpleEngine`` behind Goti's engine line protocol, to measure Goti against it.

    pip install py-draughts==1.10.1
    python bench/match.py --engine "python bench/engines/py_draughts.py" --movetime 150

Reads ``<english|russian> <FEN>[ movetime=<ms>]`` lines and answers each with a move written
with every landing square, as ``goti engine`` does.  py-draughts lets captures be optional on
its American board; English rules make them compulsory, so the board here asks its move
generator for compulsory captures.  Its engine counts wall-clock time, Goti CPU time: on a
busy machine that favours Goti.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from typing import Any

from goti.rules.fen import Board, format_fen
from goti.rules.position import Position
from goti.rules.squares import square_name

DEFAULT_MOVETIME_MS = 150


def _quiet_logging() -> None:
    with contextlib.suppress(ImportError):
        importlib.import_module("loguru").logger.remove()


def _boards() -> tuple[Any, Any, Any]:
    draughts = importlib.import_module("draughts")
    american = importlib.import_module("draughts.boards.american")

    class EnglishBoard(draughts.AmericanBoard):  # type: ignore[misc, name-defined]
        """The American board with compulsory captures, as the English rules have them."""

        @property
        def legal_moves(self) -> Any:
            return self._legal_moves_from_core(
                american._CORE, max_capture=False, captures_optional=False
            )

    return EnglishBoard, draughts.RussianBoard, draughts.SimpleEngine


def answer(line: str, english_board: Any, russian_board: Any, engine_class: Any) -> str:
    """The engine's move for one request line."""
    variant, fen, *options = line.split()
    movetime_ms = DEFAULT_MOVETIME_MS
    for option in options:
        if option.startswith("movetime="):
            movetime_ms = int(option.partition("=")[2])
    position = Position.from_fen(fen, variant)
    numbered = format_fen(
        Board(position.white, position.black, position.kings, position.turn), algebraic=False
    )
    board = (english_board if variant == "english" else russian_board).from_fen(numbered)
    move = engine_class(depth_limit=40, time_limit=movetime_ms / 1000).get_best_move(board)
    squares = [index + 1 for index in move.square_list]
    capture = bool(getattr(move, "captured_list", None))
    if variant == "russian":
        return (":" if capture else "-").join(square_name(square) for square in squares)
    return ("x" if capture else "-").join(str(square) for square in squares)


def main() -> int:
    _quiet_logging()
    boards = _boards()
    for raw in sys.stdin:
        line = raw.strip()
        if not line:
            continue
        if line == "quit":
            break
        try:
            print(answer(line, *boards), flush=True)
        except (ValueError, IndexError) as error:
            print(f"error: {error}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
