"""The one mapping between the ``goti.api.v1`` messages and the rules library.

Servicers and the client SDK cross between protobuf and :mod:`goti.rules` here and nowhere
else.  Going to protobuf cannot fail.  Coming from protobuf checks what it reads: a message
that names no valid value raises :class:`InvalidFieldError`, and a game state the rules could
not have produced raises :class:`~goti.rules.game.InvalidGameStateError`; both are
``ValueError`` subclasses whose ``field`` is the dotted path of the culprit in the request
(``state.position.turn``), ready for an INVALID_ARGUMENT answer.

:func:`rules_error_status` maps every error of the rules library to the
:class:`~goti.api.error_status.ErrorStatus` Goti sends for it.

>>> from goti.rules.game import Game
>>> game = Game()
>>> _ = game.play("11-15")
>>> message = game_state_to_proto(game.state())
>>> message.moves[:], game_state_from_proto(message) == game.state()
(['11-15'], True)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from goti.api.error_status import FIELD, MOVES_TO_WAIT, ErrorStatus, reason_value
from goti.api.v1 import errors_pb2, game_pb2
from goti.rules.color import Color
from goti.rules.errors import (
    ActionRefusedError,
    AmbiguousMoveError,
    IllegalMoveError,
    InvalidFenError,
    InvalidMoveError,
    InvalidPdnError,
)
from goti.rules.game import (
    Game,
    GameState,
    GameWarning,
    InvalidGameStateError,
    MoveRecord,
    Outcome,
    PositionKey,
    Termination,
    position_key,
)
from goti.rules.moves import Move
from goti.rules.position import Position
from goti.rules.squares import Square, from_square_mask, to_square_mask
from goti.rules.variants import ENGLISH, RUSSIAN, Variant

MAX_PATH_SQUARES: Final = 13
"""The longest path a move can have: a start and twelve captures."""


class InvalidFieldError(ValueError):
    """A message field that holds no valid value; ``field`` is its dotted path."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


# -- enums ----------------------------------------------------------------------------------

_VARIANTS: Final[dict[str, game_pb2.Variant.ValueType]] = {
    ENGLISH.name: game_pb2.VARIANT_ENGLISH,
    RUSSIAN.name: game_pb2.VARIANT_RUSSIAN,
}
_VARIANT_OF_VALUE: Final[dict[int, Variant]] = {
    game_pb2.VARIANT_ENGLISH: ENGLISH,
    game_pb2.VARIANT_RUSSIAN: RUSSIAN,
}
_COLORS: Final[dict[Color, game_pb2.Color.ValueType]] = {
    Color.WHITE: game_pb2.COLOR_WHITE,
    Color.BLACK: game_pb2.COLOR_BLACK,
}
_COLOR_OF_VALUE: Final[dict[int, Color]] = {value: color for color, value in _COLORS.items()}
_TERMINATIONS: Final[dict[Termination, game_pb2.Termination.ValueType]] = {
    Termination.NO_PIECES: game_pb2.TERMINATION_NO_PIECES,
    Termination.NO_MOVES: game_pb2.TERMINATION_NO_MOVES,
    Termination.RESIGNATION: game_pb2.TERMINATION_RESIGNATION,
    Termination.THREEFOLD_REPETITION: game_pb2.TERMINATION_THREEFOLD_REPETITION,
    Termination.MOVE_LIMIT: game_pb2.TERMINATION_MOVE_LIMIT,
    Termination.AGREEMENT: game_pb2.TERMINATION_AGREEMENT,
}
_TERMINATION_OF_VALUE: Final[dict[int, Termination]] = {
    value: termination for termination, value in _TERMINATIONS.items()
}
_DECISIVE: Final = frozenset({Termination.NO_PIECES, Termination.NO_MOVES, Termination.RESIGNATION})
_WARNINGS: Final[dict[GameWarning, game_pb2.GameWarning.ValueType]] = {
    GameWarning.REPETITION: game_pb2.GAME_WARNING_REPETITION,
    GameWarning.MOVE_LIMIT_NEAR: game_pb2.GAME_WARNING_MOVE_LIMIT_NEAR,
}
_WARNING_OF_VALUE: Final[dict[int, GameWarning]] = {
    value: warning for warning, value in _WARNINGS.items()
}


def _enum_error(field: str, value: int, names: Iterable[str]) -> InvalidFieldError:
    return InvalidFieldError(
        f"{field} is {value}, which is not one of {', '.join(names)}", field=field
    )


