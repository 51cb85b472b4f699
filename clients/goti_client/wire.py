"""The SDK's side of the wire: ``goti.api.v1`` messages in, the SDK's dataclasses out.

Game values (positions, moves, outcomes) cross through :mod:`goti.api.convert`, the one
mapping between protobuf and the rules library; this module adds the tables and players
messages around them.  A message that names no valid value raises
:class:`goti.api.convert.InvalidFieldError`, a ``ValueError``: the SDK never guesses.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Final, TypeVar

from google.protobuf import timestamp_pb2

from goti.api import convert
from goti.api.v1 import ai_pb2, game_pb2, players_pb2, tables_pb2
from goti.rules import ENGLISH, Color, Move, Position, Square, Variant
from goti_client.events import (
    DrawAccepted,
    DrawDeclined,
    DrawOffered,
    GameOver,
    LobbySnapshot,
    LobbyUpdate,
    MovePlayed,
    MovesTakenBack,
    PlayerJoined,
    RematchOffered,
    RematchStarted,
    Resigned,
    TableClosed,
    TableEvent,
    TableOpened,
    UnknownEvent,
)
from goti_client.tables import (
    GameView,
    Level,
    LobbyTable,
    Me,
    MoveSource,
    Opponent,
    Player,
    Rating,
    Record,
    Role,
    Seat,
    StartingPlayer,
    Table,
    TableStatus,
    Turn,
)

T = TypeVar("T")

_OPPONENTS: Final[dict[Opponent, tables_pb2.Opponent.ValueType]] = {
    Opponent.HUMAN: tables_pb2.OPPONENT_HUMAN,
    Opponent.COMPUTER_EASY: tables_pb2.OPPONENT_COMPUTER_EASY,
    Opponent.COMPUTER_NORMAL: tables_pb2.OPPONENT_COMPUTER_NORMAL,
    Opponent.COMPUTER_HARD: tables_pb2.OPPONENT_COMPUTER_HARD,
    Opponent.PASS_AND_PLAY: tables_pb2.OPPONENT_PASS_AND_PLAY,
    Opponent.COMPUTER_MASTER: tables_pb2.OPPONENT_COMPUTER_MASTER,
}
_OPPONENT_OF_VALUE: Final = {value: opponent for opponent, value in _OPPONENTS.items()}
_STARTING_PLAYERS: Final[dict[StartingPlayer, tables_pb2.StartingPlayer.ValueType]] = {
    StartingPlayer.PLAYER_1: tables_pb2.STARTING_PLAYER_PLAYER_1,
    StartingPlayer.PLAYER_2: tables_pb2.STARTING_PLAYER_PLAYER_2,
    StartingPlayer.RANDOM: tables_pb2.STARTING_PLAYER_RANDOM,
}
_LEVEL_OF_VALUE: Final[dict[int, Level]] = {
    ai_pb2.LEVEL_EASY: Level.EASY,
    ai_pb2.LEVEL_NORMAL: Level.NORMAL,
    ai_pb2.LEVEL_HARD: Level.HARD,
    ai_pb2.LEVEL_MASTER: Level.MASTER,
}
_STATUS_OF_VALUE: Final[dict[int, TableStatus]] = {
    tables_pb2.TABLE_STATUS_WAITING: TableStatus.WAITING,
    tables_pb2.TABLE_STATUS_PLAYING: TableStatus.PLAYING,
    tables_pb2.TABLE_STATUS_FINISHED: TableStatus.FINISHED,
}
_ROLE_OF_VALUE: Final[dict[int, Role]] = {
    tables_pb2.ROLE_SPECTATOR: Role.SPECTATOR,
    tables_pb2.ROLE_WHITE: Role.WHITE,
    tables_pb2.ROLE_BLACK: Role.BLACK,
    tables_pb2.ROLE_BOTH: Role.BOTH,
}
_SOURCE_OF_VALUE: Final[dict[int, MoveSource]] = {
    tables_pb2.MOVE_SOURCE_PLAYER: MoveSource.PLAYER,
    tables_pb2.MOVE_SOURCE_COMPUTER: MoveSource.COMPUTER,
    tables_pb2.MOVE_SOURCE_TIMER: MoveSource.TIMER,
}


def _lookup(table: dict[int, T], value: int, field: str) -> T:
    try:
        return table[value]
    except KeyError:
        message = f"{field} is {value}, an unknown value"
        raise convert.InvalidFieldError(message, field=field) from None


# -- requests -------------------------------------------------------------------------------


def opponent_to_proto(opponent: Opponent) -> tables_pb2.Opponent.ValueType:
    """The wire value of an opponent."""
    return _OPPONENTS[opponent]


def starting_player_to_proto(starting: StartingPlayer) -> tables_pb2.StartingPlayer.ValueType:
    """The wire value of who moves first."""
    return _STARTING_PLAYERS[starting]


def visibility_to_proto(public: bool) -> tables_pb2.Visibility.ValueType:
    """The wire value of whether a table is listed in the lobby."""
    return tables_pb2.VISIBILITY_PUBLIC if public else tables_pb2.VISIBILITY_PRIVATE


def variant_to_proto(variant: Variant | None) -> game_pb2.Variant.ValueType:
    """The wire value of a variant; None (every variant) is VARIANT_UNSPECIFIED."""
    return game_pb2.VARIANT_UNSPECIFIED if variant is None else convert.variant_to_proto(variant)


def side_to_proto(side: Color | None) -> game_pb2.Color.ValueType:
    """The wire value of the side a command is for; None (the side to move) is unspecified."""
    return convert.color_to_proto(side)


def move_path_to_proto(path: Iterable[int]) -> game_pb2.MovePath:
    """The wire form of a move as its path of squares."""
    return convert.move_path_to_proto(path)


# -- values ---------------------------------------------------------------------------------


def time_from_proto(message: timestamp_pb2.Timestamp) -> datetime:
    """A timestamp as an aware UTC datetime."""
    return message.ToDatetime(tzinfo=UTC)


def player_from_proto(message: players_pb2.Player) -> Player:
    """A player as everyone may see them."""
    return Player(message.player_id, message.display_name)


def rating_from_proto(message: players_pb2.Rating, *, field: str = "rating") -> Rating:
    """A player's rating in one variant."""
    return Rating(
        variant=convert.variant_from_proto(
            message.variant, field=f"{field}.variant", default=ENGLISH
        ),
        rating=message.rating,
        deviation=message.deviation,
        provisional=message.provisional,
        games=message.games,
    )


