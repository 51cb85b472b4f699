"""The rules of English and Russian draughts: positions, legal moves, notation, PDN, the game.

A pure library: no I/O, no asyncio, no protobuf.  The referee enforces it, the computer
player searches with it and the client SDK parses and renders with it.

>>> game = Game()
>>> record = game.play("11-15")
>>> record.notation, game.turn.value
('11-15', 'white')
"""

from goti.rules.color import Color
from goti.rules.errors import (
    ActionRefusedError,
    AmbiguousMoveError,
    IllegalMoveError,
    IllegalReason,
    InvalidFenError,
    InvalidMoveError,
    InvalidPdnError,
    Refusal,
)
from goti.rules.game import (
    Game,
    GameState,
    GameWarning,
    InvalidGameStateError,
    MoveRecord,
    Outcome,
    Termination,
)
from goti.rules.moves import Move
from goti.rules.pdn import PdnGame, read_pdn, write_pdn
from goti.rules.perft import perft
from goti.rules.position import LegalMoves, Piece, Position
from goti.rules.squares import Square, parse_square, square_name
from goti.rules.variants import ENGLISH, RUSSIAN, VARIANTS, Variant, find_variant

__all__ = [
    "ENGLISH",
    "RUSSIAN",
    "VARIANTS",
    "ActionRefusedError",
    "AmbiguousMoveError",
    "Color",
    "Game",
    "GameState",
    "GameWarning",
    "IllegalMoveError",
    "IllegalReason",
    "InvalidFenError",
    "InvalidGameStateError",
    "InvalidMoveError",
    "InvalidPdnError",
    "LegalMoves",
    "Move",
    "MoveRecord",
    "Outcome",
    "PdnGame",
    "Piece",
    "Position",
    "Refusal",
    "Square",
    "Termination",
    "Variant",
    "find_variant",
    "parse_square",
    "perft",
    "read_pdn",
    "square_name",
    "write_pdn",
]
