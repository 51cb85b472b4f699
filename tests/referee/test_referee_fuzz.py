"""Fuzzing the referee through a real server: random request bodies, real requests with
damaged bytes, random field values and real game states with random damage, on every RPC.

Every call must either succeed with a game state the referee itself accepts back, or fail
with INVALID_ARGUMENT or FAILED_PRECONDITION and a Goti ErrorInfo reason that goes with the
code.  Never INTERNAL or UNKNOWN (a servicer that raised), never a dead server: the last test
checks the server is still healthy and still refereeing."""

from __future__ import annotations

import os
import random
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from typing import Final, TypeVar

import grpc
import pytest
import pytest_asyncio
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goti import healthcheck, serving
from goti.api import convert
from goti.api.error_status import ErrorStatus, status_code_of
from goti.api.v1 import game_pb2, referee_pb2, referee_pb2_grpc
from goti.referee import actions
from goti.referee.servicer import SERVICE_NAME, bind
from goti.rules.color import Color
from goti.rules.game import Game
from goti.rules.variants import ENGLISH, RUSSIAN
from goti.settings import Settings

from .referee_calls import CALL_TIMEOUT, Referee, state_of

# One server for the whole module: a server per example would be most of the time spent.
pytestmark = pytest.mark.asyncio(loop_scope="module")

T = TypeVar("T")

# Few enough for a quick suite; GOTI_TEST_FUZZ_EXAMPLES=5000 digs deeper.
EXAMPLES: Final = int(os.environ.get("GOTI_TEST_FUZZ_EXAMPLES", "150"))
FUZZ: Final = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
EXPECTED_CODES: Final = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION}
METHODS: Final = ("StartGame", "DescribeGame", "ListLegalMoves", "Apply", "ExportPdn")


@dataclass(frozen=True)
class Target:
    server: serving.RunningServer
    channel: grpc.aio.Channel
    referee: Referee


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def target() -> AsyncIterator[Target]:
    settings = Settings(host="127.0.0.1")
    running = await serving.start_server("referee", bind, settings, port=0)
    try:
        async with serving.open_channel(running.target, settings) as channel:
            yield Target(running, channel, referee_pb2_grpc.RefereeServiceStub(channel))
    finally:
        await running.stop(None)


async def answered(call: Awaitable[T]) -> T | None:
    """The call's response, or None when it was refused as the contract says it may be."""
    try:
        return await call
    except grpc.aio.AioRpcError as error:
        status = ErrorStatus.from_rpc_error(error)
        assert error.code() in EXPECTED_CODES, (error.code(), error.details())
        assert status is not None, (error.code(), error.details())
        assert status.code is status_code_of(status.reason)
        return None


def check_state_is_accepted_back(state: game_pb2.GameState) -> None:
    """What the referee answers with, it takes back."""
    actions.load(convert.game_state_from_proto(state))


# -- real games to damage -----------------------------------------------------------------


def _real_states() -> list[game_pb2.GameState]:
    chooser = random.Random(20261130)
    states = []
    for variant in (ENGLISH, RUSSIAN):
        for _ in range(12):
            game = Game(variant)
            stop_at = chooser.randrange(0, 70)
            while not game.is_over and game.ply < stop_at:
                if game.ply >= 2 and chooser.random() < 0.1 and game.may_offer_draw(game.turn):
                    game.offer_draw(game.turn)
                game.push(chooser.choice(game.legal_moves))
            if not game.is_over and chooser.random() < 0.1:
                game.resign(game.turn)
            states.append(state_of(game))
    return states


REAL_STATES: Final = _real_states()

uint32 = st.integers(0, 2**32 - 1)
enum_values = st.integers(-3, 9)
# Valid values half of the time, so that calls get past the first check.
sides = st.one_of(st.integers(0, 2), enum_values)
game_actions = st.one_of(st.integers(1, 5), enum_values)
small = st.integers(0, 130)
masks = st.one_of(uint32, st.sampled_from([0, 0xFFF, 0xFFF00000, 0xFFFFFFFF]))
move_text = st.one_of(
    st.text(alphabet="0123456789-x: abcdefghK", max_size=14),
    st.text(max_size=70),
    st.sampled_from(["11-15", "23-19", "22x15x8", "c3-d4", "c3:e5", "9-14", ""]),
)
fen_text = st.one_of(
    st.text(alphabet="WB:K,-0123456789abcdefgh. ", max_size=60),
    st.text(max_size=300),
    st.sampled_from(["B:W21-32:B1-12", "W:W:B1", "W:WK30:B17,18,25,26", "W:Wb6:Bc7,f6"]),
)


