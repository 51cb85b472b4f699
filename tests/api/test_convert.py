"""The protobuf <-> rules mapping: game states survive the wire exactly, views say what the
game says, and a malformed game state is refused with the culprit field named."""

from __future__ import annotations

import doctest
import random
from collections.abc import Callable, Iterator

import pytest
from google.protobuf.message import DecodeError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goti.api import convert
from goti.api.v1 import game_pb2
from goti.rules.color import Color
from goti.rules.errors import ActionRefusedError, InvalidMoveError
from goti.rules.game import (
    Game,
    GameState,
    GameWarning,
    InvalidGameStateError,
    Outcome,
    Termination,
)
from goti.rules.position import Position
from goti.rules.variants import ENGLISH, RUSSIAN, Variant


def test_the_docstring_examples_run() -> None:
    failures, tried = doctest.testmod(convert)
    assert (failures, tried > 0) == (0, True)


def through_the_wire(state: GameState) -> GameState:
    """A state sent as bytes and read back, as the store and every service see it."""
    data = convert.game_state_to_proto(state).SerializeToString()
    return convert.game_state_from_proto(game_pb2.GameState.FromString(data))


def random_game(variant: Variant, seed: int, plies: int) -> Iterator[Game]:
    """A game played at random, with draw offers, declines and take-backs mixed in; yields
    the game after every action."""
    chooser = random.Random(seed)
    game = Game(variant)
    for _ in range(plies):
        if game.is_over:
            return
        roll = chooser.random()
        try:
            if roll < 0.08:
                game.offer_draw(game.turn)
            elif roll < 0.12 and game.draw_offer is game.turn.opponent:
                game.decline_draw(game.turn)
            elif roll < 0.15:
                game.take_back(game.turn)
            else:
                game.push(chooser.choice(game.legal_moves))
        except ActionRefusedError:
            game.push(chooser.choice(game.legal_moves))
        yield game
    if not game.is_over and chooser.random() < 0.5:
        game.resign(game.turn)
        yield game


# -- game states ----------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    variant=st.sampled_from([ENGLISH, RUSSIAN]),
    seed=st.integers(0, 2**32),
    plies=st.integers(0, 160),
)
def test_game_states_round_trip_through_every_action(
    variant: Variant, seed: int, plies: int
) -> None:
    for game in random_game(variant, seed, plies):
        state = game.state()
        assert through_the_wire(state) == state


def test_a_move_that_ends_the_game_closes_the_movers_open_offer() -> None:
    game = Game.from_fen("B:W22:B14,K1", ENGLISH)
    game.play("1-5")
    game.play("22-18")
    game.offer_draw(Color.BLACK)
    game.play("14x23")
    assert game.outcome == Outcome(Termination.NO_PIECES, Color.BLACK)
    assert game.draw_offer is None
    assert through_the_wire(game.state()) == game.state()


@pytest.mark.parametrize("variant", [ENGLISH, RUSSIAN])
def test_a_whole_game_round_trips_and_carries_on(variant: Variant) -> None:
    """A game rebuilt from its wire state after every move plays on to the same end."""
    chooser = random.Random(7)
    game = Game(variant)
    while not game.is_over:
        game = Game.from_state(through_the_wire(game.state()))
        game.push(chooser.choice(game.legal_moves))
    assert through_the_wire(game.state()) == game.state()
    assert game.outcome is not None


def test_a_king_shuffle_keeps_its_repetition_list() -> None:
    game = Game.from_fen("W:W21,K30:B5,K12", ENGLISH)
    for text in ["30-26", "12-16", "26-30", "16-12", "30-26", "12-16"]:
        game.play(text)
    state = game.state()
    message = convert.game_state_to_proto(state)
    assert len(message.repetition) == message.quiet_plies == 6
    assert [entry.turn for entry in message.repetition] == [
        game_pb2.COLOR_WHITE,
        game_pb2.COLOR_BLACK,
    ] * 3
    assert GameWarning.REPETITION in game.warnings
    assert through_the_wire(state) == state


def test_the_standard_start_is_left_out_and_a_set_up_start_is_kept() -> None:
    assert not convert.game_state_to_proto(Game(RUSSIAN).state()).HasField("start")
    set_up = Game.from_fen("B:W18,K30:B14,K3", ENGLISH).state()
    message = convert.game_state_to_proto(set_up)
    assert message.HasField("start")
    assert through_the_wire(set_up).start == Position.from_fen("B:W18,K30:B14,K3", ENGLISH)


