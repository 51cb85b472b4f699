"""Player ratings: Glicko-2, updated once when a rated game ends.

A pure library like the rules (no I/O, no asyncio, no protobuf); the matchmaking keeps the
ratings, per player and variant, and calls it.

>>> winner, loser = both_after_game(Rating(), Rating(), 1)
>>> round(winner.rating), round(loser.rating), winner.is_provisional
(1662, 1338, True)
"""

from goti.ratings.glicko2 import (
    DEFAULT_TAU,
    MAX_DEVIATION,
    PROVISIONAL_DEVIATION,
    UNRATED_RATING,
    UNRATED_VOLATILITY,
    PeriodEstimate,
    RatedGame,
    Rating,
    after_game,
    both_after_game,
    estimate,
    rate,
)

__all__ = [
    "DEFAULT_TAU",
    "MAX_DEVIATION",
    "PROVISIONAL_DEVIATION",
    "UNRATED_RATING",
    "UNRATED_VOLATILITY",
    "PeriodEstimate",
    "RatedGame",
    "Rating",
    "after_game",
    "both_after_game",
    "estimate",
    "rate",
]
