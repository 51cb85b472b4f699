"""Commands on a table, as the servicer reads them from requests, and how each is judged
against the table it names: who acts, whether they may, and what the referee is asked.

Pure: no I/O.  :mod:`goti.tables.playing` runs a command through the referee and the commit.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from goti.api.v1 import errors_pb2, game_pb2, referee_pb2, tables_pb2
from goti.tables import events, seating
from goti.tables.loading import LoadedTable, SeatedTable
from goti.tables.refusals import CallRefusedError


@dataclass(frozen=True, slots=True)
class Envelope:
    """Who sends a command, to which table, at which seq, and under which request id."""

    player_id: str
    table_id: str
    request_id: str
    expected_seq: int
    fingerprint: bytes
    """What the request asked, to tell a retry from a reused request id."""


@dataclass(frozen=True, slots=True)
class Move:
    """Play one whole move, given as its path of squares or in notation."""

    side: game_pb2.Color.ValueType
    path: tuple[int, ...] | None
    notation: str = ""


@dataclass(frozen=True, slots=True)
class GameAction:
    """Offer a draw, answer one, or resign."""

    side: game_pb2.Color.ValueType
    action: referee_pb2.GameAction.ValueType


@dataclass(frozen=True, slots=True)
class TakeBack:
    """Take back the last move and the computer's reply."""


@dataclass(frozen=True, slots=True)
class AskRematch:
    """Ask for a rematch of a finished game."""


GameCommand = Move | GameAction | TakeBack
"""A command the referee rules on."""
Command = GameCommand | AskRematch


@dataclass(frozen=True, slots=True)
class Ruling:
    """A change to a table: its events and, when the game changed, the referee's answer."""

    events: list[tables_pb2.TableEvent]
    response: referee_pb2.ApplyResponse | None = None
    """The referee's answer (new state and view); None when the game itself did not change."""
    new_turn: bool = False
    """Whether a new turn starts (its timer starts again)."""
    opened: SeatedTable | None = None
    """The table this change opens (a rematch), to be discarded should the change not land."""


def judge(
    command: GameCommand, loaded: LoadedTable, colors: list[game_pb2.Color.ValueType]
) -> referee_pb2.ApplyRequest:
    """What the referee is asked for ``command`` by a player seated at ``colors``; refuses a
    command out of turn, on a game not in play, or not allowed at this table."""
    if isinstance(command, TakeBack):
        if seating.computer_color(loaded.record) is None:
            raise CallRefusedError.of(
                errors_pb2.ERROR_REASON_TAKE_BACK_NOT_ALLOWED,
                "moves can be taken back only against the computer; between people moves are final",
            )
        seating.require_playing(loaded.record)
        return referee_pb2.ApplyRequest(
            side=colors[0], game_action=referee_pb2.GAME_ACTION_TAKE_BACK
        )
    seating.require_playing(loaded.record)
    to_move = loaded.turn
    side = seating.acting_color(colors, command.side, to_move)
    if isinstance(command, GameAction):
        return referee_pb2.ApplyRequest(side=side, game_action=command.action)
    seating.require_turn(side, to_move)
    request = referee_pb2.ApplyRequest(side=side)
    if command.path is not None:
        request.move_path.SetInParent()
        request.move_path.squares.extend(command.path)
    else:
        request.move_notation = command.notation
    return request


def ruled(
    command: GameCommand, asked: referee_pb2.ApplyRequest, response: referee_pb2.ApplyResponse
) -> Ruling:
    """The change the referee's ``response`` to ``asked`` makes."""
    side = asked.side
    if isinstance(command, Move):
        return Ruling(
            events.move_played(response, tables_pb2.MOVE_SOURCE_PLAYER), response, new_turn=True
        )
    if isinstance(command, TakeBack):
        return Ruling(events.taken_back(side, response), response, new_turn=True)
    if command.action == referee_pb2.GAME_ACTION_OFFER_DRAW:
        return Ruling(events.draw_offered(side), response)
    if command.action == referee_pb2.GAME_ACTION_RESIGN:
        return Ruling(events.resigned(side, response), response)
    accepted = command.action == referee_pb2.GAME_ACTION_ACCEPT_DRAW
    return Ruling(events.draw_answered(side, response, accepted=accepted), response)


class RematchStep(enum.Enum):
    """What a rematch request does at a finished table."""

    SHOW = "show"
    """The rematch has started: show its table."""
    WAIT = "wait"
    """The caller asked already; the opponent has not."""
    OFFER = "offer"
    """Ask the opponent."""
    START = "start"
    """Both have asked (or the opponent never needs to): start it."""


def judge_rematch(record: tables_pb2.Table, colors: list[game_pb2.Color.ValueType]) -> RematchStep:
    """What a rematch request by a player seated at ``colors`` does; refuses one before the
    game is over."""
    if record.status != tables_pb2.TABLE_STATUS_FINISHED:
        raise CallRefusedError.of(
            errors_pb2.ERROR_REASON_GAME_IN_PROGRESS,
            "a rematch can be asked for once the game is over",
        )
    mine = colors[0]
    if record.rematch_table_id:
        return RematchStep.SHOW
    both_asked = (
        len(colors) == 2
        or seating.computer_color(record) is not None
        or record.rematch_offered_by == seating.opponent_color(mine)
    )
    if both_asked:
        return RematchStep.START
    if record.rematch_offered_by == mine:
        return RematchStep.WAIT
    return RematchStep.OFFER