def test_a_finished_game_keeps_its_outcome() -> None:
    agreed = Game()
    for text in ["11-15", "23-19", "8-11"]:
        agreed.play(text)
    agreed.offer_draw(Color.WHITE)
    agreed.play("22-17")
    agreed.accept_draw(Color.BLACK)
    assert through_the_wire(agreed.state()) == agreed.state()
    resigned = Game(RUSSIAN)
    resigned.resign(Color.WHITE)
    message = convert.game_state_to_proto(resigned.state())
    assert message.outcome == game_pb2.Outcome(
        termination=game_pb2.TERMINATION_RESIGNATION, winner=game_pb2.COLOR_BLACK
    )
    assert through_the_wire(resigned.state()).outcome == Outcome(
        Termination.RESIGNATION, Color.BLACK
    )


def test_square_masks_put_square_s_on_bit_s_minus_1() -> None:
    position = Position.from_fen("W:WK1,K18:BK32,5", ENGLISH)
    message = convert.position_to_proto(position)
    assert message.white == (1 << 0) | (1 << 17)
    assert message.black == (1 << 31) | (1 << 4)
    assert message.kings == (1 << 0) | (1 << 17) | (1 << 31)
    assert message.turn == game_pb2.COLOR_WHITE
    assert convert.position_from_proto(message, ENGLISH, field="position") == position


# -- what players see -----------------------------------------------------------------------


@pytest.mark.parametrize("variant", [ENGLISH, RUSSIAN])
def test_the_view_says_what_the_game_says(variant: Variant) -> None:
    for game in random_game(variant, seed=11, plies=120):
        view = convert.game_view_to_proto(game)
        assert view.variant == convert.variant_to_proto(variant)
        assert view.board.fen == game.position.fen()
        assert convert.board_from_proto(view.board, variant) == game.position
        assert view.start_fen == game.start.fen()
        assert list(view.moves) == list(game.moves)
        assert (view.captured_by_white, view.captured_by_black) == (
            game.captured(Color.WHITE),
            game.captured(Color.BLACK),
        )
        assert view.draw_offer == convert.color_to_proto(game.draw_offer)
        assert set(view.warnings) == {convert.warnings_to_proto([w])[0] for w in game.warnings}
        assert view.quiet_plies == game.quiet_plies
        assert view.repetitions == game.repetitions
        if game.is_over:
            assert not view.HasField("turn")
            assert game.outcome is not None
            assert convert.outcome_from_proto(view.outcome) == game.outcome
            continue
        assert not view.HasField("outcome")
        assert view.turn.side == convert.color_to_proto(game.turn)
        assert [move.notation for move in view.turn.legal_moves] == [
            game.notation(move) for move in game.legal_moves
        ]
        assert [convert.move_from_proto(move) for move in view.turn.legal_moves] == game.legal_moves
        assert list(view.turn.must_capture) == game.must_capture
        assert view.turn.draw_offer_wait_moves == game.draw_offer_wait(game.turn)


def test_may_offer_draw_follows_the_rules() -> None:
    game = Game()
    assert convert.game_view_to_proto(game).turn.may_offer_draw is False  # nobody has moved
    for text in ["11-15", "23-19"]:
        game.play(text)
    assert convert.game_view_to_proto(game).turn.may_offer_draw is True
    game.offer_draw(Color.BLACK)
    assert convert.game_view_to_proto(game).turn.may_offer_draw is False  # already offered
    game.play("8-11")
    turn = convert.game_view_to_proto(game).turn
    assert turn.may_offer_draw is False  # Black's offer is open: White answers it
    game.play("22-17")  # declines by moving
    turn = convert.game_view_to_proto(game).turn
    assert turn.may_offer_draw is False
    assert turn.draw_offer_wait_moves == game.draw_offer_wait(Color.BLACK) > 0


def test_a_move_record_says_what_the_move_did() -> None:
    game = Game.from_fen("B:W18,30:B14", ENGLISH)
    record = game.play("14x23")
    message = convert.move_record_to_proto(record, ENGLISH)
    assert list(message.move.path) == [14, 23]
    assert list(message.move.captured) == [18]
    assert message.move.notation == "14x23"
    assert message.side == game_pb2.COLOR_BLACK
    assert message.ply == 0
    restored = convert.move_record_from_proto(
        game_pb2.MoveRecord.FromString(message.SerializeToString())
    )
    assert restored == record


def test_a_russian_multi_jump_keeps_its_path_and_capture_order() -> None:
    game = Game.from_fen("W:Wc3:Bd4,f6", RUSSIAN)
    record = game.play("c3:e5:g7")
    message = convert.move_record_to_proto(record, RUSSIAN)
    assert message.move.notation == "c3:e5:g7"
    assert list(message.move.captured) == [18, 11]
    assert convert.move_record_from_proto(message) == record


