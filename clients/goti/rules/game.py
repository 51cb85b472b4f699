"""The game: moves in turn, the automatic end, draws, draw offers, resignation, warnings.

The rules of play, the same in both variants:

- A side with no piece, or no legal move, on its turn loses.
- The same position with the same side to move for the third time is a draw; a warning is
  given when it comes up the second time.
- Forty moves each (80 plies) with no capture and no man moved is a draw; a warning is given
  ten moves each (20 plies) before.
- A draw may be offered on your turn, before you move, once both sides have moved.  The offer
  stays open while the opponent thinks; they accept, decline, or move (which declines).  The
  offerer then waits five of their own moves before offering again.
- Resignation only on your own turn.

>>> game = Game()
>>> for text in ["11-15", "23-19", "8-11"]:
...     _ = game.play(text)
>>> game.offer_draw(Color.WHITE)
>>> _ = game.play("22-17")
>>> game.accept_draw(Color.BLACK).termination.name
'AGREEMENT'
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, replace

from goti.rules.color import Color
from goti.rules.errors import ActionRefusedError, InvalidMoveError, Refusal
from goti.rules.moves import Move
from goti.rules.position import Position
from goti.rules.squares import Square
from goti.rules.variants import ENGLISH, Variant, find_variant

MOVE_LIMIT_PLIES = 80
"""Forty moves each with no capture and no man moved: a draw."""
MOVE_LIMIT_WARNING_PLIES = 60
"""Ten moves each before the move-limit draw: a warning."""
DRAW_OFFER_COOLDOWN_MOVES = 5
"""Own moves an offerer waits, counting from the turn of the offer, before offering again."""
REPETITION_DRAW_COUNT = 3

PositionKey = tuple[int, int, int, bool]
"""A position for repetition: white, black and kings bitboards and whether White is to move."""


class Termination(enum.Enum):
    """How a game ended."""

    NO_PIECES = "no_pieces"
    """The side to move had no pieces left: it lost."""
    NO_MOVES = "no_moves"
    """The side to move had pieces but no legal move: it lost."""
    RESIGNATION = "resignation"
    """A side resigned on its turn: it lost."""
    THREEFOLD_REPETITION = "threefold_repetition"
    """The same position with the same side to move came up a third time: a draw."""
    MOVE_LIMIT = "move_limit"
    """Forty moves each with no capture and no man moved: a draw."""
    AGREEMENT = "agreement"
    """A draw offer was accepted."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a game: why, and who won (None for a draw)."""

    termination: Termination
    winner: Color | None

    @property
    def result(self) -> str:
        """The PDN result: ``1-0`` White won, ``0-1`` Black won, ``1/2-1/2`` drawn."""
        if self.winner is None:
            return "1/2-1/2"
        return "1-0" if self.winner is Color.WHITE else "0-1"


class GameWarning(enum.Enum):
    """Something the players should know before the game draws itself."""

    REPETITION = "repetition"
    """The current position has come up twice; a third time is a draw."""
    MOVE_LIMIT_NEAR = "move_limit_near"
    """Thirty moves each without a capture or a man move: ten more each and it is a draw."""


@dataclass(frozen=True, slots=True)
class GameState:
    """Everything the rules need to carry a game on, and nothing else.

    This is what the referee receives and returns and the tables service stores.  Use
    :meth:`Game.from_state` to check one that came from outside.
    """

    variant: Variant
    start: Position
    """The position the game started from (the variant's start unless set up)."""
    moves: tuple[str, ...]
    """Every move played, in the variant's notation."""
    position: Position
    """The current position."""
    repetition: tuple[PositionKey, ...]
    """The positions since the last capture or man move, oldest first; the current one last."""
    quiet_plies: int
    """Plies since the last capture or man move (the move-limit clock)."""
    draw_offer: Color | None = None
    """The side whose draw offer is open."""
    last_offer_ply: tuple[int | None, int | None] = (None, None)
    """The ply at which White, and Black, last offered a draw."""
    captured: tuple[int, int] = (0, 0)
    """Pieces captured by White, and by Black."""
    outcome: Outcome | None = None
    """How the game ended, if it has."""

    @property
    def ply(self) -> int:
        """Plies played since the start."""
        return len(self.moves)


