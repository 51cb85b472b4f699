"""Rated games and the ratings players keep: pure decisions and encodings, no I/O.

A player's rating in a variant is one field of the player's hash (``rating_english``,
``rating_russian``), so that a guest removed after its idle days takes its ratings with it.
The field holds the Glicko-2 rating, deviation and volatility at full precision and the
number of rated games, so that the one script that writes a game's new ratings can compare
the old field exactly before it replaces it.

Only a game between two people counts: never one against the computer, never pass-and-play,
whatever the table's ``rated`` flag says.

>>> stored = StoredRating(Rating(1612.5, 95.25, 0.06), 14)
>>> StoredRating.decode(stored.encode()) == stored
True
>>> message = rating_message(game_pb2.VARIANT_ENGLISH, stored)
>>> message.rating, message.deviation, message.provisional, message.games
(1612, 95, False, 14)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from goti.api.v1 import game_pb2, players_pb2, tables_pb2
from goti.ratings import Rating
from goti.tables import seating

VARIANT_NAMES: Final[dict[int, str]] = {
    game_pb2.VARIANT_ENGLISH: "english",
    game_pb2.VARIANT_RUSSIAN: "russian",
}
"""Every variant a player can be rated in, by the name its field and leaderboard carry."""


def variant_name(variant: int) -> str:
    """The name of a variant in its rating field and leaderboard key (English by default)."""
    return VARIANT_NAMES.get(variant, VARIANT_NAMES[game_pb2.VARIANT_ENGLISH])


def rating_field(variant: int) -> str:
    """The player hash's field that holds the player's rating in ``variant``."""
    return f"rating_{variant_name(variant)}"


@dataclass(frozen=True, slots=True)
class StoredRating:
    """A player's rating in one variant as kept, with the rated games that made it."""

    rating: Rating = field(default_factory=Rating)
    games: int = 0

    def encode(self) -> bytes:
        """The field's value: rating, deviation and volatility (each to full precision, so
        that a compare of the old value is exact) and the games, space-separated."""
        kept = self.rating
        return f"{kept.rating!r} {kept.deviation!r} {kept.volatility!r} {self.games}".encode()

    @classmethod
    def decode(cls, value: bytes | None) -> StoredRating:
        """A field's value read back; a new player's rating when there is none."""
        if not value:
            return cls()
        rating, deviation, volatility, games = value.split()
        return cls(Rating(float(rating), float(deviation), float(volatility)), int(games))

    def after(self, rating: Rating) -> StoredRating:
        """This rating replaced by ``rating``, one rated game more."""
        return StoredRating(rating, self.games + 1)


def rating_message(variant: int, stored: StoredRating) -> players_pb2.Rating:
    """A rating as the API shows it: whole numbers, provisional while uncertain."""
    return players_pb2.Rating(
        variant=variant,  # type: ignore[arg-type]
        rating=round(stored.rating.rating),
        deviation=round(stored.rating.deviation),
        provisional=stored.rating.is_provisional,
        games=stored.games,
    )


def leaderboard_score(stored: StoredRating) -> float | None:
    """The player's score on the variant's leaderboard; None while the rating is provisional
    (such a player is left off)."""
    return None if stored.rating.is_provisional else stored.rating.rating


def rated_players(record: tables_pb2.Table) -> tuple[str, str] | None:
    """White's and Black's player ids when the table's game counts for their ratings: a table
    marked rated, both seats held by two different people; else None."""
    if not record.rated or record.opponent == tables_pb2.OPPONENT_PASS_AND_PLAY:
        return None
    if seating.computer_color(record) is not None:
        return None
    white = record.white.player.player_id
    black = record.black.player.player_id
    if not white or not black or white == black:
        return None
    return white, black


def white_score(outcome: game_pb2.Outcome) -> float:
    """White's score in a finished game: 1 for a win, 0.5 for a draw, 0 for a loss."""
    if outcome.winner == game_pb2.COLOR_WHITE:
        return 1.0
    if outcome.winner == game_pb2.COLOR_BLACK:
        return 0.0
    return 0.5
