"""A real server process, stopped the way an operator stops it: SIGTERM (or Ctrl-C)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import pytest

from goti import healthcheck, serving
from goti.healthcheck import HealthCheckRequest, HealthCheckResponse
from goti.settings import Settings

from .echo import ECHO_SERVICE, EchoClient
from .logging_process import LoggingProcess

TESTS = Path(__file__).parents[1]
PATIENCE = 30.0  # seconds; generous, for a busy machine


@asynccontextmanager
async def echo_process(**environment: str) -> AsyncIterator[tuple[LoggingProcess, str]]:
    """Start the Echo server in its own process; give it and its target once it serves."""
    # The server sees only the GOTI_* variables a test gives it, not the developer's own.
    inherited = {name: value for name, value in os.environ.items() if not name.startswith("GOTI_")}
    env = {
        **inherited,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
        "GOTI_HOST": "127.0.0.1",
        "GOTI_LOG_FORMAT": "json",
        **environment,
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "serving.echo",
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    server = LoggingProcess(process)
    try:
        serving_record = await server.record("echo serving")
        yield server, f"127.0.0.1:{serving_record['port']}"
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def watch_until(channel: grpc.aio.Channel, wanted: int) -> Callable[[], asyncio.Future[None]]:
    """Watch the Echo service's health; return a waiter for the status ``wanted``."""
    watch = healthcheck.health_watch_call(channel)(HealthCheckRequest(service=ECHO_SERVICE))
    first = await watch.read()
    assert isinstance(first, HealthCheckResponse)
    assert first.status == HealthCheckResponse.SERVING

    async def until_wanted() -> None:
        try:
            while True:
                response = await watch.read()
                assert isinstance(response, HealthCheckResponse), "stream ended"
                if response.status == wanted:
                    return
        finally:
            watch.cancel()

    return lambda: asyncio.ensure_future(until_wanted())


async def first_refusal(client: EchoClient) -> grpc.aio.AioRpcError:
    """Call Echo again and again until a call fails; that failure."""
    while True:
        try:
            await client.echo(b"still there?", timeout=PATIENCE)
        except grpc.aio.AioRpcError as error:
            return error
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_a_signal_stops_the_server_gracefully(stop_signal: signal.Signals) -> None:
    settings = Settings()
    async with (
        echo_process(GOTI_GRACE_SECONDS="20") as (server, target),
        serving.open_channel(target, settings) as channel,
    ):
        client = EchoClient.on(channel)
        assert await healthcheck.check(target, ECHO_SERVICE) == healthcheck.SERVING
        not_serving = await watch_until(channel, HealthCheckResponse.NOT_SERVING)
        sleeping = asyncio.ensure_future(client.sleep(b"5", timeout=PATIENCE))
        await server.record("sleep started")

        server.process.send_signal(stop_signal)
        signalled_at = time.monotonic()
        await asyncio.wait_for(not_serving(), PATIENCE)
        # Past the pause the client is sent away while the sleep goes on: its next call seeks
        # a new connection, which the server no longer takes (another replica would answer).
        refused = await asyncio.wait_for(first_refusal(client), PATIENCE)
        assert refused.code() == grpc.StatusCode.UNAVAILABLE
        # Refused as a new connection: not taken at all, or reset while being set up (the
        # server's listening socket closing under it, seen once in CI).
        details = str(refused.details())
        assert "Failed to connect" in details or "Connection reset by peer" in details, details
        assert not sleeping.done()
        assert await sleeping == b"slept"
        assert await server.exit_code() == 0
        # It left as soon as the call was done, not at the end of the grace period.
        assert time.monotonic() - signalled_at < 20

    messages = [record["message"] for record in server.records]
    assert f"echo: {stop_signal.name} received" in messages
    assert messages[-1] == "echo stopped"
    assert not server.stray_lines, server.stray_lines
    for record in server.records:
        assert {"time", "level", "logger", "message"} <= record.keys()
    serving_record = await server.record("echo serving")
    assert serving_record["services"] == [ECHO_SERVICE]
    assert serving_record["event_loop"].startswith("uvloop")
    # What start-up built is out of the garbage collector's full walks.
    assert serving_record["gc_frozen_objects"] > 10_000


async def test_calls_that_outlast_the_grace_period_are_cut_off() -> None:
    settings = Settings()
    async with (
        echo_process(GOTI_GRACE_SECONDS="0.5") as (server, target),
        serving.open_channel(target, settings) as channel,
    ):
        sleeping = asyncio.ensure_future(EchoClient.on(channel).sleep(b"600", timeout=PATIENCE))
        await server.record("sleep started")
        server.process.send_signal(signal.SIGTERM)
        with pytest.raises(grpc.aio.AioRpcError) as cut:
            await sleeping
        assert cut.value.code() == grpc.StatusCode.UNAVAILABLE
        assert await server.exit_code() == 0


async def test_a_second_signal_stops_at_once() -> None:
    settings = Settings()
    async with (
        echo_process(GOTI_GRACE_SECONDS="600") as (server, target),
        serving.open_channel(target, settings) as channel,
    ):
        not_serving = await watch_until(channel, HealthCheckResponse.NOT_SERVING)
        sleeping = asyncio.ensure_future(EchoClient.on(channel).sleep(b"600", timeout=PATIENCE))
        await server.record("sleep started")
        server.process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(not_serving(), PATIENCE)
        server.process.send_signal(signal.SIGINT)
        with pytest.raises(grpc.aio.AioRpcError):
            await sleeping
        assert await server.exit_code() == 0
    assert any("again" in record["message"] for record in server.records)


async def test_the_healthcheck_command_exits_0_only_when_serving() -> None:
    async def healthcheck_command(*arguments: str) -> tuple[int, str]:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "goti.healthcheck",
            *arguments,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await asyncio.wait_for(process.communicate(), PATIENCE)
        assert process.returncode is not None
        return process.returncode, output.decode()

    async with echo_process() as (server, target):
        assert await healthcheck_command(target) == (0, f"{target}: SERVING\n")
        code, output = await healthcheck_command("--service", "goti.Nothing", target)
        assert (code, output) == (1, f"{target}: SERVICE_UNKNOWN\n")
        server.process.send_signal(signal.SIGTERM)
        assert await server.exit_code() == 0
    code, output = await healthcheck_command("--timeout", "2", target)
    assert code == 1
    assert "UNAVAILABLE" in output or "DEADLINE_EXCEEDED" in output
    code, output = await healthcheck_command("--wait", "--timeout", "0.5", target)
    assert code == 1
    assert output.startswith(f"{target}: the server not serving after 0.5 s")


async def test_unknown_settings_are_warned_about_with_a_likely_fix() -> None:
    async with echo_process(GOTI_GRACE_SECOND="3") as (server, _):
        warning = await server.record("ignoring unknown setting")
        assert warning["level"] == "warning"
        assert warning["variable"] == "GOTI_GRACE_SECOND (did you mean GOTI_GRACE_SECONDS?)"
        assert warning["message"].endswith("(did you mean GOTI_GRACE_SECONDS?)")
        server.process.send_signal(signal.SIGTERM)
        assert await server.exit_code() == 0


async def test_a_service_with_bad_settings_exits_2_naming_the_variable() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from goti import serving; serving.main('referee', lambda server: [])",
        env={**os.environ, "GOTI_REFEREE_PORT": "abc"},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, errors = await asyncio.wait_for(process.communicate(), PATIENCE)
    assert process.returncode == 2
    assert "GOTI_REFEREE_PORT must be a port number 1-65535, got 'abc'" in errors.decode()
