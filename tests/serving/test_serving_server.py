"""The harness in this process: real servers on free ports, real channels, no mocks."""

from __future__ import annotations

import asyncio
import contextlib
import time
import urllib.request
from collections.abc import AsyncIterator, Callable, Sequence

import grpc
import pytest
import pytest_asyncio
from google.protobuf.descriptor_pb2 import FileDescriptorProto
from grpc_reflection.v1alpha import reflection_pb2
from in_process_backend import running_server
from prometheus_client.parser import text_string_to_metric_families
from tcp_proxy import TcpProxy

from goti import healthcheck, serving
from goti.healthcheck import HealthCheckRequest, HealthCheckResponse
from goti.settings import Settings

from .conftest import MAX_MESSAGE_BYTES
from .echo import ECHO_SERVICE, EchoClient, EchoService

Labels = dict[str, str]


def labels(method: str, grpc_type: str = "unary", **more: str) -> Labels:
    return {"grpc_type": grpc_type, "grpc_service": ECHO_SERVICE, "grpc_method": method, **more}


def handled(
    server: serving.RunningServer, method: str, code: str, grpc_type: str = "unary"
) -> float:
    value = server.registry.get_sample_value(
        "grpc_server_handled_total", labels(method, grpc_type, grpc_code=code)
    )
    return value or 0.0


