"""The rules of play: the automatic end, draws, warnings, offers, resignation, take-backs."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goti.rules.color import Color
from goti.rules.errors import ActionRefusedError, Refusal
from goti.rules.game import (
    MOVE_LIMIT_PLIES,
    MOVE_LIMIT_WARNING_PLIES,
    Game,
    GameWarning,
    InvalidGameStateError,
    Outcome,
    Termination,
    position_key,
)
from goti.rules.position import Position

# -- the automatic end ----------------------------------------------------------------------


def test_taking_the_last_piece_wins() -> None:
    """Black's man 14 jumps White's only man on 18: White has no pieces and loses."""
    game = Game.from_fen("B:W18:B14", "english")
    record = game.play("14x23")
    assert record.outcome == Outcome(Termination.NO_PIECES, Color.BLACK)
    assert game.is_over and game.legal_moves == []
    assert game.captured(Color.BLACK) == 1


def test_blocking_the_last_move_wins() -> None:
    """White's man on 29 (a1) can only go to 25; Black's 21-25 fills it, and the jump over 25
    lands on 22, also Black's: White has a piece but no move, and loses."""
    game = Game.from_fen("B:W29:B21,22", "english")
    record = game.play("21-25")
    assert record.outcome == Outcome(Termination.NO_MOVES, Color.BLACK)


def test_a_game_set_up_with_no_move_is_already_over() -> None:
    game = Game.from_fen("W:W29:B25,22", "english")
    assert game.outcome == Outcome(Termination.NO_MOVES, Color.BLACK)
    with pytest.raises(ActionRefusedError) as caught:
        game.play("29-25")
    assert caught.value.reason is Refusal.GAME_OVER


def test_threefold_repetition_draws_with_a_warning_the_second_time() -> None:
    """Two kings shuffle back and forth: the start position comes back after 4 plies (warning)
    and again after 8 (draw)."""
    game = Game.from_fen("W:WK1:BK32", "english")
    shuffle = ["1-6", "32-27", "6-1", "27-32"]
    for text in shuffle[:3]:
        assert game.play(text).warnings == frozenset()
    second = game.play(shuffle[3])
    assert second.warnings == {GameWarning.REPETITION}
    assert game.repetitions == 2
    for text in shuffle[:3]:
        assert game.play(text).outcome is None
    third = game.play(shuffle[3])
    assert third.outcome == Outcome(Termination.THREEFOLD_REPETITION, None)
    assert third.warnings == frozenset()


def test_a_man_move_resets_repetition() -> None:
    """The king shuffle with a man move in between: the clock and the list start again."""
    game = Game.from_fen("W:WK1,21:BK32", "english")
    for text in ["1-6", "32-27", "6-1", "27-32"]:
        game.play(text)
    assert game.quiet_plies == 4
    game.play("21-17")
    assert game.quiet_plies == 0
    assert len(game.state().repetition) == 1
    for text in ["32-27", "1-6", "27-32", "6-1"]:
        game.play(text)
    assert game.quiet_plies == 4
    assert len(game.state().repetition) == 5
    assert game.repetitions == 2


def _wander(game: Game, plies: int, rng: random.Random) -> None:
    """Quiet king moves that never repeat a position and never allow a capture."""
    for _ in range(plies):
        seen = set(game.state().repetition)
        choices = []
        for move in game.legal_moves:
            after = game.position.push(move)
            if move.is_capture or position_key(after) in seen or after.must_capture:
                continue
            choices.append(move)
        game.push(rng.choice(choices))


def test_forty_moves_each_without_capture_or_man_move_draw() -> None:
    """Kings only: the warning comes at 60 quiet plies, the draw at 80 (40 moves each)."""
    game = Game.from_fen("W:WK1,K3:BK30,K32", "english")
    rng = random.Random(7)
    _wander(game, MOVE_LIMIT_WARNING_PLIES - 1, rng)
    assert GameWarning.MOVE_LIMIT_NEAR not in game.warnings
    _wander(game, 1, rng)
    assert game.warnings == {GameWarning.MOVE_LIMIT_NEAR}
    _wander(game, MOVE_LIMIT_PLIES - MOVE_LIMIT_WARNING_PLIES - 1, rng)
    assert game.outcome is None
    _wander(game, 1, rng)
    assert game.quiet_plies == MOVE_LIMIT_PLIES
    assert game.outcome == Outcome(Termination.MOVE_LIMIT, None)


