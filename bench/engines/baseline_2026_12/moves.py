"""A move: its full path of landing squares, what it captured, and whether it crowned."""

from __future__ import annotations

from dataclasses import dataclass

from .squares import Square, square_name
from .variants import Variant


@dataclass(frozen=True, slots=True)
class Move:
    """One whole move.

    ``path`` starts on the moving piece's square and lists every landing square; a quiet move
    has two squares.  ``captured`` lists the captured pieces' squares in the order they were
    jumped.  ``crowned`` says whether the moving man became a king.

    >>> Move((Square(22), Square(15), Square(8)), captured=(Square(18), Square(11)))
    Move(path=(22, 15, 8), captured=(18, 11), crowned=False)
    """

    path: tuple[Square, ...]
    captured: tuple[Square, ...] = ()
    crowned: bool = False

    @property
    def origin(self) -> Square:
        """The square the moving piece starts on."""
        return self.path[0]

    @property
    def target(self) -> Square:
        """The square the moving piece ends on."""
        return self.path[-1]

    @property
    def is_capture(self) -> bool:
        """Whether the move captures."""
        return bool(self.captured)

    def notation(self, variant: Variant) -> str:
        """The move in the variant's standard notation, with every landing square.

        >>> from goti.rules.variants import ENGLISH, RUSSIAN
        >>> jump = Move((Square(22), Square(15), Square(8)), captured=(Square(18), Square(11)))
        >>> jump.notation(ENGLISH)
        '22x15x8'
        >>> Move((Square(22), Square(18))).notation(RUSSIAN)
        'c3-d4'
        """
        names = (
            [square_name(s) for s in self.path] if variant.algebraic else list(map(str, self.path))
        )
        separator = variant.capture_separator if self.captured else "-"
        return separator.join(names)
