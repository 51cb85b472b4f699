"""What the tables service sends and stores: table events, tables, lobby entries — built
from the referee's answers and the stored table, with no I/O.

The log keeps every event in a lean form: a MovePlayed without its board's FEN, the sides
(the board's side to move says both) and the next side's legal moves and must-capture
squares, a MovesTakenBack without the FEN and legal moves in its game view.  Both follow from the
board, which the lean form keeps, so :func:`position_state` names the position to ask the
referee about and :func:`restore` puts its answer back.  Watchers get the full form live (it
is what is published) and the restored form when they catch up from the log.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from google.protobuf.timestamp_pb2 import Timestamp

from goti.api.v1 import game_pb2, referee_pb2, tables_pb2
from goti.tables import seating

RESULTS: Final[dict[int, str]] = {
    game_pb2.COLOR_WHITE: "1-0",
    game_pb2.COLOR_BLACK: "0-1",
    game_pb2.COLOR_UNSPECIFIED: "1/2-1/2",
}


def timestamp(ms: int) -> Timestamp:
    """A protobuf timestamp of milliseconds since the epoch."""
    stamp = Timestamp()
    stamp.FromMilliseconds(ms)
    return stamp


def game_over(outcome: game_pb2.Outcome) -> tables_pb2.TableEvent:
    """The GameOver event for an outcome."""
    return tables_pb2.TableEvent(
        game_over=tables_pb2.GameOver(outcome=outcome, result=RESULTS[outcome.winner])
    )


def move_played(
    response: referee_pb2.ApplyResponse, source: tables_pb2.MoveSource.ValueType
) -> list[tables_pb2.TableEvent]:
    """The events of a move the referee applied: a MovePlayed, and a GameOver if it ended
    the game."""
    view = response.view
    played = tables_pb2.MovePlayed(
        record=response.move,
        source=source,
        board=view.board,
        captured_by_white=view.captured_by_white,
        captured_by_black=view.captured_by_black,
    )
    if view.HasField("turn"):
        played.next.CopyFrom(view.turn)
    events = [tables_pb2.TableEvent(move_played=played)]
    if view.HasField("outcome"):
        events.append(game_over(view.outcome))
    return events


def draw_offered(by: game_pb2.Color.ValueType) -> list[tables_pb2.TableEvent]:
    """The events of a draw offer."""
    return [tables_pb2.TableEvent(draw_offered=tables_pb2.DrawOffered(by=by))]


def draw_answered(
    by: game_pb2.Color.ValueType, response: referee_pb2.ApplyResponse, *, accepted: bool
) -> list[tables_pb2.TableEvent]:
    """The events of an answer to a draw offer: DrawAccepted and GameOver, or DrawDeclined."""
    if not accepted:
        return [tables_pb2.TableEvent(draw_declined=tables_pb2.DrawDeclined(by=by))]
    return [
        tables_pb2.TableEvent(draw_accepted=tables_pb2.DrawAccepted(by=by)),
        game_over(response.view.outcome),
    ]


def resigned(
    by: game_pb2.Color.ValueType, response: referee_pb2.ApplyResponse
) -> list[tables_pb2.TableEvent]:
    """The events of a resignation: Resigned and GameOver."""
    return [
        tables_pb2.TableEvent(resigned=tables_pb2.Resigned(by=by)),
        game_over(response.view.outcome),
    ]


def taken_back(
    by: game_pb2.Color.ValueType, response: referee_pb2.ApplyResponse
) -> list[tables_pb2.TableEvent]:
    """The event of a take-back."""
    return [
        tables_pb2.TableEvent(
            moves_taken_back=tables_pb2.MovesTakenBack(
                by=by, moves=response.taken_back, game=response.view
            )
        )
    ]


def rematch_offered(by: game_pb2.Color.ValueType) -> list[tables_pb2.TableEvent]:
    """The event of a rematch request."""
    return [tables_pb2.TableEvent(rematch_offered=tables_pb2.RematchOffered(by=by))]


def rematch_started(table_id: str, code: str) -> list[tables_pb2.TableEvent]:
    """The event of a rematch starting at a new table."""
    return [
        tables_pb2.TableEvent(
            rematch_started=tables_pb2.RematchStarted(table_id=table_id, code=code)
        )
    ]


def player_joined(color: game_pb2.Color.ValueType, seat: tables_pb2.Seat) -> tables_pb2.TableEvent:
    """The event of a person taking the open seat."""
    return tables_pb2.TableEvent(
        player_joined=tables_pb2.PlayerJoined(color=color, player=seat.player)
    )


def number(
    events: Iterable[tables_pb2.TableEvent],
    *,
    after_seq: int,
    time_ms: int,
    deadline_ms: int | None,
) -> list[tables_pb2.TableEvent]:
    """Give events their seqs (from ``after_seq + 1``), their time and the turn deadline
    that follows them."""
    numbered = []
    for offset, event in enumerate(events, start=1):
        event.seq = after_seq + offset
        event.time.FromMilliseconds(time_ms)
        if deadline_ms is None:
            event.ClearField("turn_deadline")
        else:
            event.turn_deadline.FromMilliseconds(deadline_ms)
        numbered.append(event)
    return numbered


# -- the log's lean form --------------------------------------------------------------------


def _board_view(view: game_pb2.GameView) -> None:
    view.board.fen = ""
    if view.HasField("turn"):
        del view.turn.legal_moves[:]


def lean(event: tables_pb2.TableEvent) -> tables_pb2.TableEvent:
    """The event as the log keeps it: what follows from the board left out (its FEN, the
    sides, the legal moves and the pieces that must capture)."""
    kind = event.WhichOneof("kind")
    if kind == "move_played":
        kept = tables_pb2.TableEvent()
        kept.CopyFrom(event)
        played = kept.move_played
        played.board.fen = ""
        played.record.ClearField("side")
        if played.HasField("next"):
            played.next.ClearField("side")
            del played.next.legal_moves[:]
            del played.next.must_capture[:]
        return kept
    if kind == "moves_taken_back":
        kept = tables_pb2.TableEvent()
        kept.CopyFrom(event)
        _board_view(kept.moves_taken_back.game)
        return kept
    return event


def board_of(event: tables_pb2.TableEvent) -> game_pb2.Board | None:
    """The board a lean event needs described again; None when it needs nothing."""
    kind = event.WhichOneof("kind")
    if kind == "move_played":
        return event.move_played.board
    if kind == "moves_taken_back":
        return event.moves_taken_back.game.board
    return None


LOST_ON_THE_BOARD: Final = frozenset(
    {game_pb2.TERMINATION_NO_PIECES, game_pb2.TERMINATION_NO_MOVES}
)
"""Endings that the board itself shows: a state at that board must carry its outcome, or the
referee rightly refuses it as a game that should have ended."""


def position_state(
    variant: int, board: game_pb2.Board, outcome: game_pb2.Outcome | None = None
) -> bytes:
    """A game state that starts at ``board``: the referee's description of it gives the
    board's FEN and the legal moves there, which is all a lean event lacks.

    ``outcome`` is how the game ended when the event's move ended it; it goes into the state
    only when the board shows it (no pieces or no moves for the side to move), since a
    repetition or the move limit cannot be seen on one board.
    """
    position = game_pb2.Position(
        white=board.white, black=board.black, kings=board.kings, turn=board.turn
    )
    state = game_pb2.GameState(variant=variant, start=position, position=position)  # type: ignore[arg-type]
    if outcome is not None and outcome.termination in LOST_ON_THE_BOARD:
        state.outcome.CopyFrom(outcome)
    return state.SerializeToString(deterministic=True)


def ending_of(logged: Sequence[tables_pb2.TableEvent], index: int) -> game_pb2.Outcome | None:
    """How the game ended, when the event at ``index`` ends it: a move after which no turn
    follows is committed with its GameOver, which the log keeps right after it."""
    event = logged[index]
    if event.WhichOneof("kind") != "move_played" or event.move_played.HasField("next"):
        return None
    for later in logged[index + 1 :]:
        if later.WhichOneof("kind") == "game_over":
            return later.game_over.outcome
    return None


def restore(event: tables_pb2.TableEvent, view: game_pb2.GameView) -> None:
    """Put back into a lean event what its board and the referee's description of it say."""
    kind = event.WhichOneof("kind")
    if kind == "move_played":
        played = event.move_played
        played.board.fen = view.board.fen
        # The side to move after a move is the other side: the mover's opponent.
        played.record.side = seating.opponent_color(played.board.turn)
        if played.HasField("next"):
            played.next.side = played.board.turn
            if not played.next.legal_moves:
                played.next.legal_moves.extend(view.turn.legal_moves)
                played.next.must_capture.extend(view.turn.must_capture)
    elif kind == "moves_taken_back":
        game = event.moves_taken_back.game
        game.board.fen = view.board.fen
        if game.HasField("turn") and not game.turn.legal_moves:
            game.turn.legal_moves.extend(view.turn.legal_moves)


