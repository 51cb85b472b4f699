"""The root move where the endgame tables cover the position: what the search cannot see.

A table knows the result of every move of a few-piece ending, so the computer plays from it
at the root: a won ending by the move that converts soonest (each conversion, a capture or
a crowning, leaves a position of fewer pieces or more kings, so the win is always carried
out); a drawn one by the search, among the moves that keep the draw.  A lost one is left to
the search alone: repetitions and the move-count draw are not in the tables, and only the
search, which knows the game's history, can find a repetition that saves the game.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from goti.ai.endgames import EndgameTables, Outcome, shipped_tables
from goti.rules.position import Position


class TableVerdict(enum.Enum):
    """What the tables say of the side to move's best move."""

    WIN = "win"
    DRAW = "draw"
    LOSS = "loss"


@dataclass(frozen=True)
class TableChoice:
    """The moves the tables allow at the root, as indexes into ``position.legal_moves``."""

    verdict: TableVerdict
    moves: tuple[int, ...]
    """For a win or a loss, the one move to play; for a draw, every move that keeps it."""
    plies: int
    """For a win or a loss, the plies to conversion, the move included (0 for a draw)."""


def table_choice(position: Position, tables: EndgameTables | None = None) -> TableChoice | None:
    """The tables' choice for the side to move, None where they do not cover the position.

    ``tables`` must be a whole set (the shipped ones by default): a move into a material
    they lack would read as one that ends the game."""
    if tables is None:
        tables = shipped_tables(position.variant)
    if (position.white | position.black).bit_count() > tables.max_pieces:
        return None
    if tables.lookup(position) is None:
        return None
    wins: list[tuple[int, int]] = []
    draws: list[int] = []
    losses: list[tuple[int, int]] = []
    for index, move in enumerate(position.legal_moves):
        reply = tables.lookup(position.push(move))
        # The tables count plies to conversion: a capture or a crowning is one, and the
        # count starts again in the smaller table it leads to.
        converts = bool(move.captured) or move.crowned
        if reply is None:
            # The move ends the game (the opponent's last piece taken): the quickest win.
            wins.append((1, index))
        elif reply.outcome is Outcome.LOSS:
            wins.append((1 if converts else 1 + reply.plies, index))
        elif reply.outcome is Outcome.DRAW:
            draws.append(index)
        else:
            losses.append((1 + reply.plies, index))
    if wins:
        plies, index = min(wins)
        return TableChoice(TableVerdict.WIN, (index,), plies)
    if draws:
        return TableChoice(TableVerdict.DRAW, tuple(draws), 0)
    plies, index = max(losses)
    return TableChoice(TableVerdict.LOSS, (index,), plies)
