"""Zobrist keys: a 64-bit hash of a position, updated move by move during the search.

Every (colour, kind, square) has a random key and a position's hash is the XOR of the keys of
its pieces, plus one more key when White is to move.  A move changes the hash by XOR-ing out
what left and in what arrived, so the search never recomputes it from scratch.  The keys come
from a fixed seed: the same position has the same hash in every process, which keeps searches
reproducible.
"""

from __future__ import annotations

import random
from typing import Final

from .squares import BIT_OF_SQUARE

_KEYS: Final = random.Random(0x60717A1)


def _table() -> dict[int, int]:
    return {BIT_OF_SQUARE[s]: _KEYS.getrandbits(64) for s in range(1, 33)}


BLACK_MEN: Final = _table()
WHITE_MEN: Final = _table()
BLACK_KINGS: Final = _table()
WHITE_KINGS: Final = _table()
WHITE_TO_MOVE: Final = _KEYS.getrandbits(64)

MEN_BY_SIDE: Final = (BLACK_MEN, WHITE_MEN)
"""Indexed by ``white`` (False, True): the men keys of that side."""
KINGS_BY_SIDE: Final = (BLACK_KINGS, WHITE_KINGS)
"""Indexed by ``white`` (False, True): the kings keys of that side."""


def zobrist_hash(white: int, black: int, kings: int, white_to_move: bool) -> int:
    """The hash of a position given by absolute bitboards."""
    value = WHITE_TO_MOVE if white_to_move else 0
    for pieces, men_keys, king_keys in (
        (white, WHITE_MEN, WHITE_KINGS),
        (black, BLACK_MEN, BLACK_KINGS),
    ):
        while pieces:
            bit = pieces & -pieces
            pieces ^= bit
            value ^= king_keys[bit] if kings & bit else men_keys[bit]
    return value