def variant_to_proto(variant: Variant) -> game_pb2.Variant.ValueType:
    """The wire value of a variant."""
    return _VARIANTS[variant.name]


def variant_from_proto(
    value: int, *, field: str = "variant", default: Variant | None = None
) -> Variant:
    """The variant a wire value names; VARIANT_UNSPECIFIED gives ``default`` when there is one."""
    if value == game_pb2.VARIANT_UNSPECIFIED and default is not None:
        return default
    try:
        return _VARIANT_OF_VALUE[value]
    except KeyError:
        raise _enum_error(field, value, ("VARIANT_ENGLISH", "VARIANT_RUSSIAN")) from None


def color_to_proto(color: Color | None) -> game_pb2.Color.ValueType:
    """The wire value of a side; None (no side: a draw, no offer) is COLOR_UNSPECIFIED."""
    return game_pb2.COLOR_UNSPECIFIED if color is None else _COLORS[color]


def color_from_proto(value: int, *, field: str) -> Color:
    """The side a wire value names; COLOR_UNSPECIFIED is refused."""
    try:
        return _COLOR_OF_VALUE[value]
    except KeyError:
        raise _enum_error(field, value, ("COLOR_WHITE", "COLOR_BLACK")) from None


def optional_color_from_proto(value: int, *, field: str) -> Color | None:
    """The side a wire value names, or None for COLOR_UNSPECIFIED."""
    if value == game_pb2.COLOR_UNSPECIFIED:
        return None
    return color_from_proto(value, field=field)


def termination_to_proto(termination: Termination) -> game_pb2.Termination.ValueType:
    """The wire value of a termination."""
    return _TERMINATIONS[termination]


def termination_from_proto(value: int, *, field: str) -> Termination:
    """The termination a wire value names; TERMINATION_UNSPECIFIED is refused."""
    try:
        return _TERMINATION_OF_VALUE[value]
    except KeyError:
        names = (game_pb2.Termination.Name(v) for v in _TERMINATIONS.values())
        raise _enum_error(field, value, names) from None


def warnings_to_proto(warnings: Iterable[GameWarning]) -> list[game_pb2.GameWarning.ValueType]:
    """The wire values of warnings, in a fixed order (the order of the wire enum)."""
    return sorted(_WARNINGS[warning] for warning in warnings)


def warnings_from_proto(values: Iterable[int], *, field: str) -> frozenset[GameWarning]:
    """The warnings wire values name; GAME_WARNING_UNSPECIFIED and unknown values are refused."""
    found = set()
    for index, value in enumerate(values):
        try:
            found.add(_WARNING_OF_VALUE[value])
        except KeyError:
            names = (game_pb2.GameWarning.Name(v) for v in _WARNINGS.values())
            raise _enum_error(f"{field}[{index}]", value, names) from None
    return frozenset(found)


# -- positions and moves --------------------------------------------------------------------


def position_to_proto(position: Position) -> game_pb2.Position:
    """A position as square masks and the side to move."""
    return game_pb2.Position(
        white=to_square_mask(position.white),
        black=to_square_mask(position.black),
        kings=to_square_mask(position.kings),
        turn=color_to_proto(position.turn),
    )


def _position_of_masks(
    white: int, black: int, kings: int, turn: int, variant: Variant, field: str
) -> Position:
    position = Position(
        variant,
        from_square_mask(white),
        from_square_mask(black),
        from_square_mask(kings),
        color_from_proto(turn, field=f"{field}.turn"),
    )
    if white & black:
        raise InvalidFieldError(f"{field}: white and black share squares", field=f"{field}.black")
    if kings & ~(white | black):
        raise InvalidFieldError(f"{field}: a king stands where no piece is", field=f"{field}.kings")
    for color, mask in ((Color.WHITE, white), (Color.BLACK, black)):
        if mask.bit_count() > 12:
            raise InvalidFieldError(
                f"{field}: {color.value} has {mask.bit_count()} pieces, at most 12",
                field=f"{field}.{color.value}",
            )
    if not position.is_valid():
        raise InvalidFieldError(
            f"{field}: a man stands on its own crowning row (it would be a king)",
            field=f"{field}.kings",
        )
    return position


def position_from_proto(message: game_pb2.Position, variant: Variant, *, field: str) -> Position:
    """The position of square masks, checked to be one the rules allow."""
    return _position_of_masks(
        message.white, message.black, message.kings, message.turn, variant, field
    )