async def eventually(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Wait for something another task or thread does; generous, for a busy machine."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def reflect(
    channel: grpc.aio.Channel, requests: Sequence[reflection_pb2.ServerReflectionRequest]
) -> list[reflection_pb2.ServerReflectionResponse]:
    call: grpc.aio.StreamStreamMultiCallable[
        reflection_pb2.ServerReflectionRequest, reflection_pb2.ServerReflectionResponse
    ] = channel.stream_stream(
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    return [response async for response in call(iter(requests), timeout=30)]


async def next_status(
    watch: grpc.aio.UnaryStreamCall[HealthCheckRequest, HealthCheckResponse],
) -> int:
    response = await watch.read()
    assert isinstance(response, HealthCheckResponse)
    return response.status


# Health and reflection ------------------------------------------------------------------------


async def test_health_says_serving_once_started(server: serving.RunningServer) -> None:
    assert await healthcheck.check(server.target) == healthcheck.SERVING
    assert await healthcheck.check(server.target, ECHO_SERVICE) == healthcheck.SERVING
    unknown = await healthcheck.check(server.target, "goti.api.v1.NoSuchService")
    assert unknown == healthcheck.SERVICE_UNKNOWN


async def test_reflection_lists_the_services_and_describes_them(
    channel: grpc.aio.Channel,
) -> None:
    listed, described = await reflect(
        channel,
        [
            reflection_pb2.ServerReflectionRequest(list_services=""),
            reflection_pb2.ServerReflectionRequest(file_containing_symbol=serving.HEALTH_SERVICE),
        ],
    )
    names = {service.name for service in listed.list_services_response.service}
    assert names == {ECHO_SERVICE, serving.HEALTH_SERVICE, serving.REFLECTION_SERVICE}
    files = [
        FileDescriptorProto.FromString(data)
        for data in described.file_descriptor_response.file_descriptor_proto
    ]
    health_file = next(file for file in files if file.package == "grpc.health.v1")
    assert [service.name for service in health_file.service] == ["Health"]


async def test_an_async_bind_works_too(settings: Settings) -> None:
    async def bind(server: grpc.aio.Server) -> list[str]:
        await asyncio.sleep(0)  # e.g. connecting to Redis first
        return EchoService().bind(server)

    running = await serving.start_server("echo", bind, settings, port=0)
    try:
        assert running.services == (ECHO_SERVICE,)
        assert running.metrics_port is None
        assert await healthcheck.check(running.target, ECHO_SERVICE) == healthcheck.SERVING
    finally:
        await running.stop(None)


async def test_wait_until_serving_waits_for_a_server_that_comes_up_late(
    settings: Settings,
) -> None:
    placeholder = await serving.start_server("echo", EchoService().bind, settings, port=0)
    port = placeholder.port
    await placeholder.stop(None)  # the port is free again, and nothing listens on it

    async def start_later() -> serving.RunningServer:
        await asyncio.sleep(0.3)
        return await serving.start_server("echo", EchoService().bind, settings, port=port)

    late = asyncio.ensure_future(start_later())
    try:
        await healthcheck.wait_until_serving(f"127.0.0.1:{port}", ECHO_SERVICE, timeout=30)
    finally:
        await (await late).stop(None)


async def test_wait_until_serving_gives_up_with_what_it_saw(
    server: serving.RunningServer,
) -> None:
    with pytest.raises(TimeoutError, match="SERVICE_UNKNOWN"):
        await healthcheck.wait_until_serving(server.target, "goti.api.v1.Nothing", timeout=0.5)


# Channel options --------------------------------------------------------------------------


def test_clients_ping_no_more_often_than_servers_accept() -> None:
    for settings in (
        Settings(),
        Settings(keepalive_time_seconds=30, keepalive_min_ping_interval_seconds=30),
    ):
        server = dict(serving.server_options(settings))
        client = dict(serving.channel_options(settings))
        assert int(client["grpc.keepalive_time_ms"]) >= int(
            server["grpc.http2.min_ping_interval_without_data_ms"]
        )
        assert server["grpc.http2.max_pings_without_data"] == 0
        assert client["grpc.http2.max_pings_without_data"] == 0
        for option in ("grpc.max_send_message_length", "grpc.max_receive_message_length"):
            assert server[option] == client[option] == settings.max_message_bytes
        assert server["grpc.so_reuseport"] == 0
        assert server["grpc.server.max_pending_requests"] == settings.max_pending_requests
        assert "round_robin" in str(client["grpc.service_config"])


async def test_goti_channels_retry_a_call_that_was_unavailable(
    server: serving.RunningServer, client: EchoClient, echo_service: EchoService
) -> None:
    assert await client.flaky(b"again", timeout=30) == b"again"
    assert echo_service.flaky_calls == 2
    async with grpc.aio.insecure_channel(server.target) as plain:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await EchoClient.on(plain).flaky(b"again", timeout=30)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_messages_over_the_limit_are_refused_by_both_sides(
    server: serving.RunningServer, client: EchoClient
) -> None:
    too_big = b"x" * (MAX_MESSAGE_BYTES + 1)
    assert await client.echo(b"x" * (MAX_MESSAGE_BYTES - 100), timeout=30)
    with pytest.raises(grpc.aio.AioRpcError) as by_client:
        await client.echo(too_big, timeout=30)
    assert by_client.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    async with grpc.aio.insecure_channel(server.target) as unlimited:
        with pytest.raises(grpc.aio.AioRpcError) as by_server:
            await EchoClient.on(unlimited).echo(too_big, timeout=30)
    assert by_server.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_a_port_in_use_is_an_error_that_names_it(
    server: serving.RunningServer, settings: Settings
) -> None:
    with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{server.port}"):
        await serving.start_server("echo", EchoService().bind, settings, port=server.port)
    assert server.metrics_port is not None
    with pytest.raises(OSError, match=f"cannot serve metrics on 127.0.0.1:{server.metrics_port}"):
        await serving.start_server(
            "echo", EchoService().bind, settings, port=0, metrics_port=server.metrics_port
        )


# Metrics ------------------------------------------------------------------------------------


async def scrape(
    server: serving.RunningServer,
) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    url = f"http://127.0.0.1:{server.metrics_port}/metrics"

    def fetch() -> str:
        with urllib.request.urlopen(url, timeout=30) as response:
            text: bytes = response.read()
            return text.decode()

    text = await asyncio.to_thread(fetch)
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def test_metrics_endpoint_counts_and_times_unary_calls_by_code(
    server: serving.RunningServer, client: EchoClient
) -> None:
    assert await client.echo(b"one", timeout=30) == b"one"
    assert await client.echo(b"two", timeout=30) == b"two"
    with pytest.raises(grpc.aio.AioRpcError):
        await client.echo(b"abort", timeout=30)

    samples = await scrape(server)

    def sample(name: str, **extra: str) -> float:
        return samples[(name, frozenset(labels("Echo", **extra).items()))]

    assert sample("grpc_server_started_total") == 3
    assert sample("grpc_server_handled_total", grpc_code="OK") == 2
    assert sample("grpc_server_handled_total", grpc_code="INVALID_ARGUMENT") == 1
    assert sample("grpc_server_handling_seconds_count") == 3
    assert sample("grpc_server_handling_seconds_bucket", le="+Inf") == 3
    assert any(name == "process_cpu_seconds_total" for name, _ in samples)


async def test_a_server_stream_streams_and_counts_when_it_ends(
    server: serving.RunningServer, client: EchoClient
) -> None:
    messages = [message async for message in client.count(b"5", timeout=30)]
    assert messages == [b"0", b"1", b"2", b"3", b"4"]
    assert handled(server, "Count", "OK", "server_stream") == 1
    samples = await scrape(server)
    key = (
        "grpc_server_handling_seconds_count",
        frozenset(labels("Count", "server_stream").items()),
    )
    assert samples[key] == 1


async def test_a_stream_the_client_cancels_counts_as_cancelled(
    server: serving.RunningServer, client: EchoClient
) -> None:
    call = client.count(b"-1")
    assert await call.read() == b"0"
    assert await call.read() == b"1"
    call.cancel()
    await eventually(lambda: handled(server, "Count", "CANCELLED", "server_stream") == 1)
    assert handled(server, "Count", "OK", "server_stream") == 0


async def test_an_unhandled_error_counts_as_unknown(
    server: serving.RunningServer, client: EchoClient
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        await client.count(b"not a number", timeout=30).read()
    assert failed.value.code() == grpc.StatusCode.UNKNOWN
    assert handled(server, "Count", "UNKNOWN", "server_stream") == 1


# Graceful stop ------------------------------------------------------------------------------


async def test_stop_says_not_serving_then_lets_calls_in_flight_finish(
    server: serving.RunningServer,
    channel: grpc.aio.Channel,
    client: EchoClient,
    echo_service: EchoService,
) -> None:
    watch = healthcheck.health_watch_call(channel)(HealthCheckRequest(service=ECHO_SERVICE))
    assert await next_status(watch) == HealthCheckResponse.SERVING
    sleeping = asyncio.ensure_future(client.sleep(b"0.5", timeout=30))
    await echo_service.sleep_started.wait()

    stopping = asyncio.ensure_future(server.stop(30))
    assert await next_status(watch) == HealthCheckResponse.NOT_SERVING
    watch.cancel()

    assert await sleeping == b"slept"
    await asyncio.wait_for(stopping, 30)
    assert handled(server, "Sleep", "OK") == 1
    # The health Watch, a stream written with context.write(), was observed too.
    watch_labels = {
        "grpc_type": "server_stream",
        "grpc_service": serving.HEALTH_SERVICE,
        "grpc_method": "Watch",
        "grpc_code": "CANCELLED",
    }
    await eventually(
        lambda: server.registry.get_sample_value("grpc_server_handled_total", watch_labels) == 1
    )

    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await client.echo(b"too late", timeout=30)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_a_health_watch_does_not_hold_the_stop(
    server: serving.RunningServer, channel: grpc.aio.Channel
) -> None:
    watch = healthcheck.health_watch_call(channel)(HealthCheckRequest(service=ECHO_SERVICE))
    assert await next_status(watch) == HealthCheckResponse.SERVING
    await asyncio.wait_for(server.stop(600), 30)


async def test_stop_cancels_calls_that_outlast_the_grace_period(
    server: serving.RunningServer, client: EchoClient, echo_service: EchoService
) -> None:
    sleeping = asyncio.ensure_future(client.sleep(b"600", timeout=60))
    await echo_service.sleep_started.wait()
    await asyncio.wait_for(server.stop(0.2), 30)
    with pytest.raises(grpc.aio.AioRpcError) as cut:
        await sleeping
    assert cut.value.code() == grpc.StatusCode.UNAVAILABLE
    await eventually(lambda: handled(server, "Sleep", "CANCELLED") == 1)


async def test_stopping_again_shortens_the_grace_period(
    server: serving.RunningServer, client: EchoClient, echo_service: EchoService
) -> None:
    sleeping = asyncio.ensure_future(client.sleep(b"600", timeout=60))
    await echo_service.sleep_started.wait()
    patient = asyncio.ensure_future(server.stop(600))
    await asyncio.sleep(0.1)
    await asyncio.wait_for(server.stop(None), 30)
    await asyncio.wait_for(patient, 30)
    with pytest.raises(grpc.aio.AioRpcError):
        await sleeping


async def test_new_calls_are_served_through_the_pause_then_clients_are_sent_away(
    settings: Settings, echo_service: EchoService
) -> None:
    after_the_pause: list[grpc.aio.AioRpcError] = []

    async def drain() -> None:
        # The pause is over: the client's next call leaves the connection it shares with the
        # call held in flight and finds no new one taken; only then is that call let finish.
        try:
            await client.echo(b"too late", timeout=30)
        except grpc.aio.AioRpcError as refused:
            after_the_pause.append(refused)
        finally:
            echo_service.released.set()

    running = await serving.start_server(
        "echo", echo_service.bind, settings, port=0, metrics_port=0, drain=drain
    )
    try:
        async with serving.open_channel(running.target, settings) as channel:
            client = EchoClient.on(channel)
            held = asyncio.ensure_future(client.hold(b"", timeout=30))
            await echo_service.holding.wait()

            pausing = asyncio.ensure_future(running.stop(30, pause=600))
            status = await healthcheck.check(running.target, ECHO_SERVICE, timeout=30)
            assert status == healthcheck.NOT_SERVING
            assert await client.echo(b"in the pause", timeout=30) == b"in the pause"
            # A second stop without a pause ends this one's.
            await asyncio.wait_for(running.stop(30), 30)
            await asyncio.wait_for(pausing, 30)

            [refused] = after_the_pause
            assert refused.code() == grpc.StatusCode.UNAVAILABLE
            assert "Failed to connect" in str(refused.details())
            assert await held == b"released"
        assert handled(running, "Hold", "OK") == 1
        assert handled(running, "Echo", "OK") == 1
        # The server itself refused nothing: the call never came to it.
        assert handled(running, "Echo", "UNAVAILABLE") == 0
        assert handled(running, "Echo", "CANCELLED") == 0
    finally:
        await running.stop(None)


async def test_a_client_of_a_stopping_server_takes_its_next_calls_to_another_at_once(
    settings: Settings,
) -> None:
    leaving_service, staying_service = EchoService(), EchoService()
    async with contextlib.AsyncExitStack() as stack:
        leaving, staying = [
            await stack.enter_async_context(running_server("echo", service.bind, settings))
            for service in (leaving_service, staying_service)
        ]
        # One address in front of both, as a load balancer passing connections through.
        proxy = TcpProxy([leaving.port, staying.port])
        await proxy.start()
        stack.push_async_callback(proxy.stop)
        channel = await stack.enter_async_context(serving.open_channel(proxy.target, settings))
        client = EchoClient.on(channel)
        held = asyncio.ensure_future(client.hold(b"", timeout=30))
        await leaving_service.holding.wait()

        stopping = asyncio.ensure_future(leaving.stop(30))
        # While the held call goes on, the next calls on the same channel go elsewhere.
        await eventually(lambda: proxy.connections[staying.port] == 1 or stopping.done())
        assert await client.echo(b"elsewhere", timeout=30) == b"elsewhere"
        assert not stopping.done() and not held.done()
        leaving_service.released.set()
        assert await held == b"released"
        await asyncio.wait_for(stopping, 30)
        assert handled(staying, "Echo", "OK") == 1
        assert handled(leaving, "Echo", "OK") == 0
        assert proxy.connections == {leaving.port: 1, staying.port: 1}


async def test_calls_queued_when_the_server_stops_end_unavailable_not_cancelled(
    server: serving.RunningServer, client: EchoClient
) -> None:
    assert await client.echo(b"connected", timeout=30) == b"connected"
    calls = [asyncio.ensure_future(client.echo(b"%d" % n, timeout=30)) for n in range(200)]
    # The first answer: the others are on their way or queued at the server.
    await asyncio.wait(calls, return_when=asyncio.FIRST_COMPLETED)
    await asyncio.wait_for(server.stop(5), 30)
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    # gRPC ends CANCELLED the calls it had queued when its stop began; a Goti channel tries
    # them again, elsewhere: here, with no other server, that fails UNAVAILABLE.
    codes = {
        outcome.code() if isinstance(outcome, grpc.aio.AioRpcError) else grpc.StatusCode.OK
        for outcome in outcomes
    }
    assert grpc.StatusCode.UNAVAILABLE in codes
    assert codes <= {grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE}


async def test_drain_runs_once_health_says_not_serving(
    settings: Settings, echo_service: EchoService
) -> None:
    seen: list[int] = []

    async def drain() -> None:
        seen.append(await next_status(watch))

    running = await serving.start_server("echo", echo_service.bind, settings, port=0, drain=drain)
    async with serving.open_channel(running.target, settings) as channel:
        watch = healthcheck.health_watch_call(channel)(HealthCheckRequest(service=ECHO_SERVICE))
        assert await next_status(watch) == HealthCheckResponse.SERVING
        await asyncio.wait_for(running.stop(5), 30)
    assert seen == [HealthCheckResponse.NOT_SERVING]


# Keepalive, for real: a call with no data for several ping intervals is not cut off.


@pytest.fixture
def keepalive_settings() -> Settings:
    return Settings(
        host="127.0.0.1",
        keepalive_time_seconds=0.5,
        keepalive_timeout_seconds=5,
        keepalive_min_ping_interval_seconds=0.5,
    )


@pytest_asyncio.fixture
async def quiet_server(
    keepalive_settings: Settings,
) -> AsyncIterator[serving.RunningServer]:
    running = await serving.start_server("echo", EchoService().bind, keepalive_settings, port=0)
    yield running
    await running.stop(None)


async def test_a_quiet_call_survives_the_agreed_pings(
    quiet_server: serving.RunningServer, keepalive_settings: Settings
) -> None:
    async with serving.open_channel(quiet_server.target, keepalive_settings) as channel:
        assert await EchoClient.on(channel).sleep(b"1.2", timeout=30) == b"slept"
