"""Who sits where at a table, and who may act: pure decisions over the stored table.

A table is kept as a ``goti.api.v1.Table`` message without its game and without what is
derived on reading (id, join link, seq): settings, seats, status, deadline, rematch.  The
functions here read and change such records; they do no I/O.

>>> table = new_table(
...     creator=tables_pb2.Seat(player=players_pb2.Player(player_id="p1", display_name="Ann")),
...     creator_color=game_pb2.COLOR_BLACK,
...     variant=game_pb2.VARIANT_ENGLISH,
...     opponent=tables_pb2.OPPONENT_COMPUTER_HARD,
...     visibility=tables_pb2.VISIBILITY_PRIVATE,
...     turn_timer_seconds=0,
...     code="K7QX2M",
...     created_ms=0,
... )
>>> tables_pb2.Role.Name(role_of(table, "p1")), table.white.player.display_name
('ROLE_BLACK', 'Computer (Hard)')
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from typing import Final

from goti.api.v1 import ai_pb2, errors_pb2, game_pb2, players_pb2, tables_pb2
from goti.tables.refusals import CallRefusedError

CODE_ALPHABET: Final = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
"""Table codes: no 0/O, no 1/I/L, so that people read them back without mistakes."""
CODE_LENGTH: Final = 6
TABLE_ID_BYTES: Final = 16
"""Random bytes in a table id: 22 URL-safe characters, unguessable."""

_CODE_SEPARATORS: Final = re.compile(r"[\s-]+")

WHITE: Final = game_pb2.COLOR_WHITE
BLACK: Final = game_pb2.COLOR_BLACK
COLORS: Final = (WHITE, BLACK)

COMPUTER_LEVELS: Final[dict[int, ai_pb2.Level.ValueType]] = {
    tables_pb2.OPPONENT_COMPUTER_EASY: ai_pb2.LEVEL_EASY,
    tables_pb2.OPPONENT_COMPUTER_NORMAL: ai_pb2.LEVEL_NORMAL,
    tables_pb2.OPPONENT_COMPUTER_HARD: ai_pb2.LEVEL_HARD,
    tables_pb2.OPPONENT_COMPUTER_MASTER: ai_pb2.LEVEL_MASTER,
}
_LEVEL_NAMES: Final[dict[int, str]] = {
    ai_pb2.LEVEL_EASY: "Easy",
    ai_pb2.LEVEL_NORMAL: "Normal",
    ai_pb2.LEVEL_HARD: "Hard",
    ai_pb2.LEVEL_MASTER: "Master",
}
_ROLE_OF_COLOR: Final[dict[int, tables_pb2.Role.ValueType]] = {
    WHITE: tables_pb2.ROLE_WHITE,
    BLACK: tables_pb2.ROLE_BLACK,
}


def new_table_id() -> str:
    """A fresh table id: random, URL-safe, unguessable."""
    return secrets.token_urlsafe(TABLE_ID_BYTES)


def new_code() -> str:
    """A fresh table code of :data:`CODE_LENGTH` characters from :data:`CODE_ALPHABET`."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def read_code(text: str) -> str | None:
    """A code as people type it, normalised (case, spaces and dashes ignored); None when it
    cannot be a code.

    >>> read_code(" k7q-x2m "), read_code("K7QX2"), read_code("O7QX2M")
    ('K7QX2M', None, None)
    """
    code = _CODE_SEPARATORS.sub("", text).upper()
    if len(code) != CODE_LENGTH or any(character not in CODE_ALPHABET for character in code):
        return None
    return code


def opponent_color(color: int) -> game_pb2.Color.ValueType:
    """The other side."""
    return BLACK if color == WHITE else WHITE


def starting_color(variant: int) -> game_pb2.Color.ValueType:
    """The colour that moves first: Black in English, White in Russian."""
    return WHITE if variant == game_pb2.VARIANT_RUSSIAN else BLACK


def creator_color(variant: int, starting_player: int) -> game_pb2.Color.ValueType:
    """The colour the table's creator (player 1) plays; a random starter is drawn here."""
    first = starting_color(variant)
    if starting_player == tables_pb2.STARTING_PLAYER_PLAYER_1:
        return first
    if starting_player == tables_pb2.STARTING_PLAYER_PLAYER_2:
        return opponent_color(first)
    return first if secrets.randbelow(2) else opponent_color(first)


def computer_seat(level: int) -> tables_pb2.Seat:
    """The seat of the computer at ``level``."""
    name = f"Computer ({_LEVEL_NAMES.get(level, 'Hard')})"
    return tables_pb2.Seat(
        player=players_pb2.Player(player_id="", display_name=name),
        computer=True,
        computer_level=level,  # type: ignore[arg-type]
    )


def new_table(
    *,
    creator: tables_pb2.Seat,
    creator_color: int,
    variant: game_pb2.Variant.ValueType,
    opponent: tables_pb2.Opponent.ValueType,
    visibility: tables_pb2.Visibility.ValueType,
    turn_timer_seconds: int,
    code: str,
    created_ms: int,
) -> tables_pb2.Table:
    """A new table's record: the creator seated at ``creator_color``, the other seat open
    (a person), the computer's, or the creator's again (pass-and-play)."""
    if opponent in COMPUTER_LEVELS:
        other = computer_seat(COMPUTER_LEVELS[opponent])
    elif opponent == tables_pb2.OPPONENT_PASS_AND_PLAY:
        other = tables_pb2.Seat()
        other.CopyFrom(creator)
    else:
        other = tables_pb2.Seat()
    mine = tables_pb2.Seat()
    mine.CopyFrom(creator)
    mine.color = creator_color  # type: ignore[assignment]
    other.color = opponent_color(creator_color)
    table = tables_pb2.Table(
        code=code,
        variant=variant,
        opponent=opponent,
        visibility=visibility,
        turn_timer_seconds=turn_timer_seconds,
        status=tables_pb2.TABLE_STATUS_PLAYING
        if other.HasField("player")
        else tables_pb2.TABLE_STATUS_WAITING,
    )
    table.created_at.FromMilliseconds(created_ms)
    seat(table, creator_color).CopyFrom(mine)
    seat(table, other.color).CopyFrom(other)
    return table


