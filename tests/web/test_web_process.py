"""``python -m goti.tables`` with its web port, as an operator runs it: one process serving
gRPC and the page with Connect on the same event loop, stopped by SIGTERM with a browser's
stream open."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator

import psutil
import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from redis.asyncio import Redis
from service_ports import service_ports

from goti.api.v1 import tables_pb2
from goti.healthcheck import wait_until_serving
from goti.tables.servicer import TABLES_SERVICE
from goti.web.adapter import method_info

from .test_web_api import BrowserCalls
from .test_web_page import fetch

PATIENCE = 60.0


@pytest.fixture
async def tables_process(
    redis_url: str, redis: Redis
) -> AsyncIterator[tuple[asyncio.subprocess.Process, int, int, int]]:
    grpc_port, web_port, metrics_port, referee_port, ai_port = service_ports(5)
    environment = {
        **{key: value for key, value in os.environ.items() if not key.startswith("GOTI_")},
        "GOTI_REDIS_URL": redis_url,
        "GOTI_HOST": "127.0.0.1",
        "GOTI_TABLES_PORT": str(grpc_port),
        "GOTI_WEB_PORT": str(web_port),
        "GOTI_TABLES_METRICS_PORT": str(metrics_port),
        "GOTI_REFEREE_TARGET": f"127.0.0.1:{referee_port}",
        "GOTI_AI_TARGET": f"127.0.0.1:{ai_port}",
        "GOTI_GRACE_SECONDS": "2",
        "GOTI_HEARTBEAT_SECONDS": "1",
        "GOTI_LOG_FORMAT": "json",
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "goti.tables",
        env=environment,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        yield process, grpc_port, web_port, metrics_port
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_one_process_serves_grpc_and_the_page_and_stops_on_sigterm(
    tables_process: tuple[asyncio.subprocess.Process, int, int, int],
) -> None:
    process, grpc_port, web_port, metrics_port = tables_process
    await wait_until_serving(f"127.0.0.1:{grpc_port}", timeout=PATIENCE)
    url = f"http://127.0.0.1:{web_port}/"
    page = await fetch(url)
    assert page.status == 200
    listening = {
        connection.laddr.port
        for connection in psutil.Process(process.pid).net_connections(kind="tcp")
        if connection.status == psutil.CONN_LISTEN
    }
    assert {grpc_port, web_port} <= listening, "both ports belong to the one tables process"

    from connectrpc.client import ConnectClient  # noqa: PLC0415
    from connectrpc.compat import google_protobuf_binary_codec  # noqa: PLC0415

    async with ConnectClient(
        url.rstrip("/"), codec=google_protobuf_binary_codec(), protocol=ProtocolType.CONNECT
    ) as client:
        calls = BrowserCalls(client)
        lobby = client.execute_server_stream(
            request=tables_pb2.WatchLobbyRequest(),
            method=method_info(TABLES_SERVICE, TABLES_SERVICE.methods_by_name["WatchLobby"]),
        )
        assert (await anext(lobby)).WhichOneof("message") == "snapshot"
        await calls.sign_in()

        # The web port's calls are counted beside the gRPC server's.
        metrics = (await fetch(f"http://127.0.0.1:{metrics_port}/metrics")).body.decode()
        assert (
            'goti_web_calls_handled_total{code="OK",protocol="connect",'
            'rpc_method="CreateGuest",rpc_service="goti.api.v1.PlayersService"} 1.0'
        ) in metrics
        assert (
            'goti_web_calls_started_total{protocol="connect",rpc_method="WatchLobby",'
            'rpc_service="goti.api.v1.TablesService"} 1.0'
        ) in metrics
        assert "grpc_server_started_total" in metrics

        process.send_signal(signal.SIGTERM)
        with pytest.raises(ConnectError) as ended:
            while True:
                await asyncio.wait_for(anext(lobby), PATIENCE)
        assert ended.value.code is Code.UNAVAILABLE
    assert await asyncio.wait_for(process.wait(), PATIENCE) == 0
    assert process.stderr is not None
    records = [
        json.loads(line)
        for line in (await process.stderr.read()).splitlines()
        if line.startswith(b"{")
    ]
    serving = [
        r for r in records if str(r.get("message", "")).startswith("web page and Connect API on")
    ]
    assert serving and serving[0]["web_port"] == web_port