def board_to_proto(position: Position) -> game_pb2.Board:
    """A position as an app draws it: PDN FEN and square masks."""
    return game_pb2.Board(
        fen=position.fen(),
        white=to_square_mask(position.white),
        black=to_square_mask(position.black),
        kings=to_square_mask(position.kings),
        turn=color_to_proto(position.turn),
    )


def board_from_proto(
    message: game_pb2.Board, variant: Variant, *, field: str = "board"
) -> Position:
    """The position of a board's square masks (its FEN, which says the same, is not read)."""
    return _position_of_masks(
        message.white, message.black, message.kings, message.turn, variant, field
    )


def _squares(values: Iterable[int], *, field: str) -> tuple[Square, ...]:
    squares = []
    for index, value in enumerate(values):
        if not 1 <= value <= 32:
            raise InvalidFieldError(
                f"{field}[{index}] is {value}: squares are 1-32", field=f"{field}[{index}]"
            )
        squares.append(Square(value))
    return tuple(squares)


def move_to_proto(move: Move, variant: Variant) -> game_pb2.Move:
    """A move with its path, captures, crowning and notation."""
    return game_pb2.Move(
        path=move.path,
        captured=move.captured,
        crowned=move.crowned,
        notation=move.notation(variant),
    )


def move_from_proto(message: game_pb2.Move, *, field: str = "move") -> Move:
    """The move a message describes (its notation, which says the same, is not read)."""
    path = _squares(message.path, field=f"{field}.path")
    if not 2 <= len(path) <= MAX_PATH_SQUARES:
        raise InvalidFieldError(
            f"{field}.path has {len(path)} squares: a move has 2 to {MAX_PATH_SQUARES}",
            field=f"{field}.path",
        )
    return Move(path, _squares(message.captured, field=f"{field}.captured"), message.crowned)


def move_path_from_proto(message: game_pb2.MovePath) -> tuple[int, ...]:
    """The squares of a requested move's path, for :meth:`Game.play`.

    Raises :class:`~goti.rules.errors.InvalidMoveError` (not a move at all) for a path too
    long to be one; the rules check the rest (length, squares 1-32, legality).
    """
    if len(message.squares) > MAX_PATH_SQUARES:
        raise InvalidMoveError(
            f"a move has at most {MAX_PATH_SQUARES} squares, not {len(message.squares)}"
        )
    return tuple(message.squares)


def move_path_to_proto(path: Iterable[int]) -> game_pb2.MovePath:
    """A path of squares as a requested move."""
    return game_pb2.MovePath(squares=path)


def outcome_to_proto(outcome: Outcome) -> game_pb2.Outcome:
    """How a game ended."""
    return game_pb2.Outcome(
        termination=termination_to_proto(outcome.termination),
        winner=color_to_proto(outcome.winner),
    )


def outcome_from_proto(message: game_pb2.Outcome, *, field: str = "outcome") -> Outcome:
    """How a game ended, checked: a win names its winner and a draw names none."""
    termination = termination_from_proto(message.termination, field=f"{field}.termination")
    winner = optional_color_from_proto(message.winner, field=f"{field}.winner")
    if (termination in _DECISIVE) != (winner is not None):
        expected = "a winner" if termination in _DECISIVE else "no winner (a draw)"
        raise InvalidFieldError(
            f"{field}: {game_pb2.Termination.Name(message.termination)} has {expected}",
            field=f"{field}.winner",
        )
    return Outcome(termination, winner)


def move_record_to_proto(record: MoveRecord, variant: Variant) -> game_pb2.MoveRecord:
    """What one move did."""
    message = game_pb2.MoveRecord(
        move=move_to_proto(record.move, variant),
        side=color_to_proto(record.side),
        ply=record.ply,
        declined_draw_offer=record.declined_offer,
        warnings=warnings_to_proto(record.warnings),
    )
    if record.outcome is not None:
        message.outcome.CopyFrom(outcome_to_proto(record.outcome))
    return message


def move_record_from_proto(message: game_pb2.MoveRecord, *, field: str = "record") -> MoveRecord:
    """What one move did, as the rules describe it."""
    return MoveRecord(
        move=move_from_proto(message.move, field=f"{field}.move"),
        notation=message.move.notation,
        side=color_from_proto(message.side, field=f"{field}.side"),
        ply=message.ply,
        declined_offer=message.declined_draw_offer,
        warnings=warnings_from_proto(message.warnings, field=f"{field}.warnings"),
        outcome=(
            outcome_from_proto(message.outcome, field=f"{field}.outcome")
            if message.HasField("outcome")
            else None
        ),
    )


