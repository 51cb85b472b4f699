"""The computer's levels and what each one promises a player.

- **Easy** looks a move or so ahead (two plies, then every capture that follows) and picks its
  move with a wide random error on each candidate's score: it often plays well, but it makes
  real mistakes a beginner can punish, such as leaving a man to be taken.  It never plays an
  illegal move and never stalls: it is the cheapest level.
- **Normal** looks four plies ahead (two moves each, then every capture) with a small random
  error that only picks among moves of nearly equal worth: it rarely gives a piece away.
- **Hard** thinks about 0.15 s of CPU time a move on average with the full search and no
  randomness: less where its choice settles early, up to 0.45 s where its best move keeps
  changing or its score falls.
- **Quick** is for the turn timer: a sensible move (the full search) within about 20 ms.
- **Master** is Hard's search with about 1 s of CPU time a move on average, planned the same
  way (up to 3 s), no randomness; it plays on rather than repeat a position where it can
  (a contempt for draws of a quarter of a man).

Hard, Master and Quick play the first moves out of the standard openings from the opening
book (:mod:`goti.ai.opening_book`, a random pick between two moves where the book has two),
and consult the endgame tables at the root and at the search's leaves.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Level(enum.Enum):
    """How strongly the computer plays."""

    EASY = "easy"
    """A move or so ahead, with real mistakes."""
    NORMAL = "normal"
    """Four plies ahead; rarely gives a piece away."""
    HARD = "hard"
    """About 0.15 s of CPU a move on average (at most 0.45 s), ten plies or more."""
    QUICK = "quick"
    """A sensible move within about 20 ms, for a player whose time ran out."""
    MASTER = "master"
    """Hard's search with about 1 s of CPU a move on average (at most 3 s): the strongest."""

    @classmethod
    def parse(cls, text: str) -> Level:
        """A level from its name, any case (raises ``ValueError`` naming the choices)."""
        try:
            return cls(text.strip().lower())
        except ValueError:
            names = ", ".join(level.value for level in cls)
            raise ValueError(f"unknown level {text!r}: expected one of {names}") from None


@dataclass(frozen=True, slots=True)
class LevelSettings:
    """How a level searches and chooses."""

    depth: int | None
    """A fixed depth, every root move scored exactly; None for iterative deepening on time."""
    cpu_seconds: float
    """The CPU budget of a move: the target for a timed level, a safety cap for a fixed one."""
    noise: int
    """The spread (standard deviation, hundredths of a man) of the error added to each root
    move's score before choosing; 0 plays the best move found."""
    accepts_level_draws: bool
    """Also accepts a draw in a level, quiet position late in the game, not only when losing."""
    most_cpu_seconds: float | None = None
    """For a timed level that plans its time: ``cpu_seconds`` is then a typical move's, and a
    search whose best move keeps changing may take up to this.  None: every move the same."""
    contempt: int = 0
    """How much worse than level (hundredths of a man) the search values a draw by repetition
    or by the move limit for the side it plays: above 0, it plays on where a line it can
    choose is worth at least that, instead of repeating."""


MASTER_CONTEMPT = 25
"""A quarter of a man: Master plays on rather than repeat unless every other line it sees
costs it more than that."""

SETTINGS: dict[Level, LevelSettings] = {
    Level.EASY: LevelSettings(depth=2, cpu_seconds=0.1, noise=130, accepts_level_draws=False),
    Level.NORMAL: LevelSettings(depth=4, cpu_seconds=0.5, noise=6, accepts_level_draws=False),
    Level.HARD: LevelSettings(
        depth=None, cpu_seconds=0.15, noise=0, accepts_level_draws=True, most_cpu_seconds=0.45
    ),
    Level.QUICK: LevelSettings(depth=None, cpu_seconds=0.012, noise=0, accepts_level_draws=False),
    Level.MASTER: LevelSettings(
        depth=None,
        cpu_seconds=1.0,
        noise=0,
        accepts_level_draws=True,
        most_cpu_seconds=3.0,
        contempt=MASTER_CONTEMPT,
    ),
}
"""Each level's settings."""