def test_a_capture_resets_the_move_limit_clock() -> None:
    game = Game.from_fen("W:WK1:BK32,14", "english")
    game.play("1-5")
    assert game.quiet_plies == 1
    game.play("32-28")
    game.play("5-9")
    game.play("14-18")  # a man move
    assert game.quiet_plies == 0


# -- draw offers ----------------------------------------------------------------------------


def _opening(moves: int) -> Game:
    game = Game()
    for text in ["11-15", "23-19", "8-11", "22-17"][:moves]:
        game.play(text)
    return game


def _play_on(game: Game, plies: int) -> None:
    """Play the first legal move, ``plies`` times: any moves will do."""
    for _ in range(plies):
        game.push(game.legal_moves[0])


def test_no_draw_offer_before_both_sides_have_moved() -> None:
    game = _opening(1)
    with pytest.raises(ActionRefusedError) as caught:
        game.offer_draw(Color.WHITE)
    assert caught.value.reason is Refusal.DRAW_OFFER_BEFORE_BOTH_MOVED


def test_offer_only_on_your_turn() -> None:
    game = _opening(2)
    with pytest.raises(ActionRefusedError) as caught:
        game.offer_draw(Color.WHITE)
    assert caught.value.reason is Refusal.NOT_YOUR_TURN


def test_offer_stays_open_while_the_opponent_thinks_then_is_accepted() -> None:
    game = _opening(2)
    game.offer_draw(Color.BLACK)
    assert game.draw_offer is Color.BLACK
    with pytest.raises(ActionRefusedError) as early:
        game.accept_draw(Color.WHITE)  # Black has not moved yet
    assert early.value.reason is Refusal.NOT_YOUR_TURN
    game.play("8-11")
    assert game.draw_offer is Color.BLACK
    assert game.accept_draw(Color.WHITE) == Outcome(Termination.AGREEMENT, None)
    assert game.is_over


def test_offer_declined_then_the_offerer_waits_five_own_moves() -> None:
    game = _opening(2)
    game.offer_draw(Color.BLACK)
    with pytest.raises(ActionRefusedError) as twice:
        game.offer_draw(Color.BLACK)
    assert twice.value.reason is Refusal.DRAW_ALREADY_OFFERED
    game.play("8-11")
    game.decline_draw(Color.WHITE)
    assert game.draw_offer is None
    game.play("22-17")
    with pytest.raises(ActionRefusedError) as soon:
        game.offer_draw(Color.BLACK)
    assert soon.value.reason is Refusal.DRAW_OFFER_TOO_SOON
    assert soon.value.moves_to_wait == 4
    assert game.draw_offer_wait(Color.BLACK) == 4
    _play_on(game, 6)
    assert game.draw_offer_wait(Color.BLACK) == 1
    _play_on(game, 2)
    assert game.draw_offer_wait(Color.BLACK) == 0
    game.offer_draw(Color.BLACK)
    assert game.draw_offer is Color.BLACK


def test_moving_declines_an_open_offer() -> None:
    game = _opening(2)
    game.offer_draw(Color.BLACK)
    assert not game.play("8-11").declined_offer
    record = game.play("22-17")
    assert record.declined_offer
    assert game.draw_offer is None


def test_answering_needs_an_open_offer_and_offering_needs_none_open() -> None:
    game = _opening(2)
    with pytest.raises(ActionRefusedError) as nothing:
        game.decline_draw(Color.BLACK)
    assert nothing.value.reason is Refusal.NO_DRAW_OFFER
    game.offer_draw(Color.BLACK)
    game.play("8-11")
    with pytest.raises(ActionRefusedError) as pending:
        game.offer_draw(Color.WHITE)
    assert pending.value.reason is Refusal.DRAW_OFFER_PENDING


