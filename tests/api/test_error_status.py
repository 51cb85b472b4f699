"""Errors as Goti sends them: every rules error maps to a documented reason and status code,
and the reason and its metadata survive a real gRPC call, sync and asyncio."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import grpc
import pytest
import pytest_asyncio

from goti.api import convert
from goti.api.error_status import ErrorStatus, reason_name, reason_value, status_code_of
from goti.api.v1 import errors_pb2, game_pb2, referee_pb2, referee_pb2_grpc
from goti.rules.color import Color
from goti.rules.errors import (
    AmbiguousMoveError,
    IllegalReason,
    InvalidFenError,
    Refusal,
)
from goti.rules.game import Game, InvalidGameStateError
from goti.rules.pdn import read_pdn
from goti.rules.position import Position
from goti.rules.variants import ENGLISH

# -- reasons --------------------------------------------------------------------------------


def every_reason() -> list[errors_pb2.ErrorReason.ValueType]:
    return [v for v in errors_pb2.ErrorReason.values() if v != errors_pb2.ERROR_REASON_UNSPECIFIED]


def test_a_reason_is_its_enum_name_without_the_prefix() -> None:
    for value in every_reason():
        name = reason_name(value)
        assert errors_pb2.ErrorReason.Name(value) == f"ERROR_REASON_{name}"
        assert reason_value(name) == value
        assert status_code_of(name) not in {grpc.StatusCode.OK, grpc.StatusCode.INTERNAL}
    assert reason_value("NO_SUCH_REASON") == errors_pb2.ERROR_REASON_UNSPECIFIED


@pytest.mark.parametrize("reason", list(IllegalReason))
def test_every_illegal_move_reason_is_on_the_wire(reason: IllegalReason) -> None:
    assert reason_value(reason.value) != errors_pb2.ERROR_REASON_UNSPECIFIED
    assert status_code_of(reason.value) is grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("refusal", list(Refusal))
def test_every_refusal_is_on_the_wire(refusal: Refusal) -> None:
    assert reason_value(refusal.value) != errors_pb2.ERROR_REASON_UNSPECIFIED
    assert status_code_of(refusal.value) is grpc.StatusCode.FAILED_PRECONDITION


def test_the_reasons_named_in_the_brief_exist() -> None:
    wanted = {
        "ILLEGAL_MOVE",
        "CAPTURE_REQUIRED",
        "INCOMPLETE_CAPTURE",
        "AMBIGUOUS_MOVE",
        "INVALID_MOVE",
        "NOT_YOUR_TURN",
        "GAME_OVER",
        "DRAW_OFFER_TOO_SOON",
        "DRAW_OFFER_BEFORE_BOTH_MOVED",
        "DRAW_ALREADY_OFFERED",
        "DRAW_OFFER_PENDING",
        "NO_DRAW_OFFER",
        "NOTHING_TO_TAKE_BACK",
        "TAKE_BACK_NOT_ALLOWED",
        "INVALID_GAME_STATE",
        "INVALID_FEN",
        "STALE_SEQ",
        "TOKEN_REQUIRED",
        "INVALID_TOKEN",
        "NOT_A_PLAYER",
        "NOT_YOUR_SEAT",
        "TABLE_NOT_FOUND",
        "TABLE_FULL",
        "RATE_LIMITED",
        "REQUEST_TOO_LARGE",
    }
    assert {reason_name(v) for v in every_reason()} >= wanted


# -- rules errors ---------------------------------------------------------------------------


def status_of(error: Exception, field: str | None = None) -> ErrorStatus:
    status = convert.rules_error_status(error, field=field)
    assert status is not None
    return status


def raised_by(action: Callable[[], object]) -> Exception:
    try:
        action()
    except Exception as error:
        return error
    raise AssertionError("no error raised")


def test_a_bad_fen_names_its_token_and_field() -> None:
    status = status_of(raised_by(lambda: Position.from_fen("W:W40:B1")), field="fen")
    assert status.code is grpc.StatusCode.INVALID_ARGUMENT
    assert status.reason == "INVALID_FEN"
    assert status.metadata == {"token": "40", "field": "fen"}


def test_text_that_is_no_move() -> None:
    status = status_of(raised_by(lambda: Game().play("hello")), field="move_notation")
    assert (status.code, status.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_MOVE")
    assert status.metadata == {"field": "move_notation"}
    assert "hello" in status.message


def test_an_illegal_move_lists_the_legal_ones() -> None:
    game = Game()
    status = status_of(raised_by(lambda: game.play("11-18")))
    assert (status.code, status.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "ILLEGAL_MOVE")
    assert status.metadata["legalMoves"].split(",") == [game.notation(m) for m in game.legal_moves]


def test_a_missed_capture_says_capture_required() -> None:
    game = Game.from_fen("B:W18:B14,K1", ENGLISH)
    status = status_of(raised_by(lambda: game.play("1-5")))
    assert (status.code, status.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "CAPTURE_REQUIRED")
    assert status.metadata == {"legalMoves": "14x23"}


def test_a_capture_stopped_short_says_incomplete() -> None:
    game = Game.from_fen("B:W18,27:B14", ENGLISH)
    status = status_of(raised_by(lambda: game.play("14x23")))
    assert status.reason == "INCOMPLETE_CAPTURE"
    assert status.metadata == {"legalMoves": "14x23x32"}


def test_an_ambiguous_move_lists_the_candidates() -> None:
    error = AmbiguousMoveError("22x8 could be either", candidates=["22x15x8", "22x17x8"])
    status = status_of(error)
    assert (status.code, status.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "AMBIGUOUS_MOVE")
    assert status.metadata == {"candidates": "22x15x8,22x17x8"}


def test_a_draw_offer_too_soon_says_how_long_to_wait() -> None:
    game = Game()
    for text in ["11-15", "23-19", "8-11"]:
        game.play(text)
    game.offer_draw(Color.WHITE)
    game.play("22-17")
    game.decline_draw(Color.BLACK)
    game.play("9-13")
    status = status_of(raised_by(lambda: game.offer_draw(Color.WHITE)))
    assert (status.code, status.reason) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "DRAW_OFFER_TOO_SOON",
    )
    assert status.metadata == {"movesToWait": str(game.draw_offer_wait(Color.WHITE))}
    assert int(status.metadata["movesToWait"]) > 0


def test_acting_out_of_turn_and_after_the_end() -> None:
    game = Game()
    status = status_of(raised_by(lambda: game.resign(Color.WHITE)))
    assert (status.code, status.reason, status.metadata) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_YOUR_TURN",
        {},
    )
    game.resign(Color.BLACK)
    assert status_of(raised_by(lambda: game.play("11-15"))).reason == "GAME_OVER"


def test_a_malformed_game_state_names_the_field() -> None:
    message = convert.game_state_to_proto(Game().state())
    message.position.turn = game_pb2.COLOR_UNSPECIFIED
    error = raised_by(lambda: convert.game_state_from_proto(message))
    assert isinstance(error, InvalidGameStateError)
    status = status_of(error)
    assert (status.code, status.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_GAME_STATE")
    assert status.metadata == {"field": "state.position.turn"}


def test_a_bad_request_field_and_bad_pdn() -> None:
    error = raised_by(lambda: convert.color_from_proto(7, field="side"))
    assert status_of(error) == ErrorStatus(
        grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST", str(error), {"field": "side"}
    )
    status = status_of(raised_by(lambda: read_pdn("1. 11-18 *")), field="pdn")
    assert (status.reason, status.metadata) == ("INVALID_PDN", {"field": "pdn"})


def test_other_exceptions_are_not_rules_errors() -> None:
    assert convert.rules_error_status(KeyError("x")) is None
    assert convert.rules_error_status(InvalidFenError("bad", token="")) is not None


# -- through a real server ------------------------------------------------------------------

CALL_TIMEOUT = 30.0
"""Seconds per call: generous, for a busy machine."""
TOO_SOON = ErrorStatus.of(
    errors_pb2.ERROR_REASON_DRAW_OFFER_TOO_SOON, "wait two more moves", movesToWait=2
)


class FailingReferee(referee_pb2_grpc.RefereeServiceServicer):
    """Fails calls with a Goti status, sent the two ways a servicer can send one.

    The method names are the RPC names the generated base class declares.
    """

    async def StartGame(  # noqa: N802
        self,
        request: referee_pb2.StartGameRequest,
        context: grpc.aio.ServicerContext[object, object],
    ) -> referee_pb2.StartGameResponse:
        error = raised_by(lambda: Position.from_fen(request.fen))
        status = status_of(error, field="fen")
        await context.abort(status.code, status.message, status.trailing_metadata())

    async def Apply(  # noqa: N802
        self, request: referee_pb2.ApplyRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> referee_pb2.ApplyResponse:
        await context.abort_with_status(TOO_SOON.to_grpc_status())

    async def ApplyStream(  # noqa: N802
        self,
        request_iterator: AsyncIterator[referee_pb2.ApplyStreamRequest],
        context: grpc.aio.ServicerContext[object, object],
    ) -> AsyncIterator[referee_pb2.ApplyStreamResponse]:
        async for streamed in request_iterator:
            yield referee_pb2.ApplyStreamResponse(
                call_id=streamed.call_id, refusal=TOO_SOON.to_proto().SerializeToString()
            )

    async def DescribeGame(  # noqa: N802
        self,
        request: referee_pb2.DescribeGameRequest,
        context: grpc.aio.ServicerContext[object, object],
    ) -> referee_pb2.DescribeGameResponse:
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "plain status, no details")

    async def ListLegalMoves(  # noqa: N802
        self,
        request: referee_pb2.ListLegalMovesRequest,
        context: grpc.aio.ServicerContext[object, object],
    ) -> referee_pb2.ListLegalMovesResponse:
        return referee_pb2.ListLegalMovesResponse()

    async def ExportPdn(  # noqa: N802
        self,
        request: referee_pb2.ExportPdnRequest,
        context: grpc.aio.ServicerContext[object, object],
    ) -> referee_pb2.ExportPdnResponse:
        return referee_pb2.ExportPdnResponse()


@pytest_asyncio.fixture
async def address() -> AsyncIterator[str]:
    server = grpc.aio.server()
    referee_pb2_grpc.add_RefereeServiceServicer_to_server(FailingReferee(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(None)


async def test_the_status_survives_an_asyncio_call(address: str) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = referee_pb2_grpc.RefereeServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.StartGame(referee_pb2.StartGameRequest(fen="W:W40:B1"), timeout=CALL_TIMEOUT)
        status = ErrorStatus.from_rpc_error(raised.value)
        assert status is not None
        assert status == status_of(raised_by(lambda: Position.from_fen("W:W40:B1")), field="fen")
        assert raised.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert raised.value.details() == status.message

        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Apply(referee_pb2.ApplyRequest(), timeout=CALL_TIMEOUT)
        assert ErrorStatus.from_rpc_error(raised.value) == TOO_SOON

        # On a stream, the refusal is a message: the same Status, read from its bytes.
        stream = stub.ApplyStream(timeout=CALL_TIMEOUT)
        await stream.write(referee_pb2.ApplyStreamRequest(call_id=7))
        answer = await stream.read()
        assert isinstance(answer, referee_pb2.ApplyStreamResponse)
        assert answer.call_id == 7
        assert ErrorStatus.from_details(answer.refusal) == TOO_SOON
        await stream.done_writing()
        assert await stream.read() is grpc.aio.EOF

        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.DescribeGame(referee_pb2.DescribeGameRequest(), timeout=CALL_TIMEOUT)
        assert ErrorStatus.from_rpc_error(raised.value) is None


def call_synchronously(address: str) -> grpc.RpcError:
    with grpc.insecure_channel(address) as channel:
        stub = referee_pb2_grpc.RefereeServiceStub(channel)
        try:
            stub.Apply(referee_pb2.ApplyRequest(), timeout=CALL_TIMEOUT)
        except grpc.RpcError as error:
            return error
    raise AssertionError("the call succeeded")


async def test_the_status_survives_a_sync_call(address: str) -> None:
    error = await asyncio.to_thread(call_synchronously, address)
    assert ErrorStatus.from_rpc_error(error) == TOO_SOON
