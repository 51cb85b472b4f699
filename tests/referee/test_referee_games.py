"""Whole games through a real referee server on a real channel: each variant played to its
end move by move, draw offers, resignation, take-backs, set-up positions, and PDN that the
rules library reads back to the same game.

The referee's every answer is compared with the same game played locally with goti.rules."""

from __future__ import annotations

import random

import pytest

from goti.api import convert
from goti.api.v1 import game_pb2, referee_pb2
from goti.rules.color import Color
from goti.rules.game import Game
from goti.rules.pdn import read_pdn
from goti.rules.variants import ENGLISH, RUSSIAN, Variant

from .referee_calls import CALL_TIMEOUT, Referee, game_after, state_of

# Longer than any game the rules allow with the 40-move and repetition draws in force.
PLY_LIMIT = 2000


async def play_through(
    referee: Referee, variant: Variant, *, by_path: bool, seed: int
) -> tuple[Game, referee_pb2.ApplyResponse]:
    """Play a random game to its end through Apply, checking every answer against the
    same game played locally; the local game and the last answer."""
    local = Game(variant)
    started = await referee.StartGame(
        referee_pb2.StartGameRequest(variant=convert.variant_to_proto(variant)),
        timeout=CALL_TIMEOUT,
    )
    assert started.state == state_of(local)
    assert started.view == convert.game_view_to_proto(local)
    chooser = random.Random(seed)
    state = started.state
    answer = referee_pb2.ApplyResponse()
    while not local.is_over:
        assert local.ply < PLY_LIMIT
        move = chooser.choice(local.legal_moves)
        request = referee_pb2.ApplyRequest(state=state)
        if by_path:
            request.move_path.squares.extend(move.path)
        else:
            request.move_notation = local.notation(move)
        record = local.push(move)
        answer = await referee.Apply(request, timeout=CALL_TIMEOUT)
        assert answer.move == convert.move_record_to_proto(record, variant)
        assert answer.state == state_of(local)
        assert answer.view == convert.game_view_to_proto(local)
        assert not answer.taken_back
        state = answer.state
    return local, answer


@pytest.mark.parametrize(
    ("variant", "by_path", "seed"),
    [(ENGLISH, True, 1), (ENGLISH, False, 2), (RUSSIAN, True, 3), (RUSSIAN, False, 4)],
    ids=["english-paths", "english-notation", "russian-paths", "russian-notation"],
)
async def test_a_whole_game_is_played_through_apply(
    referee: Referee, variant: Variant, by_path: bool, seed: int
) -> None:
    local, last = await play_through(referee, variant, by_path=by_path, seed=seed)
    assert local.outcome is not None
    assert last.view.outcome == convert.outcome_to_proto(local.outcome)
    assert last.move.outcome == last.view.outcome
    assert not last.view.HasField("turn")
    assert list(last.view.moves) == list(local.moves)

    exported = await referee.ExportPdn(
        referee_pb2.ExportPdnRequest(state=last.state, tags={"Event": "Goti", "White": "Анна"}),
        timeout=CALL_TIMEOUT,
    )
    (read,) = read_pdn(exported.pdn)
    assert read.tags["Event"] == "Goti"
    assert read.tags["White"] == "Анна"
    assert read.game.state() == local.state()


async def test_a_shortened_capture_and_a_path_missing_landings_are_taken(referee: Referee) -> None:
    game = game_after([], fen="B:W6,14:B1")
    for request in (
        referee_pb2.ApplyRequest(state=state_of(game), move_notation="1x17"),
        referee_pb2.ApplyRequest(
            state=state_of(game), move_path=game_pb2.MovePath(squares=[1, 17])
        ),
    ):
        answer = await referee.Apply(request, timeout=CALL_TIMEOUT)
        assert answer.move.move.notation == "1x10x17"
        assert list(answer.move.move.captured) == [6, 14]
        assert answer.view.outcome.termination == game_pb2.TERMINATION_NO_PIECES


async def test_the_side_may_be_named_for_a_move(referee: Referee) -> None:
    answer = await referee.Apply(
        referee_pb2.ApplyRequest(
            state=state_of(Game()), side=game_pb2.COLOR_BLACK, move_notation="11-15"
        ),
        timeout=CALL_TIMEOUT,
    )
    assert answer.move.side == game_pb2.COLOR_BLACK
    assert answer.view.turn.side == game_pb2.COLOR_WHITE


# -- draws, resignation, take-backs -----------------------------------------------------


def action(
    state: game_pb2.GameState,
    side: game_pb2.Color.ValueType,
    what: referee_pb2.GameAction.ValueType,
) -> referee_pb2.ApplyRequest:
    return referee_pb2.ApplyRequest(state=state, side=side, game_action=what)


