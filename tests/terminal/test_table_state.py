"""A table kept current from its watch: events folded in seq order, each once, and what the
screen reads from the result (whose turn, the move-limit count, the seat at the bottom)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from goti.rules import ENGLISH, Color, Game, Outcome, Position, Termination
from goti_client.events import (
    DrawDeclined,
    DrawOffered,
    GameOver,
    MovePlayed,
    MovesTakenBack,
    PlayerJoined,
    RematchStarted,
    Snapshot,
)
from goti_client.tables import (
    GameView,
    MoveSource,
    Opponent,
    Player,
    Role,
    Seat,
    Table,
    TableStatus,
    Turn,
)
from goti_client.terminal.table_state import TableState, move_number

NOW = datetime(2026, 1, 1, tzinfo=UTC)
ANN = Player("p_ann", "Ann")
BEN = Player("p_ben", "Ben")


def view_of(game: Game) -> GameView:
    """The game as the server would show it, built with the rules library."""
    turn = None
    if not game.is_over:
        turn = Turn(
            side=game.turn,
            legal_moves=tuple(game.legal_moves),
            must_capture=tuple(game.must_capture),
            may_offer_draw=game.may_offer_draw(game.turn),
            draw_offer_wait_moves=game.draw_offer_wait(game.turn),
        )
    return GameView(
        variant=game.variant,
        position=game.position,
        start=game.start,
        moves=game.moves,
        captured_by_white=game.captured(Color.WHITE),
        captured_by_black=game.captured(Color.BLACK),
        draw_offer=game.draw_offer,
        warnings=game.warnings,
        outcome=game.outcome,
        turn=turn,
        quiet_plies=game.quiet_plies,
        repetitions=game.repetitions,
    )


def table_of(game: Game, *, seq: int, role: Role = Role.BLACK) -> Table:
    return Table(
        table_id="t_1",
        code="K7QX2M",
        join_url="goti://join/K7QX2M",
        variant=game.variant,
        opponent=Opponent.HUMAN,
        public=False,
        turn_timer_seconds=0,
        white=Seat(Color.WHITE, BEN),
        black=Seat(Color.BLACK, ANN),
        status=TableStatus.PLAYING,
        seq=seq,
        created_at=NOW,
        game=view_of(game),
        turn_deadline=None,
        rematch_offered_by=None,
        rematch_table_id=None,
        role=role,
    )


def played(game: Game, notation: str, seq: int) -> MovePlayed:
    """Play ``notation`` on ``game`` and the event the server would send for it."""
    record = game.play(notation)
    view = view_of(game)
    return MovePlayed(
        seq=seq,
        time=NOW,
        turn_deadline=None,
        record=record,
        source=MoveSource.PLAYER,
        position=game.position,
        captured_by_white=view.captured_by_white,
        captured_by_black=view.captured_by_black,
        next=view.turn,
    )


def test_moves_fold_in_with_the_last_move_and_whose_turn() -> None:
    game = Game()
    state = TableState(table_of(game, seq=3))
    assert state.my_turn is not None
    state = state.fold(played(game, "11-15", 4))
    assert state.seq == 4
    assert state.game.moves == ("11-15",)
    assert state.game.position == game.position
    assert state.last_move is not None
    assert state.last_move.path == (11, 15)
    assert state.turn is not None
    assert state.turn.side is Color.WHITE
    assert state.my_turn is None
    assert state.seat_at_bottom is Color.BLACK


def test_an_event_already_folded_changes_nothing() -> None:
    game = Game()
    state = TableState(table_of(game, seq=0))
    event = played(game, "11-15", 1)
    once = state.fold(event)
    assert once.fold(event) is once
    # A snapshot older than what is shown is skipped too; a newer one replaces it.
    assert once.fold(Snapshot(table_of(Game(), seq=0))) is once
    newer = table_of(game, seq=1)
    assert once.fold(Snapshot(newer)).table is newer


def test_captures_and_the_move_limit_count() -> None:
    game = Game()
    state = TableState(table_of(game, seq=0))
    for seq, notation in enumerate(("11-15", "22-18", "15x22"), start=1):
        state = state.fold(played(game, notation, seq))
    assert state.captured_by(Color.BLACK) == 1
    assert state.game.quiet_plies == 0
    quiet = dataclasses.replace(state.table.game, quiet_plies=60)
    state = TableState(dataclasses.replace(state.table, game=quiet))
    assert state.moves_before_move_limit == 10


def test_draw_offers_and_their_answers() -> None:
    game = Game()
    for notation in ("11-15", "23-19"):
        game.play(notation)
    state = TableState(table_of(game, seq=2))
    assert state.turn is not None
    assert state.turn.may_offer_draw
    state = state.fold(DrawOffered(seq=3, time=NOW, turn_deadline=None, by=Color.BLACK))
    assert state.game.draw_offer is Color.BLACK
    assert state.turn is not None
    assert not state.turn.may_offer_draw
    state = state.fold(DrawDeclined(seq=4, time=NOW, turn_deadline=None, by=Color.WHITE))
    assert state.game.draw_offer is None


def test_the_end_of_a_game_and_a_take_back() -> None:
    game = Game()
    state = TableState(table_of(game, seq=0))
    state = state.fold(played(game, "11-15", 1))
    taken_back = MovesTakenBack(
        seq=2, time=NOW, turn_deadline=None, by=Color.BLACK, moves=("11-15",), game=view_of(Game())
    )
    state = state.fold(taken_back)
    assert state.game.moves == ()
    assert state.last_move is None
    over = GameOver(
        seq=3,
        time=NOW,
        turn_deadline=None,
        outcome=Outcome(Termination.RESIGNATION, Color.WHITE),
    )
    state = state.fold(over)
    assert state.table.status is TableStatus.FINISHED
    assert state.turn is None
    assert state.game.is_over
    state = state.fold(
        RematchStarted(seq=4, time=NOW, turn_deadline=None, table_id="t_2", code="ABC234")
    )
    assert state.table.rematch_table_id == "t_2"


def test_a_player_sitting_down_starts_the_game() -> None:
    table = dataclasses.replace(
        table_of(Game(), seq=0),
        status=TableStatus.WAITING,
        white=Seat(Color.WHITE, None),
    )
    state = TableState(table)
    assert state.turn is None
    state = state.fold(
        PlayerJoined(seq=1, time=NOW, turn_deadline=None, color=Color.WHITE, player=BEN)
    )
    assert state.table.status is TableStatus.PLAYING
    assert state.table.white.player == BEN
    assert state.my_turn is not None


def test_spectators_and_pass_and_play_see_white_at_the_bottom() -> None:
    assert TableState(table_of(Game(), seq=0, role=Role.SPECTATOR)).seat_at_bottom is Color.WHITE
    both = TableState(table_of(Game(), seq=0, role=Role.BOTH))
    assert both.seat_at_bottom is Color.WHITE
    assert both.my_turn is not None
    assert TableState(table_of(Game(), seq=0, role=Role.WHITE)).my_turn is None


def test_the_move_number_counts_a_ply_of_each_side_as_one_move() -> None:
    game = Game()
    assert move_number(view_of(game)) == 1
    for notation, number in (("11-15", 1), ("23-19", 2), ("8-11", 2), ("22-17", 3)):
        game.play(notation)
        assert move_number(view_of(game)) == number, game.moves
    # From a set-up position with White, the second side, to move: its ply ends move 1.
    set_up = Game(ENGLISH, start=Position.from_fen("W:W21,22:B9,10", ENGLISH))
    assert move_number(view_of(set_up)) == 1
    set_up.play(set_up.legal_moves[0])
    assert move_number(view_of(set_up)) == 2
