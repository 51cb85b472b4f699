"""What a table watch yields: a snapshot of the whole table, then its events in seq order.

Every event has the table's ``seq`` after it (one more than the event before), the server's
``time`` and the ``turn_deadline`` that follows it.  Match on the class::

    match update:
        case Snapshot(table=table): ...
        case MovePlayed(record=record, next=turn): ...
        case GameOver(outcome=outcome): ...
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TypeAlias

from goti.rules import Color, Move, MoveRecord, Outcome, Position
from goti_client.tables import GameView, LobbyTable, MoveSource, Player, Table, Turn


@dataclass(frozen=True, slots=True, kw_only=True)
class TableEvent:
    """One change to a table, from its log."""

    seq: int
    time: datetime
    turn_deadline: datetime | None
    """When the side to move's turn timer runs out after this event, if it runs."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerJoined(TableEvent):
    """A person took the open seat: the game starts."""

    color: Color
    player: Player


@dataclass(frozen=True, slots=True, kw_only=True)
class MovePlayed(TableEvent):
    """A move was played."""

    record: MoveRecord
    """The move, its notation, side, ply, warnings now in force, and outcome if it ended
    the game."""
    source: MoveSource
    position: Position
    """The board after the move."""
    captured_by_white: int
    captured_by_black: int
    next: Turn | None
    """The next side to move and its legal moves; None when the move ended the game."""

    @property
    def move(self) -> Move:
        """The move played."""
        return self.record.move

    @property
    def notation(self) -> str:
        """The move in the variant's notation."""
        return self.record.notation


@dataclass(frozen=True, slots=True, kw_only=True)
class DrawOffered(TableEvent):
    """A side offered a draw."""

    by: Color


@dataclass(frozen=True, slots=True, kw_only=True)
class DrawDeclined(TableEvent):
    """A side declined the opponent's draw offer (a move that declines one is a MovePlayed
    whose ``record.declined_offer`` is set)."""

    by: Color


@dataclass(frozen=True, slots=True, kw_only=True)
class DrawAccepted(TableEvent):
    """A side accepted the opponent's draw offer; a GameOver follows."""

    by: Color


@dataclass(frozen=True, slots=True, kw_only=True)
class Resigned(TableEvent):
    """A side resigned; a GameOver follows."""

    by: Color


@dataclass(frozen=True, slots=True, kw_only=True)
class MovesTakenBack(TableEvent):
    """Moves were taken back (against the computer)."""

    by: Color
    moves: tuple[str, ...]
    """The moves taken back, in notation, the last played first."""
    game: GameView
    """The game after the take-back."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GameOver(TableEvent):
    """The game ended: the table's last game event."""

    outcome: Outcome

    @property
    def result(self) -> str:
        """The PDN result: ``1-0``, ``0-1`` or ``1/2-1/2``."""
        return self.outcome.result


@dataclass(frozen=True, slots=True, kw_only=True)
class RematchOffered(TableEvent):
    """A player asked for a rematch; ``by`` is the colour they played here."""

    by: Color


@dataclass(frozen=True, slots=True, kw_only=True)
class RematchStarted(TableEvent):
    """The rematch started at a new table, colours swapped: this table's last event."""

    table_id: str
    code: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownEvent(TableEvent):
    """An event of a kind newer than this SDK; apps skip it (its seq still counts)."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The whole table as of one seq: replaces whatever the app had."""

    table: Table

    @property
    def seq(self) -> int:
        """The seq the events that follow continue from."""
        return self.table.seq


TableUpdate: TypeAlias = Snapshot | TableEvent
"""What a table watch yields."""


@dataclass(frozen=True, slots=True)
class LobbySnapshot:
    """The lobby's open tables now: replaces whatever the app had (also after a reconnect)."""

    tables: tuple[LobbyTable, ...]
    """Newest first."""


@dataclass(frozen=True, slots=True)
class TableOpened:
    """A table opened, or one already listed changed (replace it by ``table_id``)."""

    table: LobbyTable


@dataclass(frozen=True, slots=True)
class TableClosed:
    """A table left the lobby (it filled, or was cleared away)."""

    table_id: str


LobbyUpdate: TypeAlias = LobbySnapshot | TableOpened | TableClosed
"""What a lobby watch yields."""


@dataclass(frozen=True, slots=True)
class Rematch:
    """What asking for a rematch did."""

    events: tuple[TableEvent, ...]
    """The events appended to the finished table: a RematchOffered, or a RematchStarted."""
    table: Table | None
    """The rematch's table, colours swapped, once it has started; None while the opponent
    has not asked too."""
