"""A table kept current from its watch: each snapshot or event folded into the Table the
screen draws, with the last move and the move-limit count the events imply.

Events already folded (a seq at or below the table's) are skipped, so a table refreshed by a
direct read and a watch that catches up later never apply a change twice.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from goti.rules import Color, Move
from goti_client.events import (
    DrawAccepted,
    DrawDeclined,
    DrawOffered,
    GameOver,
    MovePlayed,
    MovesTakenBack,
    PlayerJoined,
    RematchOffered,
    RematchStarted,
    Snapshot,
    TableEvent,
    TableUpdate,
)
from goti_client.tables import GameView, Role, Seat, Table, TableStatus, Turn

MOVE_LIMIT_PLIES = 80
"""Forty moves each with no capture and no man moved: a draw."""


def plies_before_first(game: GameView) -> int:
    """The plies a game record counts before the game's first one: 1 when the game began with
    the side that moves second under the rules (from a set-up position), so that its first
    ply is the second half of move 1."""
    return 0 if game.start.turn is game.variant.first_to_move else 1


def move_number(game: GameView) -> int:
    """The number of the move being played, as a game record numbers them: a move is one ply
    of each side (``1. 11-15 23-19``), so after three plies it is move 2."""
    return (plies_before_first(game) + len(game.moves)) // 2 + 1


@dataclass(frozen=True, slots=True)
class TableState:
    """A table as of its latest seq, and what the screen needs beside it."""

    table: Table
    last_move: Move | None = None
    """The latest move played, to mark on the board; None after a snapshot or take-back."""

    @property
    def seq(self) -> int:
        """The seq of the latest change folded in."""
        return self.table.seq

    @property
    def game(self) -> GameView:
        """The game at the table."""
        return self.table.game

    @property
    def turn(self) -> Turn | None:
        """The side to move and its legal moves; None while waiting or once over."""
        if self.table.status is not TableStatus.PLAYING:
            return None
        return self.table.game.turn

    @property
    def my_turn(self) -> Turn | None:
        """The turn, when the caller holds the seat of the side to move."""
        turn = self.turn
        if turn is not None and self.table.role.holds(turn.side):
            return turn
        return None

    @property
    def seat_at_bottom(self) -> Color:
        """The side drawn at the bottom: the caller's, else White as in the diagrams."""
        if self.table.role in (Role.WHITE, Role.BLACK):
            return Color(self.table.role.value)
        return Color.WHITE

    @property
    def moves_before_move_limit(self) -> int:
        """Moves each before the forty-move draw (counting the side to move's next)."""
        return max(0, (MOVE_LIMIT_PLIES - self.game.quiet_plies + 1) // 2)

    def captured_by(self, color: Color) -> int:
        """How many of the opponent's pieces ``color`` has captured."""
        game = self.game
        return game.captured_by_white if color is Color.WHITE else game.captured_by_black

    def fold(self, update: TableUpdate) -> TableState:
        """The state after ``update``; itself when the update is already folded in."""
        if isinstance(update, Snapshot):
            if update.table.seq < self.seq and update.table.table_id == self.table.table_id:
                return self
            return TableState(update.table)
        if update.seq <= self.seq:
            return self
        return _apply(self, update)


def _apply(state: TableState, event: TableEvent) -> TableState:
    table = dataclasses.replace(state.table, seq=event.seq, turn_deadline=event.turn_deadline)
    game = table.game
    last_move = state.last_move
    match event:
        case MovePlayed():
            moved = game.position.piece_at(event.move.origin)
            quiet = moved is not None and moved.king and not event.move.is_capture
            game = dataclasses.replace(
                game,
                position=event.position,
                moves=(*game.moves, event.notation),
                captured_by_white=event.captured_by_white,
                captured_by_black=event.captured_by_black,
                draw_offer=None if event.record.declined_offer else game.draw_offer,
                warnings=event.record.warnings,
                outcome=event.record.outcome,
                turn=event.next,
                quiet_plies=game.quiet_plies + 1 if quiet else 0,
            )
            last_move = event.move
        case DrawOffered():
            turn = game.turn
            if turn is not None:
                turn = dataclasses.replace(turn, may_offer_draw=False)
            game = dataclasses.replace(game, draw_offer=event.by, turn=turn)
        case DrawDeclined() | DrawAccepted():
            game = dataclasses.replace(game, draw_offer=None)
        case MovesTakenBack():
            game = event.game
            last_move = None
        case GameOver():
            game = dataclasses.replace(game, outcome=event.outcome, turn=None, draw_offer=None)
            table = dataclasses.replace(table, status=TableStatus.FINISHED, turn_deadline=None)
        case PlayerJoined():
            seat = Seat(event.color, event.player)
            table = (
                dataclasses.replace(table, white=seat)
                if event.color is Color.WHITE
                else dataclasses.replace(table, black=seat)
            )
            table = dataclasses.replace(table, status=TableStatus.PLAYING)
        case RematchOffered():
            table = dataclasses.replace(table, rematch_offered_by=event.by)
        case RematchStarted():
            table = dataclasses.replace(table, rematch_table_id=event.table_id)
        case _:
            pass
    if game.outcome is not None:
        table = dataclasses.replace(table, status=TableStatus.FINISHED, turn_deadline=None)
    return TableState(dataclasses.replace(table, game=game), last_move)