def me_from_proto(message: players_pb2.GetMeResponse) -> Me:
    """The calling player, its streaks and its ratings."""
    return Me(
        player_from_proto(message.player),
        win_streak=message.streaks.win_streak,
        best_streak=message.streaks.best_streak,
        ratings=tuple(
            rating_from_proto(rating, field=f"ratings[{index}]")
            for index, rating in enumerate(message.ratings)
        ),
    )


def seat_from_proto(message: tables_pb2.Seat, *, field: str) -> Seat:
    """Who sits in a seat."""
    color = convert.color_from_proto(message.color, field=f"{field}.color")
    player = player_from_proto(message.player) if message.HasField("player") else None
    level = (
        _lookup(_LEVEL_OF_VALUE, message.computer_level, f"{field}.computer_level")
        if message.computer
        else None
    )
    rating = (
        rating_from_proto(message.rating, field=f"{field}.rating")
        if message.HasField("rating")
        else None
    )
    return Seat(color, player, level, rating)


def _squares(values: Iterable[int]) -> tuple[Square, ...]:
    return tuple(Square(value) for value in values)


def _moves(messages: Iterable[game_pb2.Move], field: str) -> tuple[Move, ...]:
    return tuple(
        convert.move_from_proto(message, field=f"{field}[{index}]")
        for index, message in enumerate(messages)
    )


def turn_from_proto(message: game_pb2.Turn, *, field: str = "turn") -> Turn:
    """The side to move and what it may do."""
    return Turn(
        side=convert.color_from_proto(message.side, field=f"{field}.side"),
        legal_moves=_moves(message.legal_moves, f"{field}.legal_moves"),
        must_capture=_squares(message.must_capture),
        may_offer_draw=message.may_offer_draw,
        draw_offer_wait_moves=message.draw_offer_wait_moves,
    )


def game_view_from_proto(message: game_pb2.GameView, *, field: str = "game") -> GameView:
    """A game as players and spectators see it."""
    variant = convert.variant_from_proto(message.variant, field=f"{field}.variant", default=ENGLISH)
    position = convert.board_from_proto(message.board, variant, field=f"{field}.board")
    start = (
        Position.from_fen(message.start_fen, variant)
        if message.start_fen
        else Position.initial(variant)
    )
    return GameView(
        variant=variant,
        position=position,
        start=start,
        moves=tuple(message.moves),
        captured_by_white=message.captured_by_white,
        captured_by_black=message.captured_by_black,
        draw_offer=convert.optional_color_from_proto(
            message.draw_offer, field=f"{field}.draw_offer"
        ),
        warnings=convert.warnings_from_proto(message.warnings, field=f"{field}.warnings"),
        outcome=(
            convert.outcome_from_proto(message.outcome, field=f"{field}.outcome")
            if message.HasField("outcome")
            else None
        ),
        turn=turn_from_proto(message.turn, field=f"{field}.turn")
        if message.HasField("turn")
        else None,
        quiet_plies=message.quiet_plies,
        repetitions=message.repetitions,
    )


def table_from_proto(message: tables_pb2.Table, role: int) -> Table:
    """A table, with the caller's role there."""
    variant = convert.variant_from_proto(message.variant, default=ENGLISH)
    return Table(
        table_id=message.table_id,
        code=message.code,
        join_url=message.join_url,
        variant=variant,
        opponent=_OPPONENT_OF_VALUE.get(message.opponent, Opponent.HUMAN),
        public=message.visibility == tables_pb2.VISIBILITY_PUBLIC,
        turn_timer_seconds=message.turn_timer_seconds,
        white=seat_from_proto(message.white, field="table.white"),
        black=seat_from_proto(message.black, field="table.black"),
        status=_lookup(_STATUS_OF_VALUE, message.status, "table.status"),
        seq=message.seq,
        created_at=time_from_proto(message.created_at),
        game=game_view_from_proto(message.game, field="table.game"),
        turn_deadline=(
            time_from_proto(message.turn_deadline) if message.HasField("turn_deadline") else None
        ),
        rematch_offered_by=convert.optional_color_from_proto(
            message.rematch_offered_by, field="table.rematch_offered_by"
        ),
        rematch_table_id=message.rematch_table_id or None,
        role=_ROLE_OF_VALUE.get(role, Role.SPECTATOR),
        rated=message.rated,
    )


