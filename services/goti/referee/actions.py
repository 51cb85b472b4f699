"""What the referee does with a game: start it, let a side act on it, write it as PDN.

Pure functions over :mod:`goti.rules`; the servicer translates the wire to and from them.
Every game they are given has passed :func:`load`, now or (:func:`resumed`) when the rules
made its state, so the rules can trust it.  Besides the rules' own errors they raise
:class:`RequestFieldError` for request values over Goti's limits or of the wrong shape, naming
the request field in the caller's terms.

>>> game = start_game(ENGLISH)
>>> play(game, "11-15").notation
'11-15'
>>> act(game, Action.RESIGN, Color.WHITE)
()
>>> game.outcome.termination.name
'RESIGNATION'
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from typing import Final

from goti.referee.consistency import check_game, replay
from goti.rules.color import Color
from goti.rules.game import Game, GameState, MoveRecord
from goti.rules.pdn import write_pdn
from goti.rules.position import Position
from goti.rules.variants import ENGLISH, Variant

MAX_FEN_BYTES: Final = 256
MAX_NOTATION_BYTES: Final = 64
MAX_PDN_TAGS: Final = 32
MAX_PDN_TAG_NAME_BYTES: Final = 32
MAX_PDN_TAG_VALUE_BYTES: Final = 256

_TAG_NAME: Final = re.compile(r"[A-Za-z0-9_]+")
_PDN_DATE: Final = re.compile(r"[0-9?]{4}\.[0-9?]{2}\.[0-9?]{2}")
_CONTROL_CHARACTERS: Final = re.compile(r"[\x00-\x1f\x7f]")


class RequestFieldError(ValueError):
    """A request value the referee will not take; ``field`` names it, ``limit`` is set when
    the value is over a size limit."""

    def __init__(self, message: str, *, field: str, limit: int | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.limit = limit


class Action(enum.Enum):
    """What a side may do to a game besides moving."""

    OFFER_DRAW = "offer_draw"
    """Offer a draw, on its turn, before moving."""
    ACCEPT_DRAW = "accept_draw"
    """Accept the opponent's open draw offer: the game is drawn."""
    DECLINE_DRAW = "decline_draw"
    """Decline the opponent's open draw offer, then move."""
    RESIGN = "resign"
    """Resign, on its turn: the opponent wins."""
    TAKE_BACK = "take_back"
    """Take back its last move and the opponent's reply to it, if there was one."""


def _check_size(text: str, limit: int, field: str) -> None:
    # Characters never take fewer bytes than one, so most texts are cleared without encoding.
    if len(text) > limit or (not text.isascii() and len(text.encode()) > limit):
        raise RequestFieldError(f"{field} is over {limit} bytes", field=field, limit=limit)


def load(state: GameState, *, field: str = "state") -> Game:
    """The game a checked state describes, after the checks that need the rules
    (:func:`goti.referee.consistency.check_game`)."""
    return checked(Game.from_state(state), field=field)


def resumed(state: GameState) -> Game:
    """The game of a state this referee answered with, found again among the
    :class:`~goti.referee.answered.AnsweredStates`: carried on without the checks of
    :func:`load`, which it passed when the rules made it."""
    return Game.from_own_state(state)


def checked(game: Game, *, field: str = "state") -> Game:
    """``game`` (carried on from a state by :meth:`Game.from_state`) once it has passed the
    checks that need the rules (:func:`goti.referee.consistency.check_game`)."""
    check_game(game, field=field)
    return game


def start_game(variant: Variant = ENGLISH, fen: str = "", *, field: str = "fen") -> Game:
    """A new game from the variant's start position, or from ``fen`` when it is not empty."""
    if not fen:
        return Game(variant)
    _check_size(fen, MAX_FEN_BYTES, field)
    return Game(variant, start=Position.from_fen(fen, variant))


def play(
    game: Game, move: str | Sequence[int], by: Color | None = None, *, field: str = "move"
) -> MoveRecord:
    """``by`` (the side to move when None) plays a move written in notation or as a path."""
    if isinstance(move, str):
        _check_size(move, MAX_NOTATION_BYTES, field)
    return game.play(move, by=by)


def act(game: Game, action: Action, by: Color, *, field: str = "state") -> tuple[str, ...]:
    """``by`` does ``action``; returns the moves taken back (last first) for a take-back,
    else nothing.  ``field`` names the game state, should taking back find it corrupt."""
    if action is Action.OFFER_DRAW:
        game.offer_draw(by)
    elif action is Action.ACCEPT_DRAW:
        game.accept_draw(by)
    elif action is Action.DECLINE_DRAW:
        game.decline_draw(by)
    elif action is Action.RESIGN:
        game.resign(by)
    else:
        return take_back(game, by, field=field)
    return ()


def take_back(game: Game, by: Color, *, field: str = "state") -> tuple[str, ...]:
    """Take back ``by``'s last move and the reply to it; the moves taken back, last first."""
    if not game.is_over and game.ply:
        # Taking back rebuilds earlier states by replaying the move list, so the list must
        # be the game's own: check it first, or a forged one would read as an illegal move.
        replay(game.state(), field=field)
    return tuple(game.take_back(by))


def check_pdn_tags(tags: Mapping[str, str], *, field: str = "tags") -> None:
    """Raise :class:`RequestFieldError` unless ``tags`` can be written as PDN tag pairs."""
    if len(tags) > MAX_PDN_TAGS:
        raise RequestFieldError(
            f"{field} has {len(tags)} tags, at most {MAX_PDN_TAGS}", field=field, limit=MAX_PDN_TAGS
        )
    for name, value in tags.items():
        if len(name) > MAX_PDN_TAG_NAME_BYTES or not _TAG_NAME.fullmatch(name):
            raise RequestFieldError(
                f"{field}: a tag name is 1 to {MAX_PDN_TAG_NAME_BYTES} letters, digits or '_', "
                f"not {name[:40]!r}",
                field=field,
            )
        where = f"{field}.{name}"
        _check_size(value, MAX_PDN_TAG_VALUE_BYTES, where)
        if _CONTROL_CHARACTERS.search(value):
            raise RequestFieldError(f"{where} holds a control character", field=where)
        if name == "Date" and not _PDN_DATE.fullmatch(value):
            raise RequestFieldError(
                f"{where} must be YYYY.MM.DD, with '?' for what is unknown, not {value!r}",
                field=where,
            )


def export_pdn(
    game: Game, tags: Mapping[str, str], *, field: str = "state", tags_field: str = "tags"
) -> str:
    """The game as PDN with ``tags``, after checking its move list replays to its state."""
    check_pdn_tags(tags, field=tags_field)
    replay(game.state(), field=field)
    return write_pdn(game, dict(tags))