@dataclass(frozen=True, slots=True)
class MoveRecord:
    """What one move did: the move, by whom, and what followed from it."""

    move: Move
    notation: str
    side: Color
    ply: int
    """The ply the move was played at (0 for the first move of the game)."""
    declined_offer: bool
    """The move declined the opponent's open draw offer."""
    warnings: frozenset[GameWarning]
    outcome: Outcome | None

    @property
    def captured(self) -> tuple[Square, ...]:
        """The captured pieces' squares, in the order they were jumped."""
        return self.move.captured

    @property
    def crowned(self) -> bool:
        """Whether the moving man became a king."""
        return self.move.crowned


class InvalidGameStateError(ValueError):
    """A game state that the rules could not have produced; ``field`` names the culprit."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


def position_key(position: Position) -> PositionKey:
    """The key of a position for repetition counting."""
    return (position.white, position.black, position.kings, position.turn is Color.WHITE)


class Game:
    """A game in progress: the position, the move list, and the rules of play around them."""

    def __init__(self, variant: Variant | str = ENGLISH, *, start: Position | None = None) -> None:
        rules = find_variant(variant) if isinstance(variant, str) else variant
        if start is None:
            start = Position.initial(rules)
        elif start.variant != rules:
            raise ValueError(f"the start position is {start.variant.name}, not {rules.name}")
        self._state = GameState(
            variant=rules,
            start=start,
            moves=(),
            position=start,
            repetition=(position_key(start),),
            quiet_plies=0,
        )
        self._played: list[Move] = []
        self._history: list[GameState] = []
        self._state = replace(self._state, outcome=self._outcome_of_position(start))

    @classmethod
    def from_fen(cls, fen: str, variant: Variant | str = ENGLISH) -> Game:
        """A game set up from a PDN FEN."""
        return cls(variant, start=Position.from_fen(fen, variant))

    @classmethod
    def from_state(cls, state: GameState) -> Game:
        """A game carried on from a state, after checking it could have arisen.

        The checks are the cheap ones that catch a corrupt or forged state (counts that do not
        add up, a clock that cannot be, an offer that cannot be open); the move list is not
        replayed.  Raises :class:`InvalidGameStateError`.
        """
        _check_state(state)
        return cls.from_own_state(state)

    @classmethod
    def from_own_state(cls, state: GameState) -> Game:
        """A game carried on from a state that :meth:`state` returned, taken as it is.

        For a caller that keeps the states these rules produced (the referee keeps those it
        answered with, found again by their bytes): such a state passed the rules when it was
        made, and checking it again would only repeat the work.  Anything from outside goes
        through :meth:`from_state`.
        """
        game = cls.__new__(cls)
        game._state = state
        game._played = []
        game._history = []
        return game

    def state(self) -> GameState:
        """The game as a :class:`GameState`."""
        return self._state

    # -- what the game looks like ---------------------------------------------------------

    @property
    def variant(self) -> Variant:
        """The variant being played."""
        return self._state.variant

    @property
    def start(self) -> Position:
        """The position the game started from."""
        return self._state.start

    @property
    def position(self) -> Position:
        """The current position."""
        return self._state.position

    @property
    def turn(self) -> Color:
        """The side to move."""
        return self._state.position.turn

    @property
    def ply(self) -> int:
        """Plies played."""
        return self._state.ply

    @property
    def moves(self) -> tuple[str, ...]:
        """The moves played, in notation."""
        return self._state.moves

    @property
    def outcome(self) -> Outcome | None:
        """How the game ended, or None while it goes on."""
        return self._state.outcome

    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self._state.outcome is not None

    @property
    def legal_moves(self) -> list[Move]:
        """The moves the side to move may play (none once the game is over)."""
        if self.is_over:
            return []
        return list(self.position.legal_moves)

    @property
    def must_capture(self) -> list[Square]:
        """The squares of the pieces that can capture, one of which must (empty if none)."""
        return [] if self.is_over else self.position.must_capture

    @property
    def quiet_plies(self) -> int:
        """Plies since the last capture or man move."""
        return self._state.quiet_plies

    @property
    def repetitions(self) -> int:
        """How many times the current position has come up with this side to move."""
        key = position_key(self.position)
        return self._state.repetition.count(key)

    @property
    def warnings(self) -> frozenset[GameWarning]:
        """The warnings in force now (none once the game is over)."""
        if self.is_over:
            return frozenset()
        found = set()
        if self.repetitions == REPETITION_DRAW_COUNT - 1:
            found.add(GameWarning.REPETITION)
        if self._state.quiet_plies >= MOVE_LIMIT_WARNING_PLIES:
            found.add(GameWarning.MOVE_LIMIT_NEAR)
        return frozenset(found)

    @property
    def draw_offer(self) -> Color | None:
        """The side whose draw offer is open, if any."""
        return self._state.draw_offer

    def captured(self, color: Color) -> int:
        """How many pieces ``color`` has captured."""
        by_white, by_black = self._state.captured
        return by_white if color is Color.WHITE else by_black

    def draw_offer_wait(self, color: Color) -> int:
        """How many more of its own moves ``color`` must make before it may offer a draw."""
        last = self._state.last_offer_ply[0 if color is Color.WHITE else 1]
        if last is None:
            return 0
        own_moves_since = (self.ply - last + 1) // 2
        return max(0, DRAW_OFFER_COOLDOWN_MOVES - own_moves_since)

    def notation(self, move: Move) -> str:
        """A move in this game's notation."""
        return move.notation(self.variant)

    # -- actions ------------------------------------------------------------------------

    def play(self, move: str | Sequence[int] | Move, *, by: Color | None = None) -> MoveRecord:
        """Play a move given as text (``11-15``), a path of squares, or a :class:`Move`."""
        self._check_can_act(by)
        if isinstance(move, Move):
            chosen = move
        elif isinstance(move, str):
            chosen = self.position.parse_move(move)
        else:
            chosen = self.position.find_move([int(square) for square in move])
        return self.push(chosen)

    def push(self, move: Move, *, by: Color | None = None) -> MoveRecord:
        """Play a legal move for the side to move and apply every rule that follows."""
        self._check_can_act(by)
        state = self._state
        before = state.position
        after = before.push(move)
        mover = before.turn
        piece = before.piece_at(move.origin)
        irreversible = move.is_capture or (piece is not None and not piece.king)
        if irreversible:
            repetition: tuple[PositionKey, ...] = (position_key(after),)
            quiet_plies = 0
        else:
            repetition = (*state.repetition, position_key(after))
            quiet_plies = state.quiet_plies + 1
        by_white, by_black = state.captured
        if mover is Color.WHITE:
            by_white += len(move.captured)
        else:
            by_black += len(move.captured)
        declined = state.draw_offer is mover.opponent
        notation = move.notation(state.variant)
        self._history.append(state)
        self._played.append(move)
        self._state = replace(
            state,
            moves=(*state.moves, notation),
            position=after,
            repetition=repetition,
            quiet_plies=quiet_plies,
            draw_offer=None if declined else state.draw_offer,
            captured=(by_white, by_black),
        )
        outcome = self._outcome_after_move()
        if outcome is not None:
            self._state = replace(self._state, outcome=outcome, draw_offer=None)
        return MoveRecord(
            move=move,
            notation=notation,
            side=mover,
            ply=state.ply,
            declined_offer=declined,
            warnings=self.warnings,
            outcome=self._state.outcome,
        )

    def pop(self) -> Move:
        """Take back the last move, restoring the game exactly as it was before it."""
        if not self._state.moves:
            raise ActionRefusedError("no move has been played", reason=Refusal.NOTHING_TO_TAKE_BACK)
        if not self._history:
            self._rebuild_history()
        self._state = self._history.pop()
        return self._played.pop()

    def take_back(self, by: Color) -> list[str]:
        """Take back ``by``'s last move and the opponent's reply to it, if there was one.

        Returns the notation of the moves taken back, last first.  Refused when ``by`` has
        played no move that can be taken back.
        """
        if self.is_over:
            raise ActionRefusedError("the game is over", reason=Refusal.GAME_OVER)
        played_by_color = [ply for ply in range(self.ply) if self._mover_at(ply) is by]
        if not played_by_color:
            raise ActionRefusedError(
                f"{by.value} has no move to take back", reason=Refusal.NOTHING_TO_TAKE_BACK
            )
        keep = played_by_color[-1]
        taken = []
        while self.ply > keep:
            taken.append(self.moves[-1])
            self.pop()
        return taken

    def may_offer_draw(self, by: Color) -> bool:
        """Whether ``by`` may offer a draw now (:meth:`offer_draw` says why not)."""
        try:
            self._check_offer(by)
        except ActionRefusedError:
            return False
        return True

    def offer_draw(self, by: Color) -> None:
        """``by`` offers a draw on its turn, before moving."""
        self._check_offer(by)
        state = self._state
        offers = list(state.last_offer_ply)
        offers[0 if by is Color.WHITE else 1] = state.ply
        self._state = replace(state, draw_offer=by, last_offer_ply=(offers[0], offers[1]))

    def _check_offer(self, by: Color) -> None:
        self._check_can_act(by)
        state = self._state
        if state.draw_offer is by:
            raise ActionRefusedError(
                f"{by.value}'s draw offer is already open", reason=Refusal.DRAW_ALREADY_OFFERED
            )
        if state.draw_offer is by.opponent:
            raise ActionRefusedError(
                f"{by.opponent.value} has offered a draw: accept or decline it",
                reason=Refusal.DRAW_OFFER_PENDING,
            )
        if not self._both_sides_have_moved():
            raise ActionRefusedError(
                "a draw may be offered only once both sides have moved",
                reason=Refusal.DRAW_OFFER_BEFORE_BOTH_MOVED,
            )
        wait = self.draw_offer_wait(by)
        if wait:
            raise ActionRefusedError(
                f"{by.value} offered a draw recently: {wait} more move{'s' if wait > 1 else ''} "
                "of its own before it may offer again",
                reason=Refusal.DRAW_OFFER_TOO_SOON,
                moves_to_wait=wait,
            )

    def accept_draw(self, by: Color) -> Outcome:
        """``by`` accepts the opponent's open draw offer, on its turn: the game is drawn."""
        self._check_answer(by)
        outcome = Outcome(Termination.AGREEMENT, None)
        self._state = replace(self._state, draw_offer=None, outcome=outcome)
        return outcome

    def decline_draw(self, by: Color) -> None:
        """``by`` declines the opponent's open draw offer, on its turn."""
        self._check_answer(by)
        self._state = replace(self._state, draw_offer=None)

    def resign(self, by: Color) -> Outcome:
        """``by`` resigns on its turn: the opponent wins."""
        self._check_can_act(by)
        outcome = Outcome(Termination.RESIGNATION, by.opponent)
        self._state = replace(self._state, draw_offer=None, outcome=outcome)
        return outcome

    # -- internals ----------------------------------------------------------------------

    def _check_can_act(self, by: Color | None) -> None:
        if self.is_over:
            raise ActionRefusedError("the game is over", reason=Refusal.GAME_OVER)
        if by is not None and by is not self.turn:
            raise ActionRefusedError(
                f"it is {self.turn.value}'s turn, not {by.value}'s", reason=Refusal.NOT_YOUR_TURN
            )

    def _check_answer(self, by: Color) -> None:
        self._check_can_act(by)
        if self._state.draw_offer is not by.opponent:
            raise ActionRefusedError(
                f"{by.opponent.value} has no open draw offer to answer",
                reason=Refusal.NO_DRAW_OFFER,
            )

    def _mover_at(self, ply: int) -> Color:
        first = self.start.turn
        return first if ply % 2 == 0 else first.opponent

    def _both_sides_have_moved(self) -> bool:
        return self.ply >= 2

    def _outcome_after_move(self) -> Outcome | None:
        state = self._state
        outcome = self._outcome_of_position(state.position)
        if outcome is not None:
            return outcome
        if state.repetition.count(position_key(state.position)) >= REPETITION_DRAW_COUNT:
            return Outcome(Termination.THREEFOLD_REPETITION, None)
        if state.quiet_plies >= MOVE_LIMIT_PLIES:
            return Outcome(Termination.MOVE_LIMIT, None)
        return None

    @staticmethod
    def _outcome_of_position(position: Position) -> Outcome | None:
        if not position.pieces(position.turn):
            return Outcome(Termination.NO_PIECES, position.turn.opponent)
        if not position.legal_moves:
            return Outcome(Termination.NO_MOVES, position.turn.opponent)
        return None

    def _rebuild_history(self) -> None:
        """Replay the move list from the start to recover the states before each move."""
        current = self._state
        replay = Game(current.variant, start=current.start)
        for text in current.moves:
            replay.play(text)
        # Draw offers are not in the move list: an earlier state keeps the offer dates that
        # precede it, and no offer is open in it.
        rebuilt = []
        for state in replay._history:
            offers = tuple(
                ply if ply is not None and ply < state.ply else None
                for ply in current.last_offer_ply
            )
            rebuilt.append(replace(state, last_offer_ply=(offers[0], offers[1]), draw_offer=None))
        self._history = rebuilt
        self._played = list(replay._played)