def lobby_table_from_proto(message: tables_pb2.LobbyTable) -> LobbyTable:
    """An open public table as the lobby lists it."""
    return LobbyTable(
        table_id=message.table_id,
        code=message.code,
        variant=convert.variant_from_proto(message.variant, default=ENGLISH),
        turn_timer_seconds=message.turn_timer_seconds,
        host=player_from_proto(message.host),
        open_color=convert.color_from_proto(message.open_color, field="open_color"),
        created_at=time_from_proto(message.created_at),
        host_rating=(
            rating_from_proto(message.host_rating, field="host_rating")
            if message.HasField("host_rating")
            else None
        ),
    )


def record_from_proto(message: tables_pb2.GetRecordResponse) -> Record:
    """A table's game record."""
    return Record(
        game=game_view_from_proto(message.game),
        pdn=message.pdn,
        white=seat_from_proto(message.white, field="white"),
        black=seat_from_proto(message.black, field="black"),
    )


# -- events ---------------------------------------------------------------------------------


def _color(value: int) -> Color:
    return convert.color_from_proto(value, field="event.by")


def event_from_proto(message: tables_pb2.TableEvent, variant: Variant) -> TableEvent:
    """One event of a table's log; ``variant`` is the table's (for boards and moves)."""
    seq = message.seq
    time = time_from_proto(message.time)
    deadline = time_from_proto(message.turn_deadline) if message.HasField("turn_deadline") else None
    kind = message.WhichOneof("kind")
    if kind == "move_played":
        played = message.move_played
        return MovePlayed(
            seq=seq,
            time=time,
            turn_deadline=deadline,
            record=convert.move_record_from_proto(played.record),
            source=_SOURCE_OF_VALUE.get(played.source, MoveSource.PLAYER),
            position=convert.board_from_proto(played.board, variant),
            captured_by_white=played.captured_by_white,
            captured_by_black=played.captured_by_black,
            next=turn_from_proto(played.next, field="next") if played.HasField("next") else None,
        )
    if kind == "player_joined":
        return PlayerJoined(
            seq=seq,
            time=time,
            turn_deadline=deadline,
            color=_color(message.player_joined.color),
            player=player_from_proto(message.player_joined.player),
        )
    if kind == "game_over":
        return GameOver(
            seq=seq,
            time=time,
            turn_deadline=deadline,
            outcome=convert.outcome_from_proto(message.game_over.outcome),
        )
    if kind == "draw_offered":
        return DrawOffered(
            seq=seq, time=time, turn_deadline=deadline, by=_color(message.draw_offered.by)
        )
    if kind == "draw_declined":
        return DrawDeclined(
            seq=seq, time=time, turn_deadline=deadline, by=_color(message.draw_declined.by)
        )
    if kind == "draw_accepted":
        return DrawAccepted(
            seq=seq, time=time, turn_deadline=deadline, by=_color(message.draw_accepted.by)
        )
    if kind == "resigned":
        return Resigned(seq=seq, time=time, turn_deadline=deadline, by=_color(message.resigned.by))
    if kind == "moves_taken_back":
        taken = message.moves_taken_back
        return MovesTakenBack(
            seq=seq,
            time=time,
            turn_deadline=deadline,
            by=_color(taken.by),
            moves=tuple(taken.moves),
            game=game_view_from_proto(taken.game),
        )
    if kind == "rematch_offered":
        return RematchOffered(
            seq=seq, time=time, turn_deadline=deadline, by=_color(message.rematch_offered.by)
        )
    if kind == "rematch_started":
        started = message.rematch_started
        return RematchStarted(
            seq=seq, time=time, turn_deadline=deadline, table_id=started.table_id, code=started.code
        )
    return UnknownEvent(seq=seq, time=time, turn_deadline=deadline)


def events_from_proto(
    messages: Iterable[tables_pb2.TableEvent], variant: Variant
) -> tuple[TableEvent, ...]:
    """A command's events, in seq order."""
    return tuple(event_from_proto(message, variant) for message in messages)


def lobby_update_from_proto(message: tables_pb2.WatchLobbyResponse) -> LobbyUpdate | None:
    """One lobby change; None for a heartbeat or a kind newer than this SDK."""
    kind = message.WhichOneof("message")
    if kind == "snapshot":
        return LobbySnapshot(tuple(lobby_table_from_proto(t) for t in message.snapshot.tables))
    if kind == "table_opened":
        return TableOpened(lobby_table_from_proto(message.table_opened))
    if kind == "table_closed":
        return TableClosed(message.table_closed)
    return None
