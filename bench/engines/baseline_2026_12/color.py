"""The two sides."""

from __future__ import annotations

import enum


class Color(enum.Enum):
    """A side of the board.  Same colours in both variants: White starts on 21-32."""

    WHITE = "white"
    BLACK = "black"

    @property
    def opponent(self) -> Color:
        """The other side."""
        return Color.BLACK if self is Color.WHITE else Color.WHITE

    @property
    def letter(self) -> str:
        """``'W'`` or ``'B'``, as in PDN FEN."""
        return "W" if self is Color.WHITE else "B"