# -- games ----------------------------------------------------------------------------------


def turn_to_proto(game: Game) -> game_pb2.Turn | None:
    """The side to move and what it may do; None once the game is over."""
    if game.is_over:
        return None
    variant = game.variant
    return game_pb2.Turn(
        side=color_to_proto(game.turn),
        legal_moves=[move_to_proto(move, variant) for move in game.legal_moves],
        must_capture=game.must_capture,
        may_offer_draw=game.may_offer_draw(game.turn),
        draw_offer_wait_moves=game.draw_offer_wait(game.turn),
    )


def game_view_to_proto(game: Game) -> game_pb2.GameView:
    """A game as players and spectators see it."""
    view = game_pb2.GameView(
        variant=variant_to_proto(game.variant),
        board=board_to_proto(game.position),
        start_fen=game.start.fen(),
        moves=game.moves,
        captured_by_white=game.captured(Color.WHITE),
        captured_by_black=game.captured(Color.BLACK),
        draw_offer=color_to_proto(game.draw_offer),
        warnings=warnings_to_proto(game.warnings),
        quiet_plies=game.quiet_plies,
        repetitions=game.repetitions,
    )
    if game.outcome is not None:
        view.outcome.CopyFrom(outcome_to_proto(game.outcome))
    turn = turn_to_proto(game)
    if turn is not None:
        view.turn.CopyFrom(turn)
    return view


def _key_to_proto(key: PositionKey) -> game_pb2.Position:
    white, black, kings, white_to_move = key
    return game_pb2.Position(
        white=to_square_mask(white),
        black=to_square_mask(black),
        kings=to_square_mask(kings),
        turn=game_pb2.COLOR_WHITE if white_to_move else game_pb2.COLOR_BLACK,
    )


def game_state_to_proto(state: GameState) -> game_pb2.GameState:
    """A game state for the wire and the store: compact, and complete for the rules."""
    white_offer, black_offer = state.last_offer_ply
    by_white, by_black = state.captured
    message = game_pb2.GameState(
        variant=variant_to_proto(state.variant),
        moves=state.moves,
        position=position_to_proto(state.position),
        # The current position closes the rules' list; the wire leaves it to `position`.
        repetition=[_key_to_proto(key) for key in state.repetition[:-1]],
        quiet_plies=state.quiet_plies,
        draw_offer=color_to_proto(state.draw_offer),
        white_last_offer_ply=white_offer,
        black_last_offer_ply=black_offer,
        captured_by_white=by_white,
        captured_by_black=by_black,
    )
    if state.start != Position.initial(state.variant):
        message.start.CopyFrom(position_to_proto(state.start))
    if state.outcome is not None:
        message.outcome.CopyFrom(outcome_to_proto(state.outcome))
    return message


def _check_repetition_turns(
    entries: Sequence[game_pb2.Position], current: Position, field: str
) -> None:
    # The rules keep a side to move per entry without checking it; on the wire it must
    # alternate back from the current position.
    for index, entry in enumerate(entries):
        plies_before_now = len(entries) - index
        expected = current.turn if plies_before_now % 2 == 0 else current.turn.opponent
        if entry.turn != color_to_proto(expected):
            where = f"{field}.repetition[{index}].turn"
            raise InvalidGameStateError(
                f"{where} must be {expected.value}: the side to move alternates, ending with "
                f"{current.turn.value} in the current position",
                field=where,
            )


def _wire_field(state: GameState, rules_field: str, field: str) -> str:
    """The wire field behind a rules complaint about one of the paired fields."""
    if rules_field == "captured":
        lost_black = state.start.count(Color.BLACK) - state.position.count(Color.BLACK)
        side = "white" if state.captured[0] != lost_black else "black"
        return f"{field}.captured_by_{side}"
    if rules_field == "last_offer_ply":
        white_offer = state.last_offer_ply[0]
        side = "white" if white_offer is not None and white_offer > state.ply else "black"
        return f"{field}.{side}_last_offer_ply"
    return f"{field}.{rules_field}"


