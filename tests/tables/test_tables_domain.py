"""The tables service's pure parts: seats and roles, codes, request checks, the log's lean
events, and the examples in their docstrings."""

from __future__ import annotations

import asyncio
import doctest
import importlib

import pytest

from goti.api.v1 import game_pb2, tables_pb2
from goti.tables import background, events, seating, validation
from goti.tables.refusals import CallRefusedError

from .table_records import anns_table

WHITE, BLACK = game_pb2.COLOR_WHITE, game_pb2.COLOR_BLACK


@pytest.mark.parametrize(
    "name",
    [
        "goti.tables.seating",
        "goti.tables.events",
        "goti.tables.validation",
        "goti.tables.players",
        "goti.tables.peers",
    ],
)
def test_docstring_examples(name: str) -> None:
    failures, _ = doctest.testmod(importlib.import_module(name))
    assert failures == 0


def test_codes_are_read_as_people_type_them() -> None:
    for _ in range(200):
        code = seating.new_code()
        assert seating.read_code(code) == code
        assert seating.read_code(f" {code[:2].lower()} - {code[2:]}") == code
    for typed in ("", "ABC", "ABCDEFG", "ABCDE0", "ABCDEI", "ABCDEL", "ABCDE1", "ÄBCDEF"):
        assert seating.read_code(typed) is None


def test_the_starting_colour_and_who_takes_it() -> None:
    english, russian = game_pb2.VARIANT_ENGLISH, game_pb2.VARIANT_RUSSIAN
    assert seating.starting_color(english) == BLACK
    assert seating.starting_color(russian) == WHITE
    assert seating.creator_color(english, tables_pb2.STARTING_PLAYER_PLAYER_1) == BLACK
    assert seating.creator_color(english, tables_pb2.STARTING_PLAYER_PLAYER_2) == WHITE
    assert seating.creator_color(russian, tables_pb2.STARTING_PLAYER_PLAYER_1) == WHITE
    drawn = {seating.creator_color(english, tables_pb2.STARTING_PLAYER_RANDOM) for _ in range(64)}
    assert drawn == {WHITE, BLACK}


def test_seats_and_roles_for_each_opponent() -> None:
    waiting = anns_table(tables_pb2.OPPONENT_HUMAN)
    assert waiting.status == tables_pb2.TABLE_STATUS_WAITING and seating.is_listed(waiting)
    assert seating.open_color(waiting) == BLACK
    assert seating.role_of(waiting, "ann") == tables_pb2.ROLE_WHITE
    assert seating.role_of(waiting, "bob") == tables_pb2.ROLE_SPECTATOR
    assert seating.role_of(waiting, None) == tables_pb2.ROLE_SPECTATOR
    listing = events.lobby_table("t1", waiting)
    assert (listing.host.display_name, listing.open_color, listing.code) == ("Ann", BLACK, "K7QX2M")

    both = anns_table(tables_pb2.OPPONENT_PASS_AND_PLAY)
    assert both.status == tables_pb2.TABLE_STATUS_PLAYING and not seating.is_listed(both)
    assert seating.role_of(both, "ann") == tables_pb2.ROLE_BOTH

    computer = anns_table(tables_pb2.OPPONENT_COMPUTER_NORMAL)
    assert seating.computer_color(computer) == BLACK
    assert computer.black.player.display_name == "Computer (Normal)"
    # Nobody holds the computer's seat, not even a player with its empty id.
    assert seating.role_of(computer, "") == tables_pb2.ROLE_SPECTATOR

    rematch = seating.rematch_table(computer, code="ABCDEF", created_ms=2_000)
    assert seating.computer_color(rematch) == WHITE
    assert seating.role_of(rematch, "ann") == tables_pb2.ROLE_BLACK


def test_who_acts_for_which_side() -> None:
    assert seating.acting_color([BLACK], game_pb2.COLOR_UNSPECIFIED, WHITE) == BLACK
    assert seating.acting_color([WHITE, BLACK], game_pb2.COLOR_UNSPECIFIED, BLACK) == BLACK
    assert seating.acting_color([WHITE, BLACK], WHITE, BLACK) == WHITE
    with pytest.raises(CallRefusedError) as refused:
        seating.acting_color([], game_pb2.COLOR_UNSPECIFIED, WHITE)
    assert refused.value.status.reason == "NOT_A_PLAYER"
    with pytest.raises(CallRefusedError) as refused:
        seating.acting_color([BLACK], WHITE, WHITE)
    assert refused.value.status.reason == "NOT_YOUR_SEAT"


