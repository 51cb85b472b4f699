"""A game just past the opening book, for tests of what the search itself does: from the
book's positions the timed levels answer at once, without searching."""

from __future__ import annotations

from goti.ai.opening_book import shipped_book
from goti.rules.game import Game

PLIES: int = 6
"""The book reaches at most a move past an opening of three plies."""


def game_past_the_book(variant: str) -> Game:
    """A game of ``variant`` after its first legal move six times over, out of the book."""
    game = Game(variant)
    for _ in range(PLIES):
        game.push(game.legal_moves[0])
    assert not shipped_book(variant).moves(game.position)
    return game