@st.composite
def positions(draw: st.DrawFn, near: game_pb2.Position | None = None) -> game_pb2.Position:
    if near is not None and draw(st.booleans()):
        position = game_pb2.Position()
        position.CopyFrom(near)
        name = draw(st.sampled_from(["white", "black", "kings"]))
        setattr(position, name, getattr(position, name) ^ (1 << draw(st.integers(0, 31))))
        return position
    return game_pb2.Position(
        white=draw(masks),
        black=draw(masks),
        kings=draw(masks),
        turn=game_pb2.Color.ValueType(draw(enum_values)),
    )


@st.composite
def damaged_states(draw: st.DrawFn) -> game_pb2.GameState:
    """A real game state, most often with a few fields changed at random."""
    state = game_pb2.GameState()
    state.CopyFrom(draw(st.sampled_from(REAL_STATES)))
    for name in draw(
        st.lists(
            st.sampled_from(
                [
                    "variant",
                    "start",
                    "moves",
                    "position",
                    "repetition",
                    "quiet_plies",
                    "draw_offer",
                    "offer_plies",
                    "captured",
                    "outcome",
                ]
            ),
            max_size=3,
            unique=True,
        )
    ):
        if name == "variant":
            state.variant = game_pb2.Variant.ValueType(draw(enum_values))
        elif name == "start":
            state.start.CopyFrom(draw(positions(state.position)))
        elif name == "moves":
            moves = list(state.moves)
            if draw(st.booleans()) and moves:
                moves[draw(st.integers(0, len(moves) - 1))] = draw(move_text)
            else:
                moves = draw(st.lists(move_text, max_size=8))
            del state.moves[:]
            state.moves.extend(moves)
        elif name == "position":
            state.position.CopyFrom(draw(positions(state.position)))
        elif name == "repetition":
            entries = draw(st.lists(positions(state.position), max_size=4))
            del state.repetition[:]
            state.repetition.extend(entries)
        elif name == "quiet_plies":
            state.quiet_plies = draw(small)
        elif name == "draw_offer":
            state.draw_offer = game_pb2.Color.ValueType(draw(enum_values))
        elif name == "offer_plies":
            for field in ("white_last_offer_ply", "black_last_offer_ply"):
                value = draw(st.none() | small)
                if value is None:
                    state.ClearField(field)
                else:
                    setattr(state, field, value)
        elif name == "captured":
            state.captured_by_white = draw(st.integers(0, 14))
            state.captured_by_black = draw(st.integers(0, 14))
        elif draw(st.booleans()):
            state.ClearField("outcome")
        else:
            state.outcome.termination = game_pb2.Termination.ValueType(draw(enum_values))
            state.outcome.winner = game_pb2.Color.ValueType(draw(enum_values))
    return state


game_states = st.one_of(st.sampled_from(REAL_STATES), damaged_states())


@st.composite
def apply_requests(draw: st.DrawFn) -> referee_pb2.ApplyRequest:
    request = referee_pb2.ApplyRequest(side=game_pb2.Color.ValueType(draw(sides)))
    if draw(st.integers(0, 9)):
        request.state.CopyFrom(draw(game_states))
    kind = draw(st.sampled_from(["legal", "path", "notation", "action", "none"]))
    if kind == "legal":
        # A legal move, as path or notation, when the state has one: the common case.
        try:
            game = actions.load(convert.game_state_from_proto(request.state))
        except ValueError:
            game = None
        legal = game.legal_moves if game is not None else []
        if legal and game is not None:
            request.side = draw(
                st.sampled_from([game_pb2.COLOR_UNSPECIFIED, convert.color_to_proto(game.turn)])
            )
            move = draw(st.sampled_from(legal))
            if draw(st.booleans()):
                request.move_notation = game.notation(move)
            else:
                request.move_path.squares.extend(move.path)
        else:
            request.move_notation = draw(move_text)
    elif kind == "path":
        request.move_path.squares.extend(
            draw(st.lists(st.one_of(st.integers(0, 40), uint32), max_size=16))
        )
    elif kind == "notation":
        request.move_notation = draw(move_text)
    elif kind == "action":
        request.game_action = referee_pb2.GameAction.ValueType(draw(game_actions))
    return request