def test_page_tokens_round_trip_and_strangers_are_refused() -> None:
    token = validation.next_page_token(1_700_000_000_123, "abc_DEF-1")
    assert validation.page_token(token) == (1_700_000_000_123, "abc_DEF-1")
    for bad in ("x", "djE6", "!!!!", "a" * 200, "djE6MTIzOmFi/Y2Q"):
        with pytest.raises(CallRefusedError):
            validation.page_token(bad)


def test_a_retry_has_the_same_fingerprint_and_another_command_does_not() -> None:
    first = tables_pb2.PlayRequest(table_id="t", request_id="a", expected_seq=3, notation="11-15")
    retry = tables_pb2.PlayRequest(table_id="t", request_id="b", expected_seq=9, notation="11-15")
    other = tables_pb2.PlayRequest(table_id="t", request_id="a", expected_seq=3, notation="11-16")
    assert validation.fingerprint("Play", first) == validation.fingerprint("Play", retry)
    assert validation.fingerprint("Play", first) != validation.fingerprint("Play", other)
    resign = tables_pb2.ResignRequest(table_id="t", request_id="a", expected_seq=3)
    offer = tables_pb2.OfferDrawRequest(table_id="t", request_id="a", expected_seq=3)
    assert validation.fingerprint("Resign", resign) != validation.fingerprint("OfferDraw", offer)


def test_display_names() -> None:
    assert validation.display_name("  Ann  ") == "Ann"
    assert validation.display_name("Ölga Ünal") == "Ölga Ünal"
    for bad in ("", "   ", "x" * 25, "tab\there", "bell\x07", "zero\u200bwidth"):
        with pytest.raises(CallRefusedError):
            validation.display_name(bad)


def test_the_log_keeps_moves_without_what_the_board_tells() -> None:
    move = tables_pb2.TableEvent(
        seq=4,
        move_played=tables_pb2.MovePlayed(
            record=game_pb2.MoveRecord(side=WHITE, ply=3),
            board=game_pb2.Board(fen="B:W21-32:B1-12", white=1, black=2, turn=BLACK),
            next=game_pb2.Turn(
                side=BLACK,
                legal_moves=[game_pb2.Move(path=[9, 13], notation="9-13")],
                must_capture=[9],
                may_offer_draw=True,
            ),
        ),
    )
    kept = events.lean(move)
    assert kept.move_played.board.fen == "" and not kept.move_played.next.legal_moves
    assert not kept.move_played.next.must_capture and not kept.move_played.next.side
    assert not kept.move_played.record.side
    assert kept.move_played.next.may_offer_draw and kept.move_played.board.white == 1
    assert move.move_played.board.fen, "the event sent live is left whole"
    board = events.board_of(kept)
    assert board is not None
    view = game_pb2.GameView(
        board=game_pb2.Board(fen="B:W21-32:B1-12"),
        turn=game_pb2.Turn(
            legal_moves=[game_pb2.Move(path=[9, 13], notation="9-13")], must_capture=[9]
        ),
    )
    events.restore(kept, view)
    assert kept == move
    joined = tables_pb2.TableEvent(seq=1, player_joined=tables_pb2.PlayerJoined(color=WHITE))
    assert events.lean(joined) is joined and events.board_of(joined) is None
    state = game_pb2.GameState.FromString(events.position_state(game_pb2.VARIANT_ENGLISH, board))
    assert state.start == state.position and state.position.turn == BLACK


async def test_a_task_that_swallows_a_cancellation_is_cancelled_again() -> None:
    swallowed = 0

    async def stubborn() -> None:
        nonlocal swallowed
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                if swallowed:
                    raise
                swallowed += 1

    task = asyncio.ensure_future(stubborn())
    await asyncio.sleep(0)
    await asyncio.wait_for(background.cancel_and_wait([task]), 10)
    assert task.cancelled() and swallowed == 1