def seat(table: tables_pb2.Table, color: int) -> tables_pb2.Seat:
    """The table's seat of ``color`` (the message itself, to read or change)."""
    return table.white if color == WHITE else table.black


def is_listed(table: tables_pb2.Table) -> bool:
    """Whether the lobby lists the table: public and waiting for a person."""
    return (
        table.visibility == tables_pb2.VISIBILITY_PUBLIC
        and table.status == tables_pb2.TABLE_STATUS_WAITING
    )


def open_color(table: tables_pb2.Table) -> game_pb2.Color.ValueType | None:
    """The colour of the open seat; None when both are taken."""
    for color in COLORS:
        if not seat(table, color).HasField("player"):
            return color
    return None


def host(table: tables_pb2.Table) -> players_pb2.Player:
    """The player waiting at a table with an open seat (or White's player)."""
    for color in COLORS:
        if seat(table, color).HasField("player"):
            return seat(table, color).player
    return players_pb2.Player()


def colors_of(table: tables_pb2.Table, player_id: str | None) -> list[game_pb2.Color.ValueType]:
    """The colours whose seats ``player_id`` holds (none for a spectator)."""
    if not player_id:
        return []
    return [
        color
        for color in COLORS
        if not seat(table, color).computer and seat(table, color).player.player_id == player_id
    ]


def role_of(table: tables_pb2.Table, player_id: str | None) -> tables_pb2.Role.ValueType:
    """What ``player_id`` is at the table."""
    colors = colors_of(table, player_id)
    if len(colors) == 2:
        return tables_pb2.ROLE_BOTH
    if colors:
        return _ROLE_OF_COLOR[colors[0]]
    return tables_pb2.ROLE_SPECTATOR


def computer_color(table: tables_pb2.Table) -> game_pb2.Color.ValueType | None:
    """The computer's colour; None when no computer plays."""
    for color in COLORS:
        if seat(table, color).computer:
            return color
    return None


def computer_level(table: tables_pb2.Table) -> ai_pb2.Level.ValueType:
    """The computer's level (LEVEL_UNSPECIFIED when no computer plays)."""
    color = computer_color(table)
    return ai_pb2.LEVEL_UNSPECIFIED if color is None else seat(table, color).computer_level


def acting_color(
    colors: Sequence[game_pb2.Color.ValueType], requested: int, to_move: int
) -> game_pb2.Color.ValueType:
    """The side a player holding the seats ``colors`` acts for: ``requested``
    (COLOR_UNSPECIFIED for their own seat; in pass-and-play, the side to move).  Refuses
    spectators and sides the player does not hold.
    """
    if not colors:
        raise CallRefusedError.of(
            errors_pb2.ERROR_REASON_NOT_A_PLAYER,
            "you hold no seat at this table: you may watch but not play",
        )
    if requested != game_pb2.COLOR_UNSPECIFIED:
        for color in colors:
            if color == requested:
                return color
        raise CallRefusedError.of(
            errors_pb2.ERROR_REASON_NOT_YOUR_SEAT,
            f"you do not hold the {_color_name(requested)} seat at this table",
        )
    for color in colors:
        if len(colors) == 2 and color == to_move:
            return color
    return colors[0]


def require_turn(acting: int, to_move: int) -> None:
    """Refuse an action by a side that is not to move."""
    if acting != to_move:
        raise CallRefusedError.of(
            errors_pb2.ERROR_REASON_NOT_YOUR_TURN,
            f"it is {_color_name(to_move)}'s turn, not {_color_name(acting)}'s",
        )


def require_playing(table: tables_pb2.Table) -> None:
    """Refuse game actions at a table that is waiting or finished."""
    if table.status == tables_pb2.TABLE_STATUS_WAITING:
        raise CallRefusedError.of(
            errors_pb2.ERROR_REASON_WAITING_FOR_OPPONENT,
            "the table is waiting for an opponent: the game has not started",
        )
    if table.status == tables_pb2.TABLE_STATUS_FINISHED:
        raise CallRefusedError.of(errors_pb2.ERROR_REASON_GAME_OVER, "the game is over")


def rematch_table(table: tables_pb2.Table, *, code: str, created_ms: int) -> tables_pb2.Table:
    """The rematch of a finished table: the same settings and players, colours swapped,
    already playing."""
    rematch = tables_pb2.Table(
        code=code,
        variant=table.variant,
        opponent=table.opponent,
        visibility=table.visibility,
        turn_timer_seconds=table.turn_timer_seconds,
        status=tables_pb2.TABLE_STATUS_PLAYING,
    )
    rematch.created_at.FromMilliseconds(created_ms)
    rematch.white.CopyFrom(table.black)
    rematch.white.color = WHITE
    rematch.black.CopyFrom(table.white)
    rematch.black.color = BLACK
    return rematch


def _color_name(color: int) -> str:
    return "White" if color == WHITE else "Black"
