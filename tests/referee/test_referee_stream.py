"""ApplyStream through a real referee server: answers matched to their requests, refusals as
unary Apply gives them without ending the stream, bytes that are no request, the per-Apply
metrics, and a graceful stop that ends the streams at once rather than at its grace period."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest
from prometheus_client import CollectorRegistry

from goti import serving
from goti.api.error_status import ErrorStatus
from goti.api.v1 import referee_pb2, referee_pb2_grpc
from goti.referee.servicer import RefereeService
from goti.rules.game import Game
from goti.settings import Settings

from .referee_calls import CALL_TIMEOUT, Referee, game_after, refusal, state_of

StreamCall = grpc.aio.StreamStreamCall[
    referee_pb2.ApplyStreamRequest, referee_pb2.ApplyStreamResponse
]


def _move(game: Game, notation: str) -> referee_pb2.ApplyRequest:
    return referee_pb2.ApplyRequest(state=state_of(game), move_notation=notation)


async def _answers(stream: StreamCall, count: int) -> dict[int, referee_pb2.ApplyStreamResponse]:
    answers: dict[int, referee_pb2.ApplyStreamResponse] = {}
    while len(answers) < count:
        answer = await asyncio.wait_for(stream.read(), CALL_TIMEOUT)
        assert isinstance(answer, referee_pb2.ApplyStreamResponse), answer
        assert answer.call_id not in answers
        answers[answer.call_id] = answer
    return answers


async def test_many_applies_at_once_each_get_their_own_answer(referee: Referee) -> None:
    # Games in different positions, so that an answer sent to the wrong call would show.
    openings = [("11-15",), ("9-13", "22-18"), ("10-14", "24-19", "14-18"), ()]
    requests: dict[int, referee_pb2.ApplyRequest] = {}
    for call_id in range(1, 201):
        opening = openings[call_id % len(openings)]
        game = game_after(opening)
        legal = game.legal_moves
        requests[call_id] = _move(game, game.notation(legal[call_id % len(legal)]))
    stream = referee.ApplyStream(timeout=CALL_TIMEOUT)
    # All sent before any answer is read (a stream takes one write at a time).
    for call_id, request in requests.items():
        await stream.write(referee_pb2.ApplyStreamRequest(call_id=call_id, request=request))
    answers = await _answers(stream, len(requests))
    await stream.done_writing()
    assert await stream.read() is grpc.aio.EOF
    assert await stream.code() is grpc.StatusCode.OK

    unary = await asyncio.gather(
        *(referee.Apply(request, timeout=CALL_TIMEOUT) for request in requests.values())
    )
    for (call_id, request), expected in zip(requests.items(), unary, strict=True):
        answer = answers[call_id]
        assert answer.WhichOneof("result") == "response"
        assert answer.response == expected
        assert answer.response.move.move.notation == request.move_notation


async def test_a_refusal_answers_its_request_as_unary_apply_does_and_the_stream_goes_on(
    referee: Referee,
) -> None:
    game = game_after([], fen="B:W18:B1,14")  # 14x23 is Black's one legal move
    illegal = _move(game, "1-5")
    expected = await refusal(referee.Apply(illegal, timeout=CALL_TIMEOUT))

    stream = referee.ApplyStream(timeout=CALL_TIMEOUT)
    await stream.write(referee_pb2.ApplyStreamRequest(call_id=1, request=illegal))
    await stream.write(referee_pb2.ApplyStreamRequest(call_id=2, request=_move(game, "14x23")))
    answers = await _answers(stream, 2)
    assert answers[1].WhichOneof("result") == "refusal"
    refused = ErrorStatus.from_details(answers[1].refusal)
    assert refused == expected
    assert refused is not None and refused.code is grpc.StatusCode.INVALID_ARGUMENT
    assert refused.reason == "CAPTURE_REQUIRED"
    assert answers[2].response.move.move.notation == "14x23"
    await stream.done_writing()
    assert await stream.code() is grpc.StatusCode.OK


async def test_bytes_that_are_no_request_end_the_stream_as_invalid_request(
    channel: grpc.aio.Channel,
) -> None:
    open_stream: grpc.aio.StreamStreamMultiCallable[bytes, bytes] = channel.stream_stream(
        "/goti.api.v1.RefereeService/ApplyStream",
        request_serializer=None,
        response_deserializer=None,
    )
    stream = open_stream(timeout=CALL_TIMEOUT)
    await stream.write(b"\xff\xff\xff")
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stream.read()
    assert raised.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    status = ErrorStatus.from_rpc_error(raised.value)
    assert status is not None and status.reason == "INVALID_REQUEST"


def _sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    value = registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


async def test_each_streamed_apply_counts_as_an_apply_call_of_the_stream_type(
    referee: Referee, server: serving.RunningServer
) -> None:
    labels = {"grpc_service": "goti.api.v1.RefereeService", "grpc_type": "bidi_stream"}
    game = game_after([])
    stream = referee.ApplyStream(timeout=CALL_TIMEOUT)
    for call_id, notation in enumerate(["11-15", "11-16", "1-5"], start=1):
        await stream.write(
            referee_pb2.ApplyStreamRequest(call_id=call_id, request=_move(game, notation))
        )
    await _answers(stream, 3)
    registry = server.registry
    apply = {**labels, "grpc_method": "Apply"}
    assert _sample(registry, "grpc_server_started_total", **apply) == 3
    assert _sample(registry, "grpc_server_handled_total", **apply, grpc_code="OK") == 2
    assert (
        _sample(registry, "grpc_server_handled_total", **apply, grpc_code="INVALID_ARGUMENT") == 1
    )
    assert _sample(registry, "grpc_server_handling_seconds_count", **apply) == 3
    # The stream itself is one call, handled when it ends.
    whole = {**labels, "grpc_method": "ApplyStream"}
    assert _sample(registry, "grpc_server_started_total", **whole) == 1
    assert _sample(registry, "grpc_server_handled_total", **whole, grpc_code="OK") == 0
    await stream.done_writing()
    assert await stream.code() is grpc.StatusCode.OK
    assert _sample(registry, "grpc_server_handled_total", **whole, grpc_code="OK") == 1
    unary = {**labels, "grpc_type": "unary", "grpc_method": "Apply"}
    assert _sample(registry, "grpc_server_started_total", **unary) == 0


async def test_a_graceful_stop_ends_open_streams_with_unavailable_at_once() -> None:
    settings = Settings(host="127.0.0.1", grace_seconds=60)
    service = RefereeService()
    running = await serving.start_server(
        "referee", service.bind, settings, port=0, drain=service.drain
    )
    try:
        async with serving.open_channel(running.target, settings) as channel:
            referee = referee_pb2_grpc.RefereeServiceStub(channel)
            streams = [referee.ApplyStream() for _ in range(3)]
            game = game_after([])
            for call_id, stream in enumerate(streams, start=1):
                await stream.write(
                    referee_pb2.ApplyStreamRequest(call_id=call_id, request=_move(game, "11-15"))
                )
                await _answers(stream, 1)
            started = time.monotonic()
            await running.stop(settings.grace_seconds)
            stopped_in = time.monotonic() - started
            for stream in streams:
                assert await stream.code() is grpc.StatusCode.UNAVAILABLE
                assert "stopping" in await stream.details()
    finally:
        await running.stop(None)
    # Open streams would have held it for the whole 60 s.
    assert stopped_in < 10, stopped_in
