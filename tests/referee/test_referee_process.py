"""The referee as an operator runs it: its own process, started by ``goti serve referee`` or
``python -m goti.referee``, asked for its health, listed by reflection, and stopped by SIGTERM
while calls are in flight."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2
from service_ports import service_ports
from serving.logging_process import LoggingProcess

from goti import healthcheck, serving
from goti.api.v1 import referee_pb2, referee_pb2_grpc
from goti.healthcheck import HealthCheckRequest, HealthCheckResponse
from goti.referee.servicer import SERVICE_NAME
from goti.rules.game import Game, position_key
from goti.settings import Settings

from .referee_calls import state_of

PATIENCE = 30.0  # seconds; generous, for a busy machine


@asynccontextmanager
async def referee_process(
    arguments: Sequence[str], **environment: str
) -> AsyncIterator[tuple[LoggingProcess, str]]:
    """Start a referee process; give it and its target once it serves."""
    # The process sees only the GOTI_* variables a test gives it, not the developer's own.
    inherited = {name: value for name, value in os.environ.items() if not name.startswith("GOTI_")}
    env = {**inherited, "GOTI_HOST": "127.0.0.1", "GOTI_LOG_FORMAT": "json", **environment}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *arguments,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    referee = LoggingProcess(process)
    try:
        serving_record = await referee.record("referee serving")
        yield referee, f"127.0.0.1:{serving_record['port']}"
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def free_port() -> int:
    """A port nothing listens on now (``python -m goti.referee`` takes its port from the
    environment, where 0 is not allowed), and none the OS hands out for port 0 meanwhile."""
    [port] = service_ports(1)
    return port


async def reflected_services(target: str) -> set[str]:
    async with grpc.aio.insecure_channel(target) as channel:
        call: grpc.aio.StreamStreamMultiCallable[
            reflection_pb2.ServerReflectionRequest, reflection_pb2.ServerReflectionResponse
        ] = channel.stream_stream(
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )
        requests = [reflection_pb2.ServerReflectionRequest(list_services="")]
        responses = [response async for response in call(iter(requests), timeout=PATIENCE)]
    return {service.name for service in responses[0].list_services_response.service}


async def test_python_m_goti_referee_serves_health_and_reflection() -> None:
    async with referee_process(["-m", "goti.referee"], GOTI_REFEREE_PORT=str(free_port())) as (
        referee,
        target,
    ):
        assert await healthcheck.check(target) == healthcheck.SERVING
        assert await healthcheck.check(target, SERVICE_NAME) == healthcheck.SERVING
        assert await reflected_services(target) == {
            SERVICE_NAME,
            serving.HEALTH_SERVICE,
            serving.REFLECTION_SERVICE,
        }
        checker = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "goti.healthcheck",
            "--service",
            SERVICE_NAME,
            target,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await asyncio.wait_for(checker.communicate(), PATIENCE)
        assert (checker.returncode, output.decode()) == (0, f"{target}: SERVING\n")
        referee.process.send_signal(signal.SIGTERM)
        assert await referee.exit_code() == 0
    assert not referee.stray_lines, referee.stray_lines


def long_game() -> Game:
    """A game of over a thousand plies, whose PDN takes the referee tens of milliseconds to
    check and write: kings walk to positions not seen since the last man move, men step only
    when the move-limit clock runs low, and no move leaves a piece to be taken."""
    game = Game.from_fen("W:WK22,21,25,26,29,30,31,32:BK11,1,2,3,4,5,6,7")
    chooser = random.Random(4)
    while not game.is_over:
        position = game.position
        seen = set(game.state().repetition)
        safe = [m for m in game.legal_moves if not position.push(m).must_capture]
        safe = safe or game.legal_moves
        kings, men = [], []
        for move in safe:
            piece = position.piece_at(move.origin)
            if piece is not None and not piece.king:
                men.append(move)
            elif not move.captured and position_key(position.push(move)) not in seen:
                kings.append(move)
        if game.quiet_plies < 70 and kings:
            game.push(chooser.choice(kings))
        else:
            game.push(chooser.choice(men or safe))
    assert game.ply > 1000
    return game


GRACE_SECONDS = 60
"""The grace period of the referee stopped mid-call: long, so that its exit coming before the
end of it shows the referee waited for the call alone, however busy the machine."""
IN_FLIGHT_TRIES = 10


async def test_sigterm_lets_the_call_in_flight_finish_then_exits_0() -> None:
    request = referee_pb2.ExportPdnRequest(state=state_of(long_game()), tags={"Event": "long"})
    settings = Settings()
    async with (
        referee_process(
            ["-m", "goti.cli", "serve", "referee", "--port", "0"],
            GOTI_GRACE_SECONDS=str(GRACE_SECONDS),
        ) as (referee, target),
        serving.open_channel(target, settings) as channel,
    ):
        stub = referee_pb2_grpc.RefereeServiceStub(channel)
        watch = healthcheck.health_watch_call(channel)(HealthCheckRequest(service=SERVICE_NAME))
        first = await watch.read()
        assert isinstance(first, HealthCheckResponse)
        assert first.status == HealthCheckResponse.SERVING

        started = time.monotonic()
        await stub.ExportPdn(request, timeout=PATIENCE)
        call_seconds = time.monotonic() - started
        # Signal a third of the way through the next call: by then the referee is at work on
        # it, with two thirds still to do. On a busy machine a call's time varies: where the
        # next one is over by then, it is timed in turn and another sent.
        for _ in range(IN_FLIGHT_TRIES):
            started = time.monotonic()
            in_flight = asyncio.ensure_future(stub.ExportPdn(request, timeout=PATIENCE))
            await asyncio.sleep(call_seconds / 3)
            if not in_flight.done():
                break
            await in_flight
            call_seconds = time.monotonic() - started
        else:
            raise AssertionError(f"each of {IN_FLIGHT_TRIES} calls was over a third of the way in")
        referee.process.send_signal(signal.SIGTERM)
        signalled_at = time.monotonic()

        while True:
            update = await asyncio.wait_for(watch.read(), PATIENCE)
            assert isinstance(update, HealthCheckResponse)
            if update.status == HealthCheckResponse.NOT_SERVING:
                break
        watch.cancel()
        answer = await in_flight
        assert answer.pdn.startswith('[Event "long"]')
        assert await referee.exit_code() == 0
        # Gone as soon as its call was done, not at the end of the grace period.
        assert time.monotonic() - signalled_at < GRACE_SECONDS
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.ExportPdn(request, timeout=PATIENCE)
        assert refused.value.code() is grpc.StatusCode.UNAVAILABLE

    messages = [record["message"] for record in referee.records]
    assert "referee: SIGTERM received" in messages
    assert messages[-1] == "referee stopped"
    assert not referee.stray_lines, referee.stray_lines
