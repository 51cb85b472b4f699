"""Glicko-2 ratings, as Mark E. Glickman specifies them in "Example of the Glicko-2 system".

The algorithm is the one of that paper (Boston University, the revision of November 30, 2013,
whose step 5 finds the new volatility by the Illinois algorithm), steps 1 to 8, on the Glicko
scale a player sees (1500-centred, 173.7178 Glicko points to one unit of the paper's internal
scale).  One addition, from Glickman's original Glicko system (his paper "The Glicko system",
step 1): a deviation never grows past 350, the deviation of a player with no rating at all, so
a long absence cannot make a rating less certain than none.

Goti rates each game on its own, as a rating period of one game, when the game ends:
`after_game` for one player, `both_after_game` for the pair.  Glickman writes that the system
works best with 10-15 games per player in a period; with one game a period the volatility
moves little, and the deviation, shrinking with each game, carries the uncertainty.

Our own code rather than a library from PyPI: of the Glicko-2 packages there, ``glicko2``
(2.1.0, January 2024, untyped, mutable players) computes step 5 with the player's rating
where the paper has the deviation, and installs a top-level ``tests`` package; ``pyglicko2``
(0.0.1a2, an alpha) is untyped and keeps tau in a class-wide setting; ``glicko2-py`` (0.1.0, a
first release) returns the other end of the volatility's bracket than the paper, takes any
score in [0, 1], has no deviation bound, and shares the import name ``glicko2`` with the first.
The mathematics fits in this one module, checked against the paper's own worked example.

The paper's example, to full precision (the paper rounds as it goes: 1464.06, 151.52, 0.05999):

>>> player = Rating(1500, 200, 0.06)
>>> new = rate(player, [RatedGame(Rating(1400, 30), 1), RatedGame(Rating(1550, 100), 0),
...                     RatedGame(Rating(1700, 300), 0)])
>>> round(new.rating, 2), round(new.deviation, 2), round(new.volatility, 6)
(1464.05, 151.52, 0.059996)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

GLICKO2_SCALE = 173.7178
"""Glicko points to one unit of Glicko-2's internal scale (the paper's step 2)."""
UNRATED_RATING = 1500.0
"""The rating of a new player, and the centre of the scale (the paper's step 1)."""
MAX_DEVIATION = 350.0
"""The deviation of a new player, and the most any rating may have (the Glicko paper's step 1)."""
UNRATED_VOLATILITY = 0.06
"""The volatility of a new player: the value the paper's step 1 and example use."""
DEFAULT_TAU = 0.5
"""The system constant tau, which limits how fast volatility changes: the example's value.

The paper calls 0.3 to 1.2 reasonable, smaller values keeping an improbable result from
moving volatility, and so ratings, by much.  For comparison, lichess sets 0.75 (``tau`` in
``modules/rating/src/main/Glicko.scala`` of lichess-org/lila); Goti keeps the paper's value
until its own games say otherwise.
"""
PROVISIONAL_DEVIATION = 110.0
"""A rating whose deviation is at least this is provisional: not yet a settled measure.

lichess uses the same threshold (``provisionalDeviation = 110``, compared with ``>=``, in
``modules/rating/src/main/Glicko.scala`` of lichess-org/lila), where such a rating is shown
with a question mark.  From 350, a player who meets opponents of settled ratings crosses it
after about a dozen games.
"""
CONVERGENCE_TOLERANCE = 1e-6
"""Epsilon, where the paper's step 5 stops narrowing the volatility's bracket (its value)."""

SCORES = (0.0, 0.5, 1.0)
"""A game's score for the player rated: a loss, a draw, a win."""


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's Glicko-2 rating, on the Glicko scale (1500-centred) that players see.

    The defaults are a new player's.  Raises `ValueError` for a value outside its range.
    """

    rating: float = UNRATED_RATING
    """The estimate of the player's strength."""
    deviation: float = MAX_DEVIATION
    """One standard deviation of that estimate (RD): above 0, at most `MAX_DEVIATION`."""
    volatility: float = UNRATED_VOLATILITY
    """How erratic the player's results have been (sigma): above 0."""

    def __post_init__(self) -> None:
        if not math.isfinite(self.rating):
            raise ValueError(f"a rating must be a finite number, not {self.rating!r}")
        if not 0.0 < self.deviation <= MAX_DEVIATION:
            raise ValueError(
                f"a rating's deviation must be above 0 and at most {MAX_DEVIATION:g}, "
                f"not {self.deviation!r}"
            )
        if not (math.isfinite(self.volatility) and self.volatility > 0.0):
            raise ValueError(
                f"a rating's volatility must be a finite number above 0, not {self.volatility!r}"
            )

    @property
    def is_provisional(self) -> bool:
        """Whether the rating is still uncertain: a deviation of `PROVISIONAL_DEVIATION` or more."""
        return self.deviation >= PROVISIONAL_DEVIATION

    @property
    def mu(self) -> float:
        """The rating on Glicko-2's internal scale (the paper's mu)."""
        return (self.rating - UNRATED_RATING) / GLICKO2_SCALE

    @property
    def phi(self) -> float:
        """The deviation on Glicko-2's internal scale (the paper's phi)."""
        return self.deviation / GLICKO2_SCALE


@dataclass(frozen=True, slots=True)
class RatedGame:
    """One game of a rating period, from the side of the player being rated.

    Raises `ValueError` for a score other than 1 (a win), 0.5 (a draw) or 0 (a loss).
    """

    opponent: Rating
    """The opponent's rating before the period: never one updated within it."""
    score: float
    """1 for a win, 0.5 for a draw, 0 for a loss."""

    def __post_init__(self) -> None:
        if self.score not in SCORES:
            raise ValueError(
                f"a game's score must be 1 (a win), 0.5 (a draw) or 0 (a loss), not {self.score!r}"
            )


class PeriodEstimate(NamedTuple):
    """What a period's games alone say about a player, on Glicko-2's internal scale."""

    variance: float
    """The variance of the rating from the games alone (the paper's v, step 3)."""
    improvement: float
    """How far the games' performance lies from the rating (the paper's delta, step 4)."""


def after_game(
    player: Rating, opponent: Rating, score: float, *, tau: float = DEFAULT_TAU
) -> Rating:
    """The player's rating after one game against the opponent, both as they were before it.

    ``score`` is the player's: 1 for a win, 0.5 for a draw, 0 for a loss.  To rate both
    players of a game, pass each the other's rating from before the game, or use
    `both_after_game`.
    """
    return rate(player, [RatedGame(opponent, score)], tau=tau)


def both_after_game(
    first: Rating, second: Rating, first_score: float, *, tau: float = DEFAULT_TAU
) -> tuple[Rating, Rating]:
    """The two players' ratings after a game between them, each rated against the other's old one.

    ``first_score`` is the first player's (1, 0.5 or 0); the second scored the rest of 1.
    """
    return (
        after_game(first, second, first_score, tau=tau),
        after_game(second, first, 1.0 - first_score, tau=tau),
    )


def rate(player: Rating, games: Sequence[RatedGame], *, tau: float = DEFAULT_TAU) -> Rating:
    """The player's rating at the end of a rating period in which they played ``games``.

    With no games the rating and volatility stay and the deviation grows (the paper's step 6),
    to at most `MAX_DEVIATION`.  ``tau`` is the system constant (see `DEFAULT_TAU`).
    """
    if not (math.isfinite(tau) and tau > 0.0):
        raise ValueError(f"tau must be a finite number above 0, not {tau!r}")
    if not games:
        return Rating(
            player.rating,
            _pre_period_phi(player.phi, player.volatility) * GLICKO2_SCALE,
            player.volatility,
        )
    variance, improvement = estimate(player, games)
    volatility = _new_volatility(player, variance, improvement, tau)
    phi = 1.0 / math.sqrt(1.0 / _pre_period_phi(player.phi, volatility) ** 2 + 1.0 / variance)
    mu = player.mu + phi**2 * improvement / variance
    return Rating(
        UNRATED_RATING + GLICKO2_SCALE * mu,
        # phi is below the pre-period phi, itself capped; min() only absorbs rounding.
        min(GLICKO2_SCALE * phi, MAX_DEVIATION),
        volatility,
    )


def estimate(player: Rating, games: Sequence[RatedGame]) -> PeriodEstimate:
    """The paper's v and delta (steps 3 and 4) for the player's games of one period.

    Raises `ValueError` for an empty period, where neither is defined.
    """
    if not games:
        raise ValueError("a period with no games has no estimate: there are no results")
    information = 0.0
    surprise = 0.0
    for game in games:
        weight = _opponent_weight(game.opponent.phi)
        expected = _expected_score(player.mu, game.opponent.mu, weight)
        information += weight**2 * expected * (1.0 - expected)
        surprise += weight * (game.score - expected)
    variance = 1.0 / information
    return PeriodEstimate(variance, variance * surprise)


def _opponent_weight(opponent_phi: float) -> float:
    """The paper's g(phi): an uncertain opponent's result counts for less."""
    return 1.0 / math.sqrt(1.0 + 3.0 * opponent_phi**2 / math.pi**2)


def _expected_score(mu: float, opponent_mu: float, weight: float) -> float:
    """The paper's E: the score the player is expected to make against the opponent."""
    return 1.0 / (1.0 + math.exp(-weight * (mu - opponent_mu)))


def _pre_period_phi(phi: float, volatility: float) -> float:
    """The paper's phi* (step 6), held to the deviation of a player with no rating."""
    return min(math.sqrt(phi**2 + volatility**2), MAX_DEVIATION / GLICKO2_SCALE)


def _new_volatility(player: Rating, variance: float, improvement: float, tau: float) -> float:
    """The paper's sigma' (step 5): the root of its f, found by the Illinois algorithm."""
    phi_squared = player.phi**2
    log_old = math.log(player.volatility**2)

    def balance(x: float) -> float:
        grown = math.exp(x)
        spread = phi_squared + variance + grown
        return (
            grown * (improvement**2 - phi_squared - variance - grown) / (2.0 * spread**2)
            - (x - log_old) / tau**2
        )

    # The paper's A and B: the two ends of a bracket around the root, closed step by step.
    end_a = log_old
    if improvement**2 > phi_squared + variance:
        end_b = math.log(improvement**2 - phi_squared - variance)
    else:
        steps = 1
        while balance(log_old - steps * tau) < 0.0:
            steps += 1
        end_b = log_old - steps * tau
    balance_a = balance(end_a)
    balance_b = balance(end_b)
    while abs(end_b - end_a) > CONVERGENCE_TOLERANCE:
        guess = end_a + (end_a - end_b) * balance_a / (balance_b - balance_a)
        balance_guess = balance(guess)
        if balance_guess * balance_b <= 0.0:
            end_a, balance_a = end_b, balance_b
        else:
            # Illinois's change to regula falsi: halving the kept end's value stops that end
            # from sticking, so the bracket keeps closing from both sides.
            balance_a /= 2.0
        end_b, balance_b = guess, balance_guess
    return math.exp(end_a / 2.0)