async def test_a_draw_offer_stays_open_over_the_offerers_move_and_is_accepted(
    referee: Referee,
) -> None:
    game = game_after(["11-15", "23-19", "8-11"])
    assert game.turn is Color.WHITE
    offered = await referee.Apply(
        action(state_of(game), game_pb2.COLOR_WHITE, referee_pb2.GAME_ACTION_OFFER_DRAW),
        timeout=CALL_TIMEOUT,
    )
    game.offer_draw(Color.WHITE)
    assert offered.state == state_of(game)
    assert offered.view.draw_offer == game_pb2.COLOR_WHITE
    assert not offered.HasField("move")
    assert not offered.view.turn.may_offer_draw

    moved = await referee.Apply(
        referee_pb2.ApplyRequest(state=offered.state, move_notation="22-17"), timeout=CALL_TIMEOUT
    )
    assert moved.view.draw_offer == game_pb2.COLOR_WHITE
    assert not moved.move.declined_draw_offer

    accepted = await referee.Apply(
        action(moved.state, game_pb2.COLOR_BLACK, referee_pb2.GAME_ACTION_ACCEPT_DRAW),
        timeout=CALL_TIMEOUT,
    )
    assert accepted.view.outcome == game_pb2.Outcome(termination=game_pb2.TERMINATION_AGREEMENT)
    assert accepted.view.draw_offer == game_pb2.COLOR_UNSPECIFIED
    assert not accepted.view.HasField("turn")
    assert accepted.state.outcome == accepted.view.outcome


async def test_a_draw_offer_is_declined_outright_or_by_moving(referee: Referee) -> None:
    game = game_after(["11-15", "23-19", "8-11"])
    game.offer_draw(Color.WHITE)
    game.play("22-17")

    declined = await referee.Apply(
        action(state_of(game), game_pb2.COLOR_BLACK, referee_pb2.GAME_ACTION_DECLINE_DRAW),
        timeout=CALL_TIMEOUT,
    )
    assert declined.view.draw_offer == game_pb2.COLOR_UNSPECIFIED
    assert declined.view.turn.side == game_pb2.COLOR_BLACK
    assert not declined.view.HasField("outcome")

    moved = await referee.Apply(
        referee_pb2.ApplyRequest(state=state_of(game), move_notation="9-13"),
        timeout=CALL_TIMEOUT,
    )
    assert moved.move.declined_draw_offer
    assert moved.view.draw_offer == game_pb2.COLOR_UNSPECIFIED
    # White offered at ply 3 and has moved once since: four more moves to wait.
    assert not moved.view.turn.may_offer_draw
    assert moved.view.turn.draw_offer_wait_moves == 4


async def test_resigning_on_your_turn_loses(referee: Referee) -> None:
    game = game_after(["c3-d4"], RUSSIAN)
    answer = await referee.Apply(
        action(state_of(game), game_pb2.COLOR_BLACK, referee_pb2.GAME_ACTION_RESIGN),
        timeout=CALL_TIMEOUT,
    )
    assert answer.view.outcome == game_pb2.Outcome(
        termination=game_pb2.TERMINATION_RESIGNATION, winner=game_pb2.COLOR_WHITE
    )
    game.resign(Color.BLACK)
    exported = await referee.ExportPdn(
        referee_pb2.ExportPdnRequest(state=answer.state), timeout=CALL_TIMEOUT
    )
    (read,) = read_pdn(exported.pdn)
    assert read.game.state() == game.state()


async def test_take_back_removes_your_last_move_and_the_reply(referee: Referee) -> None:
    moves = ["11-15", "23-19", "8-11", "22-17"]
    game = game_after(moves)
    assert game.turn is Color.BLACK

    mine = await referee.Apply(
        action(state_of(game), game_pb2.COLOR_BLACK, referee_pb2.GAME_ACTION_TAKE_BACK),
        timeout=CALL_TIMEOUT,
    )
    assert list(mine.taken_back) == ["22-17", "8-11"]
    assert mine.state == state_of(game_after(moves[:2]))
    assert not mine.HasField("move")

    theirs = await referee.Apply(
        action(state_of(game), game_pb2.COLOR_WHITE, referee_pb2.GAME_ACTION_TAKE_BACK),
        timeout=CALL_TIMEOUT,
    )
    assert list(theirs.taken_back) == ["22-17"]
    assert theirs.state == state_of(game_after(moves[:3]))


async def test_take_back_keeps_the_draw_offers_made_before(referee: Referee) -> None:
    game = game_after(["11-15", "23-19", "8-11"])
    game.offer_draw(Color.WHITE)
    for text in ["22-17", "9-13", "17-14", "10x17"]:
        game.play(text)
    answer = await referee.Apply(
        action(state_of(game), game_pb2.COLOR_WHITE, referee_pb2.GAME_ACTION_TAKE_BACK),
        timeout=CALL_TIMEOUT,
    )
    assert list(answer.taken_back) == ["10x17", "17-14"]
    assert answer.state.white_last_offer_ply == 3
    assert answer.view.turn.draw_offer_wait_moves == 4