# -- the fuzz tests -----------------------------------------------------------------------


@FUZZ
@given(method=st.sampled_from(METHODS), body=st.binary(max_size=300))
async def test_random_bytes_as_a_request(target: Target, method: str, body: bytes) -> None:
    call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = target.channel.unary_unary(
        f"/{SERVICE_NAME}/{method}"
    )
    await answered(call(body, timeout=CALL_TIMEOUT))


@FUZZ
@given(data=st.data())
async def test_real_requests_with_bytes_damaged(target: Target, data: st.DataObject) -> None:
    state = data.draw(st.sampled_from(REAL_STATES))
    request: Message = data.draw(
        st.sampled_from(
            [
                referee_pb2.ApplyRequest(state=state, move_notation="11-15"),
                referee_pb2.ApplyRequest(
                    state=state,
                    side=game_pb2.COLOR_WHITE,
                    game_action=referee_pb2.GAME_ACTION_RESIGN,
                ),
                referee_pb2.ExportPdnRequest(state=state, tags={"Event": "x"}),
                referee_pb2.DescribeGameRequest(state=state),
            ]
        )
    )
    method = type(request).__name__.removesuffix("Request")
    body = bytearray(request.SerializeToString())
    for _ in range(data.draw(st.integers(1, 4))):
        where = data.draw(st.integers(0, len(body)))
        how = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        if how == "flip" and where < len(body):
            body[where] ^= 1 << data.draw(st.integers(0, 7))
        elif how == "cut":
            del body[where : where + data.draw(st.integers(1, 8))]
        else:
            body[where:where] = data.draw(st.binary(min_size=1, max_size=4))
    call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = target.channel.unary_unary(
        f"/{SERVICE_NAME}/{method}"
    )
    await answered(call(bytes(body), timeout=CALL_TIMEOUT))


@FUZZ
@given(request=apply_requests())
async def test_apply_with_random_fields(target: Target, request: referee_pb2.ApplyRequest) -> None:
    response = await answered(target.referee.Apply(request, timeout=CALL_TIMEOUT))
    if response is not None:
        check_state_is_accepted_back(response.state)
        assert response.view.variant == response.state.variant


@FUZZ
@given(state=game_states, tags=st.dictionaries(st.text(max_size=34), st.text(max_size=260)))
async def test_reading_rpcs_with_random_states(
    target: Target, state: game_pb2.GameState, tags: dict[str, str]
) -> None:
    referee = target.referee
    await answered(referee.DescribeGame(referee_pb2.DescribeGameRequest(state=state), timeout=30))
    await answered(
        referee.ListLegalMoves(referee_pb2.ListLegalMovesRequest(state=state), timeout=30)
    )
    await answered(
        referee.ExportPdn(referee_pb2.ExportPdnRequest(state=state, tags=tags), timeout=30)
    )


@FUZZ
@given(variant=enum_values, fen=fen_text)
async def test_start_game_with_random_fields(target: Target, variant: int, fen: str) -> None:
    request = referee_pb2.StartGameRequest(variant=game_pb2.Variant.ValueType(variant), fen=fen)
    response = await answered(target.referee.StartGame(request, timeout=CALL_TIMEOUT))
    if response is not None:
        check_state_is_accepted_back(response.state)


async def test_the_server_is_still_healthy_and_refereeing(target: Target) -> None:
    status = await healthcheck.check(target.server.target, SERVICE_NAME)
    assert status == healthcheck.SERVING
    game = Game()
    game.play("11-15")
    answer = await target.referee.Apply(
        referee_pb2.ApplyRequest(state=state_of(game), move_notation="23-19"),
        timeout=CALL_TIMEOUT,
    )
    game.play("23-19")
    assert answer.state == state_of(game)
    assert answer.view.turn.side == convert.color_to_proto(Color.BLACK)