def test_a_move_path_too_long_to_be_a_move_is_refused() -> None:
    with pytest.raises(InvalidMoveError):
        convert.move_path_from_proto(game_pb2.MovePath(squares=range(1, 20)))
    assert convert.move_path_from_proto(convert.move_path_to_proto([22, 15, 8])) == (22, 15, 8)


# -- malformed game states ------------------------------------------------------------------


def shuffled_kings() -> game_pb2.GameState:
    """A game in its middle: a set-up start, quiet king moves, a draw offer dated."""
    game = Game.from_fen("W:W21,K30:B5,K12", ENGLISH)
    for text in ["30-26", "12-16"]:
        game.play(text)
    game.offer_draw(Color.WHITE)
    game.play("26-30")
    return convert.game_state_to_proto(game.state())


def put(field: str, value: int) -> Callable[[game_pb2.GameState], None]:
    def change(message: game_pb2.GameState) -> None:
        *parents, name = field.split(".")
        target = message
        for parent in parents:
            target = getattr(target, parent)
        setattr(target, name, value)

    return change


def clear_position(message: game_pb2.GameState) -> None:
    message.ClearField("position")


def add_repetition(message: game_pb2.GameState) -> None:
    message.repetition.add().CopyFrom(message.position)


def turn_first_repetition_entry(message: game_pb2.GameState) -> None:
    message.repetition[0].turn = game_pb2.COLOR_BLACK


def end(termination: int, winner: int) -> Callable[[game_pb2.GameState], None]:
    def change(message: game_pb2.GameState) -> None:
        message.ClearField("draw_offer")
        message.outcome.termination = game_pb2.Termination.ValueType(termination)
        message.outcome.winner = game_pb2.Color.ValueType(winner)

    return change


MALFORMED = {
    "no variant": (put("variant", 0), "state.variant"),
    "unknown variant": (put("variant", 9), "state.variant"),
    "no position": (clear_position, "state.position"),
    "no side to move": (put("position.turn", 0), "state.position.turn"),
    "unknown side to move": (put("position.turn", 3), "state.position.turn"),
    "overlapping pieces": (
        put("position.black", (1 << 20) | (1 << 11) | (1 << 4)),
        "state.position.black",
    ),
    "a king on an empty square": (put("position.kings", 1 << 16), "state.position.kings"),
    "thirteen pieces": (put("position.white", (1 << 13) - 1 << 19), "state.position.white"),
    "a man on its crowning row": (
        put("position.white", (1 << 20) | (1 << 29) | 1),
        "state.position.kings",
    ),
    "the wrong side to move": (put("position.turn", game_pb2.COLOR_WHITE), "state.position"),
    "a bad start": (put("start.black", 0xFFFFFFFF), "state.start.black"),
    "a start with no side": (put("start.turn", 0), "state.start.turn"),
    "captures White never made": (put("captured_by_white", 3), "state.captured_by_white"),
    "captures Black never made": (put("captured_by_black", 1), "state.captured_by_black"),
    "a clock past the plies": (put("quiet_plies", 50), "state.quiet_plies"),
    "a clock the list does not match": (put("quiet_plies", 2), "state.repetition"),
    "a repetition entry too many": (add_repetition, "state.repetition"),
    "a repetition entry with the wrong side": (
        turn_first_repetition_entry,
        "state.repetition[0].turn",
    ),
    "an unknown offering side": (put("draw_offer", 4), "state.draw_offer"),
    "an offer never made": (put("draw_offer", game_pb2.COLOR_BLACK), "state.draw_offer"),
    "an offer dated in the future": (put("white_last_offer_ply", 40), "state.white_last_offer_ply"),
    "Black's offer dated in the future": (
        put("black_last_offer_ply", 40),
        "state.black_last_offer_ply",
    ),
    "an outcome without a termination": (
        put("outcome.winner", game_pb2.COLOR_WHITE),
        "state.outcome.termination",
    ),
    "a drawn outcome with a winner": (
        end(game_pb2.TERMINATION_AGREEMENT, game_pb2.COLOR_WHITE),
        "state.outcome.winner",
    ),
    "a win with no winner": (end(game_pb2.TERMINATION_RESIGNATION, 0), "state.outcome.winner"),
    "an unknown termination": (end(9, game_pb2.COLOR_WHITE), "state.outcome.termination"),
    "a loss for the side not to move": (
        end(game_pb2.TERMINATION_NO_MOVES, game_pb2.COLOR_BLACK),
        "state.outcome.winner",
    ),
}