def game_state_from_proto(message: game_pb2.GameState, *, field: str = "state") -> GameState:
    """The game state a message holds, checked to be one the rules could have produced.

    Raises :class:`~goti.rules.game.InvalidGameStateError` whose ``field`` is the dotted path
    of the culprit, starting with ``field`` (the name of the request field holding the state).
    """
    return game_from_proto(message, field=field).state()


def game_from_proto(message: game_pb2.GameState, *, field: str = "state") -> Game:
    """A game carried on from a checked game state (see :func:`game_state_from_proto`)."""
    try:
        variant = variant_from_proto(message.variant, field=f"{field}.variant")
        if not message.HasField("position"):
            raise InvalidFieldError(f"{field}.position is required", field=f"{field}.position")
        position = position_from_proto(message.position, variant, field=f"{field}.position")
        start = (
            position_from_proto(message.start, variant, field=f"{field}.start")
            if message.HasField("start")
            else Position.initial(variant)
        )
        state = GameState(
            variant=variant,
            start=start,
            moves=tuple(message.moves),
            position=position,
            repetition=(
                *(
                    position_key(
                        position_from_proto(entry, variant, field=f"{field}.repetition[{index}]")
                    )
                    for index, entry in enumerate(message.repetition)
                ),
                position_key(position),
            ),
            quiet_plies=message.quiet_plies,
            draw_offer=optional_color_from_proto(message.draw_offer, field=f"{field}.draw_offer"),
            last_offer_ply=(
                message.white_last_offer_ply if message.HasField("white_last_offer_ply") else None,
                message.black_last_offer_ply if message.HasField("black_last_offer_ply") else None,
            ),
            captured=(message.captured_by_white, message.captured_by_black),
            outcome=(
                outcome_from_proto(message.outcome, field=f"{field}.outcome")
                if message.HasField("outcome")
                else None
            ),
        )
    except InvalidFieldError as error:
        raise InvalidGameStateError(str(error), field=error.field) from None
    try:
        game = Game.from_state(state)
    except InvalidGameStateError as error:
        raise InvalidGameStateError(
            f"{field}: {error}", field=_wire_field(state, error.field, field)
        ) from None
    _check_repetition_turns(message.repetition, position, field)
    outcome = state.outcome
    lost_on_the_board = {Termination.NO_PIECES, Termination.NO_MOVES}
    if (
        outcome is not None
        and outcome.termination in lost_on_the_board
        and outcome.winner is not position.turn.opponent
    ):
        raise InvalidGameStateError(
            f"{field}.outcome: {outcome.termination.name} is a loss for the side to move",
            field=f"{field}.outcome.winner",
        )
    return game


# -- errors ---------------------------------------------------------------------------------


def rules_error_status(error: Exception, *, field: str | None = None) -> ErrorStatus | None:
    """The status for an error of the rules library, or None for any other exception.

    ``field`` names the request field the error is about (the move, the FEN), when known.
    """
    where: dict[str, str] = {FIELD: field} if field else {}
    if isinstance(error, InvalidFieldError):
        return ErrorStatus.of(
            errors_pb2.ERROR_REASON_INVALID_REQUEST, str(error), field=error.field
        )
    if isinstance(error, InvalidGameStateError):
        return ErrorStatus.of(
            errors_pb2.ERROR_REASON_INVALID_GAME_STATE, str(error), field=error.field
        )
    if isinstance(error, InvalidFenError):
        return ErrorStatus.of(
            errors_pb2.ERROR_REASON_INVALID_FEN, str(error), token=error.token, **where
        )
    if isinstance(error, InvalidMoveError):
        return ErrorStatus.of(errors_pb2.ERROR_REASON_INVALID_MOVE, str(error), **where)
    if isinstance(error, IllegalMoveError):
        return ErrorStatus.of(
            reason_value(error.reason.value), str(error), legalMoves=",".join(error.legal)
        )
    if isinstance(error, AmbiguousMoveError):
        return ErrorStatus.of(
            errors_pb2.ERROR_REASON_AMBIGUOUS_MOVE,
            str(error),
            candidates=",".join(error.candidates),
        )
    if isinstance(error, ActionRefusedError):
        extra = {MOVES_TO_WAIT: str(error.moves_to_wait)} if error.moves_to_wait else {}
        return ErrorStatus.of(reason_value(error.reason.value), str(error), **extra)
    if isinstance(error, InvalidPdnError):
        return ErrorStatus.of(errors_pb2.ERROR_REASON_INVALID_PDN, str(error), **where)
    return None
