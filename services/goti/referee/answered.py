"""The game states a referee answered with lately, kept by their wire bytes.

A table's next request brings back the state of the referee's last answer on it, byte for
byte (the tables service stores the answer's bytes and sends them back as they are).  Found
here, that state needs no decoding and no second run of the checks (the wire's, the rules'
and the referee's own consistency checks): it is what the rules produced from a game that
passed them, and the game is carried on from it as it is
(:func:`goti.referee.actions.resumed`).  A state not found (another replica answered, or it
aged out) is decoded and checked as any other; a forged or altered state never matches bytes
this referee wrote, so the checks it must pass stay the same.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from goti.api.v1 import game_pb2
from goti.rules.game import GameState

ANSWERED_STATES_KEPT: Final = 4096
"""States remembered: one per table moving in the last few seconds on a busy replica, a few
kilobytes each at most (a state holds its game's move list)."""


class AnsweredStates:
    """The last ``size`` game states this referee answered with, by their wire bytes."""

    def __init__(self, size: int = ANSWERED_STATES_KEPT) -> None:
        self._size = size
        self._states: OrderedDict[bytes, GameState] = OrderedDict()

    def remember(self, message: game_pb2.GameState, state: GameState) -> None:
        """Keep ``state``, which ``message`` carries to the caller."""
        key = message.SerializeToString()
        self._states[key] = state
        self._states.move_to_end(key)
        if len(self._states) > self._size:
            self._states.popitem(last=False)

    def find(self, message: game_pb2.GameState) -> GameState | None:
        """The state an earlier answer carried as ``message``, or None."""
        return self._states.get(message.SerializeToString())