# -- resignation and take-backs --------------------------------------------------------------


def test_resign_only_on_your_turn() -> None:
    game = _opening(3)
    with pytest.raises(ActionRefusedError) as caught:
        game.resign(Color.BLACK)
    assert caught.value.reason is Refusal.NOT_YOUR_TURN
    assert game.resign(Color.WHITE) == Outcome(Termination.RESIGNATION, Color.BLACK)
    with pytest.raises(ActionRefusedError) as over:
        game.resign(Color.BLACK)
    assert over.value.reason is Refusal.GAME_OVER


def test_take_back_removes_your_move_and_the_reply() -> None:
    game = _opening(4)
    before = _opening(2).state()
    assert game.take_back(Color.BLACK) == ["22-17", "8-11"]
    assert game.state() == before


def test_take_back_of_your_move_before_any_reply() -> None:
    game = _opening(3)
    assert game.take_back(Color.BLACK) == ["8-11"]
    assert game.state() == _opening(2).state()


def test_take_back_needs_a_move_of_yours() -> None:
    game = _opening(1)
    with pytest.raises(ActionRefusedError) as caught:
        game.take_back(Color.WHITE)
    assert caught.value.reason is Refusal.NOTHING_TO_TAKE_BACK


def test_take_back_after_a_round_trip_through_the_state() -> None:
    """A game rebuilt from its state (as the referee does) can still take back, by replay."""
    carried = Game.from_state(_opening(4).state())
    assert carried.take_back(Color.BLACK) == ["22-17", "8-11"]
    assert carried.state() == _opening(2).state()


# -- the state ------------------------------------------------------------------------------


def test_state_round_trip_carries_the_game_on_identically() -> None:
    game = _opening(4)
    _play_on(game, 6)
    carried = Game.from_state(game.state())
    move = game.legal_moves[-1]
    assert carried.push(move).notation == game.push(move).notation
    assert carried.state() == game.state()


def test_a_game_resumed_from_its_own_state_plays_on_and_takes_back_as_the_original() -> None:
    game = _opening(4)
    _play_on(game, 6)
    resumed = Game.from_own_state(game.state())
    move = game.legal_moves[0]
    assert resumed.push(move).notation == game.push(move).notation
    assert resumed.state() == game.state()
    assert resumed.take_back(resumed.turn) == game.take_back(game.turn)
    assert resumed.state() == game.state()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"captured": (1, 0)}, "captured"),
        ({"quiet_plies": 3}, "repetition"),
        ({"repetition": ()}, "repetition"),
        ({"draw_offer": Color.WHITE}, "draw_offer"),
        ({"last_offer_ply": (99, None)}, "last_offer_ply"),
        ({"moves": ("11-15",)}, "position"),
        ({"quiet_plies": 90}, "quiet_plies"),
    ],
)
def test_inconsistent_states_are_refused(change: dict[str, object], field: str) -> None:
    state = replace(_opening(4).state(), **change)  # type: ignore[arg-type]
    with pytest.raises(InvalidGameStateError) as caught:
        Game.from_state(state)
    assert caught.value.field == field


def test_a_state_with_overlapping_pieces_is_refused() -> None:
    state = _opening(2).state()
    broken = replace(state.position, black=state.position.black | state.position.white)
    with pytest.raises(InvalidGameStateError) as caught:
        Game.from_state(replace(state, position=broken))
    assert caught.value.field == "position"


# -- make and unmake --------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), variant=st.sampled_from(["english", "russian"]))
def test_push_then_pop_restores_the_game(seed: int, variant: str) -> None:
    rng = random.Random(seed)
    game = Game(variant)
    states = [game.state()]
    while not game.is_over and game.ply < 60:
        game.push(rng.choice(game.legal_moves))
        states.append(game.state())
    while game.ply:
        states.pop()
        game.pop()
        assert game.state() == states[-1]
    assert game.position == Position.initial(variant)