# -- tables and the lobby -------------------------------------------------------------------


def table_message(
    table_id: str,
    record: tables_pb2.Table,
    *,
    seq: int,
    view: game_pb2.GameView,
    join_base_url: str,
) -> tables_pb2.Table:
    """The table as the API shows it, from its stored record."""
    table = tables_pb2.Table()
    table.CopyFrom(record)
    table.table_id = table_id
    table.join_url = join_base_url + record.code
    table.seq = seq
    table.game.CopyFrom(view)
    return table


def lobby_table(table_id: str, record: tables_pb2.Table) -> tables_pb2.LobbyTable:
    """An open public table as the lobby lists it."""
    color = seating.open_color(record)
    listing = tables_pb2.LobbyTable(
        table_id=table_id,
        code=record.code,
        variant=record.variant,
        turn_timer_seconds=record.turn_timer_seconds,
        host=seating.host(record),
        open_color=game_pb2.COLOR_UNSPECIFIED if color is None else color,
        created_at=record.created_at,
    )
    for host_color in seating.COLORS:
        seat = seating.seat(record, host_color)
        if seat.HasField("player") and seat.HasField("rating"):
            listing.host_rating.CopyFrom(seat.rating)
            break
    return listing


def lobby_opened(listing: tables_pb2.LobbyTable) -> bytes:
    """The lobby message for a table that opened."""
    return tables_pb2.WatchLobbyResponse(table_opened=listing).SerializeToString()


def lobby_closed(table_id: str) -> bytes:
    """The lobby message for a table that left the lobby."""
    return tables_pb2.WatchLobbyResponse(table_closed=table_id).SerializeToString()


def serialized(events: Sequence[tables_pb2.TableEvent]) -> list[bytes]:
    """Events as the log and the table channel carry them."""
    return [event.SerializeToString() for event in events]
