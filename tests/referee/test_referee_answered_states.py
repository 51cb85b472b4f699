"""The states a referee answered with, kept so that the next request on the game skips decoding
them: a game carried on from its last answer's bytes, as the tables service does, is ruled
exactly as a referee that remembers nothing rules it, and a state altered by a single field is
still checked and refused."""

from __future__ import annotations

import random

from goti.api import convert
from goti.api.v1 import game_pb2, referee_pb2
from goti.referee.answered import AnsweredStates
from goti.referee.servicer import apply
from goti.rules.game import Game
from goti.rules.variants import ENGLISH, RUSSIAN, Variant

from .referee_calls import CALL_TIMEOUT, Referee, refusal, state_of


def _forgetful_answer(request: referee_pb2.ApplyRequest) -> referee_pb2.ApplyResponse:
    """The answer of a referee that remembers no state (the servicer's ruling, in process)."""
    response = referee_pb2.ApplyResponse()
    assert apply(request, response) is None
    return response


async def _play_on_from_answers(referee: Referee, variant: Variant, seed: int) -> int:
    """Play a game move by move over one ApplyStream, each request carrying the bytes of the
    previous answer's state, with a take-back now and then; returns the plies played."""
    chooser = random.Random(seed)
    local = Game(variant)
    state_bytes = state_of(local).SerializeToString()
    stream = referee.ApplyStream(timeout=CALL_TIMEOUT)
    plies = 0
    for call_id in range(1, 121):
        request = referee_pb2.ApplyRequest(state=game_pb2.GameState.FromString(state_bytes))
        if plies >= 4 and chooser.random() < 0.1:
            request.side = convert.color_to_proto(local.turn)
            request.game_action = referee_pb2.GAME_ACTION_TAKE_BACK
        else:
            request.move_notation = local.notation(chooser.choice(local.legal_moves))
        await stream.write(referee_pb2.ApplyStreamRequest(call_id=call_id, request=request))
        answer = await stream.read()
        assert isinstance(answer, referee_pb2.ApplyStreamResponse)
        assert answer.call_id == call_id
        assert answer.WhichOneof("result") == "response", answer.refusal
        assert answer.response == _forgetful_answer(request)
        if request.HasField("move_notation"):
            local.play(request.move_notation)
        else:
            assert list(answer.response.taken_back) == local.take_back(local.turn)
        state_bytes = answer.response.state.SerializeToString()
        plies = len(local.moves)
        if local.is_over:
            break
    await stream.done_writing()
    return plies


async def test_a_game_carried_on_from_its_answers_is_ruled_as_without_them(
    referee: Referee,
) -> None:
    played = [
        await _play_on_from_answers(referee, variant, seed)
        for variant in (ENGLISH, RUSSIAN)
        for seed in range(3)
    ]
    assert all(plies > 4 for plies in played), played


async def test_an_answered_state_altered_in_one_field_is_checked_and_refused(
    referee: Referee,
) -> None:
    game = Game()
    request = referee_pb2.ApplyRequest(state=state_of(game), move_notation="11-15")
    answered = await referee.Apply(request, timeout=CALL_TIMEOUT)
    game.play("11-15")
    assert answered.state == state_of(game)

    altered = game_pb2.GameState()
    altered.CopyFrom(answered.state)
    altered.captured_by_black = 1  # Black has captured nothing
    forged = referee_pb2.ApplyRequest(state=altered, move_notation="22-18")
    status = await refusal(referee.Apply(forged, timeout=CALL_TIMEOUT))
    assert status.reason == "INVALID_GAME_STATE"
    assert status.metadata["field"] == "state.captured_by_black"

    # The state as answered still carries the game on.
    honest = referee_pb2.ApplyRequest(state=answered.state, move_notation="22-18")
    after = await referee.Apply(honest, timeout=CALL_TIMEOUT)
    assert list(after.state.moves) == ["11-15", "22-18"]


def test_the_oldest_state_makes_way_once_the_memory_is_full() -> None:
    answered = AnsweredStates(size=2)
    games = [Game(), Game(), Game()]
    for game, opening in zip(games, ("11-15", "9-13", "10-14"), strict=True):
        game.play(opening)
        answered.remember(state_of(game), game.state())
    assert answered.find(state_of(games[0])) is None
    assert answered.find(state_of(games[1])) == games[1].state()
    assert answered.find(state_of(games[2])) == games[2].state()
    assert answered.find(state_of(Game())) is None