def _check_state(state: GameState) -> None:
    """Raise :class:`InvalidGameStateError` unless ``state`` is one the rules could reach."""
    position, start = state.position, state.start
    for name, board in (("start", start), ("position", position)):
        if board.variant != state.variant:
            raise InvalidGameStateError(
                f"{name} is not a {state.variant.name} position", field=name
            )
        if not board.is_valid():
            raise InvalidGameStateError(
                f"{name} is not a possible position (overlapping pieces, more than 12 a side, "
                "or a man on its crowning row)",
                field=name,
            )
    expected_turn = start.turn if state.ply % 2 == 0 else start.turn.opponent
    if position.turn is not expected_turn:
        raise InvalidGameStateError(
            f"after {state.ply} plies from a start with {start.turn.value} to move, "
            f"{expected_turn.value} must be to move",
            field="position",
        )
    if not state.repetition or state.repetition[-1] != position_key(position):
        raise InvalidGameStateError(
            "the repetition list must end with the current position", field="repetition"
        )
    if state.quiet_plies > state.ply:
        raise InvalidGameStateError(
            "the move-limit clock counts more plies than were played", field="quiet_plies"
        )
    if len(state.repetition) != state.quiet_plies + 1:
        raise InvalidGameStateError(
            "the repetition list must hold one position per quiet ply, and the current one",
            field="repetition",
        )
    if state.quiet_plies > MOVE_LIMIT_PLIES:
        raise InvalidGameStateError("the move-limit clock is past the draw", field="quiet_plies")
    for color, by, lost_side in (
        (Color.WHITE, state.captured[0], Color.BLACK),
        (Color.BLACK, state.captured[1], Color.WHITE),
    ):
        lost = start.count(lost_side) - position.count(lost_side)
        if by != lost:
            raise InvalidGameStateError(
                f"{color.value} is said to have captured {by} pieces but {lost_side.value} has "
                f"lost {lost}",
                field="captured",
            )
    for offer_ply in state.last_offer_ply:
        if offer_ply is not None and not 0 <= offer_ply <= state.ply:
            raise InvalidGameStateError(
                "a draw offer is dated after the last ply", field="last_offer_ply"
            )
    if state.draw_offer is not None:
        index = 0 if state.draw_offer is Color.WHITE else 1
        offered_at = state.last_offer_ply[index]
        if offered_at is None or state.ply - offered_at > 1:
            raise InvalidGameStateError(
                "an open draw offer must have been made on this ply or the one before",
                field="draw_offer",
            )
        if (offered_at == state.ply) != (position.turn is state.draw_offer):
            raise InvalidGameStateError(
                "an open draw offer belongs to the offerer before it moves, "
                "or to the opponent to answer",
                field="draw_offer",
            )
    if state.outcome is not None and state.draw_offer is not None:
        raise InvalidGameStateError("a finished game has no open draw offer", field="draw_offer")


__all__ = [
    "MOVE_LIMIT_PLIES",
    "MOVE_LIMIT_WARNING_PLIES",
    "Game",
    "GameState",
    "GameWarning",
    "InvalidGameStateError",
    "InvalidMoveError",
    "MoveRecord",
    "Outcome",
    "Termination",
]