# -- set-up positions, descriptions, legal moves ----------------------------------------


async def test_a_game_set_up_from_a_fen(referee: Referee) -> None:
    fen = "W:Wb6:Bc7,f6"
    started = await referee.StartGame(
        referee_pb2.StartGameRequest(variant=game_pb2.VARIANT_RUSSIAN, fen=fen),
        timeout=CALL_TIMEOUT,
    )
    local = Game.from_fen(fen, RUSSIAN)
    assert started.state == state_of(local)
    assert started.view.start_fen == started.view.board.fen == local.position.fen()
    assert {move.notation for move in started.view.turn.legal_moves} == {"b6:d8:g5", "b6:d8:h4"}
    assert list(started.view.turn.must_capture) == [9]

    answer = await referee.Apply(
        referee_pb2.ApplyRequest(state=started.state, move_notation="b6:d8:h4"),
        timeout=CALL_TIMEOUT,
    )
    assert answer.move.move.crowned
    assert answer.view.outcome == game_pb2.Outcome(
        termination=game_pb2.TERMINATION_NO_PIECES, winner=game_pb2.COLOR_WHITE
    )
    exported = await referee.ExportPdn(
        referee_pb2.ExportPdnRequest(state=answer.state), timeout=CALL_TIMEOUT
    )
    assert '[FEN "' in exported.pdn
    (read,) = read_pdn(exported.pdn)
    local.play("b6:d8:h4")
    assert read.game.state() == local.state()


async def test_a_set_up_position_may_already_be_over(referee: Referee) -> None:
    started = await referee.StartGame(
        referee_pb2.StartGameRequest(fen="W:W:B1"), timeout=CALL_TIMEOUT
    )
    assert started.view.variant == game_pb2.VARIANT_ENGLISH
    assert started.view.outcome == game_pb2.Outcome(
        termination=game_pb2.TERMINATION_NO_PIECES, winner=game_pb2.COLOR_BLACK
    )
    assert not started.view.HasField("turn")


async def test_describe_and_list_legal_moves_match_the_rules(referee: Referee) -> None:
    game = game_after(["c3-d4", "f6-g5", "d4-c5", "b6:d4"], RUSSIAN)
    described = await referee.DescribeGame(
        referee_pb2.DescribeGameRequest(state=state_of(game)), timeout=CALL_TIMEOUT
    )
    assert described.view == convert.game_view_to_proto(game)
    listed = await referee.ListLegalMoves(
        referee_pb2.ListLegalMovesRequest(state=state_of(game)), timeout=CALL_TIMEOUT
    )
    assert listed.side == game_pb2.COLOR_WHITE
    assert list(listed.legal_moves) == [convert.move_to_proto(m, RUSSIAN) for m in game.legal_moves]
    assert list(listed.must_capture) == game.must_capture
    assert listed.must_capture


async def test_a_finished_game_has_no_legal_moves(referee: Referee) -> None:
    game = game_after(["11-15"])
    game.resign(Color.WHITE)
    listed = await referee.ListLegalMoves(
        referee_pb2.ListLegalMovesRequest(state=state_of(game)), timeout=CALL_TIMEOUT
    )
    assert not listed.legal_moves
    assert not listed.must_capture


async def test_pdn_of_an_unfinished_game_and_of_an_agreed_draw(referee: Referee) -> None:
    game = game_after(["11-15", "23-19", "8-11", "22-17"])
    exported = await referee.ExportPdn(
        referee_pb2.ExportPdnRequest(
            state=state_of(game),
            tags={"Result": "1-0", "GameType": "25", "Date": "2026.11.30", "Round": "3"},
        ),
        timeout=CALL_TIMEOUT,
    )
    # Goti writes Result and GameType itself.
    assert '[Result "*"]' in exported.pdn
    assert '[GameType "21,B,8,8,N1,0"]' in exported.pdn
    assert exported.pdn.endswith("*\n")
    assert all(len(line) <= 79 for line in exported.pdn.splitlines())
    (read,) = read_pdn(exported.pdn)
    assert read.game.state() == game.state()
    assert read.tags["Round"] == "3"

    game.offer_draw(Color.BLACK)
    game.play("9-13")
    game.accept_draw(Color.WHITE)
    exported = await referee.ExportPdn(
        referee_pb2.ExportPdnRequest(state=state_of(game)), timeout=CALL_TIMEOUT
    )
    (read,) = read_pdn(exported.pdn)
    assert read.game.outcome == game.outcome
    assert read.game.moves == game.moves
