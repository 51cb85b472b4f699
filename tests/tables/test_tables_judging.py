"""Commands judged against the table they name, before the referee is asked: who acts, for
which side, what the referee is asked, and what a rematch request does."""

from __future__ import annotations

import pytest

from goti.api.v1 import game_pb2, referee_pb2, tables_pb2
from goti.tables import commands, seating
from goti.tables.loading import LoadedTable
from goti.tables.refusals import CallRefusedError

from .table_records import anns_table

WHITE, BLACK = game_pb2.COLOR_WHITE, game_pb2.COLOR_BLACK
UNSPECIFIED = game_pb2.COLOR_UNSPECIFIED


def _loaded(record: tables_pb2.Table, to_move: game_pb2.Color.ValueType) -> LoadedTable:
    # The side to move is given, so the game state itself is never read.
    return LoadedTable("t1", 3, record, b"", to_move)


def _reason(refused: pytest.ExceptionInfo[CallRefusedError]) -> str:
    return refused.value.status.reason


def test_a_move_asks_the_referee_for_the_callers_side_by_path_or_notation() -> None:
    loaded = _loaded(anns_table(tables_pb2.OPPONENT_COMPUTER_NORMAL), WHITE)
    by_path = commands.judge(commands.Move(UNSPECIFIED, (11, 15)), loaded, [WHITE])
    assert by_path.side == WHITE and list(by_path.move_path.squares) == [11, 15]
    assert by_path.WhichOneof("action") == "move_path"
    by_notation = commands.judge(commands.Move(UNSPECIFIED, None, "11-15"), loaded, [WHITE])
    assert by_notation.WhichOneof("action") == "move_notation"
    assert by_notation.move_notation == "11-15"


def test_a_move_out_of_turn_or_for_another_seat_is_refused() -> None:
    loaded = _loaded(anns_table(tables_pb2.OPPONENT_COMPUTER_NORMAL), BLACK)
    with pytest.raises(CallRefusedError) as refused:
        commands.judge(commands.Move(UNSPECIFIED, (11, 15)), loaded, [WHITE])
    assert _reason(refused) == "NOT_YOUR_TURN"
    with pytest.raises(CallRefusedError) as refused:
        commands.judge(commands.Move(BLACK, (11, 15)), loaded, [WHITE])
    assert _reason(refused) == "NOT_YOUR_SEAT"


def test_a_game_action_goes_to_the_referee_whoever_is_to_move() -> None:
    loaded = _loaded(anns_table(tables_pb2.OPPONENT_COMPUTER_NORMAL), BLACK)
    offer = commands.GameAction(UNSPECIFIED, referee_pb2.GAME_ACTION_OFFER_DRAW)
    asked = commands.judge(offer, loaded, [WHITE])
    assert (asked.side, asked.game_action) == (WHITE, referee_pb2.GAME_ACTION_OFFER_DRAW)


def test_moves_are_taken_back_only_against_the_computer_and_during_the_game() -> None:
    between_people = _loaded(anns_table(tables_pb2.OPPONENT_PASS_AND_PLAY), WHITE)
    with pytest.raises(CallRefusedError) as refused:
        commands.judge(commands.TakeBack(), between_people, [WHITE, BLACK])
    assert _reason(refused) == "TAKE_BACK_NOT_ALLOWED"
    against_computer = anns_table(tables_pb2.OPPONENT_COMPUTER_EASY)
    asked = commands.judge(commands.TakeBack(), _loaded(against_computer, BLACK), [WHITE])
    assert (asked.side, asked.game_action) == (WHITE, referee_pb2.GAME_ACTION_TAKE_BACK)
    against_computer.status = tables_pb2.TABLE_STATUS_FINISHED
    with pytest.raises(CallRefusedError):
        commands.judge(commands.TakeBack(), _loaded(against_computer, BLACK), [WHITE])


def test_what_a_rematch_request_does() -> None:
    people = anns_table(tables_pb2.OPPONENT_HUMAN)
    seating.seat(people, BLACK).player.player_id = "bob"
    people.status = tables_pb2.TABLE_STATUS_PLAYING
    with pytest.raises(CallRefusedError) as refused:
        commands.judge_rematch(people, [WHITE])
    assert _reason(refused) == "GAME_IN_PROGRESS"
    people.status = tables_pb2.TABLE_STATUS_FINISHED
    assert commands.judge_rematch(people, [WHITE]) is commands.RematchStep.OFFER
    people.rematch_offered_by = WHITE
    assert commands.judge_rematch(people, [WHITE]) is commands.RematchStep.WAIT
    assert commands.judge_rematch(people, [BLACK]) is commands.RematchStep.START
    people.rematch_table_id = "t2"
    assert commands.judge_rematch(people, [BLACK]) is commands.RematchStep.SHOW

    computer = anns_table(tables_pb2.OPPONENT_COMPUTER_HARD)
    computer.status = tables_pb2.TABLE_STATUS_FINISHED
    assert commands.judge_rematch(computer, [WHITE]) is commands.RematchStep.START
    both = anns_table(tables_pb2.OPPONENT_PASS_AND_PLAY)
    both.status = tables_pb2.TABLE_STATUS_FINISHED
    assert commands.judge_rematch(both, [WHITE, BLACK]) is commands.RematchStep.START