def test_the_base_of_the_malformed_states_is_valid() -> None:
    message = shuffled_kings()
    assert message.HasField("white_last_offer_ply") and not message.HasField("black_last_offer_ply")
    convert.game_state_from_proto(message)


@pytest.mark.parametrize("name", MALFORMED)
def test_a_malformed_game_state_is_refused_naming_the_field(name: str) -> None:
    change, field = MALFORMED[name]
    message = shuffled_kings()
    change(message)
    with pytest.raises(InvalidGameStateError) as raised:
        convert.game_state_from_proto(message)
    assert raised.value.field == field, str(raised.value)
    assert str(raised.value)


def test_the_field_prefix_names_the_request_field() -> None:
    message = shuffled_kings()
    message.variant = game_pb2.VARIANT_UNSPECIFIED
    with pytest.raises(InvalidGameStateError) as raised:
        convert.game_state_from_proto(message, field="game")
    assert raised.value.field == "game.variant"


def test_request_enums_take_their_documented_defaults() -> None:
    assert convert.variant_from_proto(game_pb2.VARIANT_UNSPECIFIED, default=ENGLISH) is ENGLISH
    with pytest.raises(convert.InvalidFieldError) as raised:
        convert.variant_from_proto(game_pb2.VARIANT_UNSPECIFIED, field="variant")
    assert raised.value.field == "variant"
    assert convert.optional_color_from_proto(game_pb2.COLOR_UNSPECIFIED, field="side") is None
    with pytest.raises(convert.InvalidFieldError):
        convert.color_from_proto(game_pb2.COLOR_UNSPECIFIED, field="side")


def check_refused_cleanly(message: game_pb2.GameState) -> None:
    """Anything is either a state that round-trips or refused with a field under `state`."""
    try:
        state = convert.game_state_from_proto(message)
    except InvalidGameStateError as error:
        assert error.field.startswith("state."), error.field
        return
    assert through_the_wire(state) == state


masks = st.one_of(st.just(0), st.integers(0, 2**32 - 1), st.sampled_from([0xFFF, 0xFFF00000]))
small = st.integers(0, 100)
colors = st.integers(0, 4).map(game_pb2.Color.ValueType)


@st.composite
def positions(draw: st.DrawFn) -> game_pb2.Position:
    return game_pb2.Position(
        white=draw(masks), black=draw(masks), kings=draw(masks), turn=draw(colors)
    )


@st.composite
def game_states(draw: st.DrawFn) -> game_pb2.GameState:
    message = game_pb2.GameState(
        variant=draw(st.integers(0, 4).map(game_pb2.Variant.ValueType)),
        moves=draw(st.lists(st.sampled_from(["11-15", "23-19", "x", ""]), max_size=4)),
        repetition=draw(st.lists(positions(), max_size=3)),
        quiet_plies=draw(small),
        draw_offer=draw(colors),
        captured_by_white=draw(small),
        captured_by_black=draw(small),
    )
    if draw(st.booleans()):
        message.position.CopyFrom(draw(positions()))
    if draw(st.booleans()):
        message.start.CopyFrom(draw(positions()))
    if draw(st.booleans()):
        message.white_last_offer_ply = draw(small)
    if draw(st.booleans()):
        message.outcome.termination = draw(st.integers(0, 7).map(game_pb2.Termination.ValueType))
        message.outcome.winner = draw(colors)
    return message


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game_states())
def test_random_game_states_are_accepted_or_refused_with_a_field(
    message: game_pb2.GameState,
) -> None:
    check_refused_cleanly(message)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_are_accepted_or_refused_with_a_field(data: bytes) -> None:
    try:
        message = game_pb2.GameState.FromString(data)
    except DecodeError:
        return
    check_refused_cleanly(message)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), plies=st.integers(1, 60), flip=st.integers(0, 2**16))
def test_corrupting_a_real_state_is_never_a_crash(seed: int, plies: int, flip: int) -> None:
    """Flip one bit of a real game's wire state: it still reads, or is refused cleanly."""
    game = Game()
    for game in random_game(ENGLISH, seed, plies):  # noqa: B007
        pass
    data = bytearray(convert.game_state_to_proto(game.state()).SerializeToString())
    if not data:
        return
    data[flip % len(data)] ^= 1 << (flip // len(data) % 8)
    try:
        message = game_pb2.GameState.FromString(bytes(data))
    except DecodeError:
        return
    check_refused_cleanly(message)
