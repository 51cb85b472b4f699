"""The variants Goti plays, as rule parameters, and a registry to find them by name."""

from __future__ import annotations

from dataclasses import dataclass

from .color import Color


@dataclass(frozen=True, slots=True)
class Variant:
    """The rules that differ between draughts variants on the 8x8 board.

    Everything else (compulsory capture with free choice among captures, the Turkish-strike
    rule, the draw rules) is the same for every variant here.
    """

    name: str
    """Short lower-case name, as used on the wire and the command line."""
    title: str
    """Name for people."""
    first_to_move: Color
    """The side that moves first from the start position."""
    men_capture_backwards: bool
    """Men may capture backwards (they always step forwards only)."""
    flying_kings: bool
    """Kings move and capture along whole diagonals rather than one square."""
    crowning_ends_capture: bool
    """A man reaching the far row mid-capture stops there; otherwise it carries on as a king."""
    pdn_game_type: str
    """The PDN ``GameType`` tag value."""
    algebraic: bool
    """Squares are written a1-h8 rather than 1-32."""
    capture_separator: str
    """Between the squares of a capture (``x`` or ``:``); quiet moves always use ``-``."""


ENGLISH = Variant(
    name="english",
    title="English draughts",
    first_to_move=Color.BLACK,
    men_capture_backwards=False,
    flying_kings=False,
    crowning_ends_capture=True,
    pdn_game_type="21",
    algebraic=False,
    capture_separator="x",
)

RUSSIAN = Variant(
    name="russian",
    title="Russian draughts",
    first_to_move=Color.WHITE,
    men_capture_backwards=True,
    flying_kings=True,
    crowning_ends_capture=False,
    pdn_game_type="25",
    algebraic=True,
    capture_separator=":",
)

VARIANTS: dict[str, Variant] = {variant.name: variant for variant in (ENGLISH, RUSSIAN)}
"""Every variant by its name."""

_ALIASES: dict[str, Variant] = {
    "english": ENGLISH,
    "checkers": ENGLISH,
    "american": ENGLISH,
    "draughts": ENGLISH,
    "21": ENGLISH,
    "russian": RUSSIAN,
    "shashki": RUSSIAN,
    "25": RUSSIAN,
}


def find_variant(name: str) -> Variant:
    """The variant called ``name`` (case-insensitive; aliases and PDN GameType numbers work).

    >>> find_variant("Checkers").name
    'english'
    >>> find_variant("25").name
    'russian'
    """
    key = name.strip().lower()
    key = key.split(",", 1)[0]  # a full PDN GameType such as "21,B,8,8,N1,0"
    try:
        return _ALIASES[key]
    except KeyError:
        known = ", ".join(sorted(VARIANTS))
        raise ValueError(f"unknown variant {name!r}: expected one of {known}") from None
