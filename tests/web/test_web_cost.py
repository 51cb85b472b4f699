"""What the web port costs the tables process, against native gRPC: server CPU per unary call
and per streamed message, over Connect, gRPC-Web and gRPC. Reported, not asserted (a slow
test: ``make bench`` runs it).

The tables service runs as its own process (with a referee process and the shared Redis);
its CPU time is read from the operating system before and after each load. Unary calls are
GetTable (one Redis read each); streamed messages are the MovePlayed events of a pass-and-play
game reaching many watchers of the same table, less what the same moves cost unwatched.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from functools import partial

import grpc
import psutil
import pytest
from connectrpc.client import ConnectClient
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.protocol import ProtocolType
from redis.asyncio import Redis
from service_ports import service_ports

from goti.api.v1 import players_pb2, players_pb2_grpc, tables_pb2, tables_pb2_grpc
from goti.healthcheck import wait_until_serving
from goti.tables.servicer import TABLES_SERVICE
from goti.web.adapter import method_info

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

UNARY_CALLS = 2000
CONCURRENT_CALLS = 8
WATCHERS = 50
MOVES = 100
ROUNDS = 3
PROTOCOLS = {"connect": ProtocolType.CONNECT, "grpc-web": ProtocolType.GRPC_WEB}


@dataclass
class Backend:
    tables: psutil.Process
    grpc_target: str
    url: str

    def cpu_seconds(self) -> float:
        times = self.tables.cpu_times()
        return float(times.user + times.system)


@pytest.fixture
async def backend(redis_url: str, redis: Redis) -> AsyncIterator[Backend]:
    tables_port, referee_port, web_port, ai_port = service_ports(4)
    environment = {
        **{key: value for key, value in os.environ.items() if not key.startswith("GOTI_")},
        "GOTI_REDIS_URL": redis_url,
        "GOTI_HOST": "127.0.0.1",
        "GOTI_TABLES_PORT": str(tables_port),
        "GOTI_REFEREE_PORT": str(referee_port),
        "GOTI_WEB_PORT": str(web_port),
        "GOTI_REFEREE_TARGET": f"127.0.0.1:{referee_port}",
        "GOTI_AI_TARGET": f"127.0.0.1:{ai_port}",
        "GOTI_HEARTBEAT_SECONDS": "3600",
        "GOTI_TABLES_PER_MINUTE": "0",
        "GOTI_GUESTS_PER_MINUTE": "0",
        "GOTI_LOG_LEVEL": "warning",
    }
    processes = [
        await asyncio.create_subprocess_exec(sys.executable, "-m", f"goti.{name}", env=environment)
        for name in ("referee", "tables")
    ]
    try:
        await wait_until_serving(f"127.0.0.1:{referee_port}", timeout=60)
        await wait_until_serving(f"127.0.0.1:{tables_port}", timeout=60)
        yield Backend(
            psutil.Process(processes[1].pid),
            f"127.0.0.1:{tables_port}",
            f"http://127.0.0.1:{web_port}",
        )
    finally:
        for process in processes:
            process.terminate()
            await process.wait()


def _connect_client(backend: Backend, protocol: ProtocolType) -> ConnectClient:
    return ConnectClient(
        backend.url,
        codec=google_protobuf_binary_codec(),
        protocol=protocol,
        send_compression=None,
        accept_compression=(),
    )


async def _cpu_of(backend: Backend, load: Callable[[], Awaitable[None]]) -> float:
    before = backend.cpu_seconds()
    await load()
    # Let the last replies and stream writes finish before reading the clock again.
    await asyncio.sleep(0.2)
    return backend.cpu_seconds() - before


async def _new_table(channel: grpc.aio.Channel) -> tuple[str, str]:
    players = players_pb2_grpc.PlayersServiceStub(channel)
    guest = await players.CreateGuest(players_pb2.CreateGuestRequest(), timeout=30)
    tables = tables_pb2_grpc.TablesServiceStub(channel)
    created = await tables.CreateTable(
        tables_pb2.CreateTableRequest(
            request_id=uuid.uuid4().hex, opponent=tables_pb2.OPPONENT_PASS_AND_PLAY
        ),
        metadata=(("authorization", f"Bearer {guest.player_token}"),),
        timeout=30,
    )
    return created.table.table_id, guest.player_token


async def _in_parallel(calls: int, call: Callable[[], Awaitable[object]]) -> None:
    remaining = calls

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await call()

    await asyncio.gather(*(worker() for _ in range(CONCURRENT_CALLS)))


async def _unary_costs(backend: Backend, table_id: str) -> dict[str, float]:
    request = tables_pb2.GetTableRequest(table_id=table_id)
    costs: dict[str, list[float]] = {name: [] for name in ("grpc", *PROTOCOLS)}
    info = method_info(TABLES_SERVICE, TABLES_SERVICE.methods_by_name["GetTable"])
    async with grpc.aio.insecure_channel(backend.grpc_target) as channel:
        stub = tables_pb2_grpc.TablesServiceStub(channel)
        for _ in range(ROUNDS):
            spent = await _cpu_of(
                backend, lambda: _in_parallel(UNARY_CALLS, lambda: stub.GetTable(request))
            )
            costs["grpc"].append(spent / UNARY_CALLS)
            for name, protocol in PROTOCOLS.items():
                async with _connect_client(backend, protocol) as client:
                    call = partial(client.execute_unary, request=request, method=info)
                    spent = await _cpu_of(backend, partial(_in_parallel, UNARY_CALLS, call))
                    costs[name].append(spent / UNARY_CALLS)
    return {name: statistics.median(values) for name, values in costs.items()}


async def _play_moves(channel: grpc.aio.Channel, table_id: str, token: str, moves: int) -> None:
    tables = tables_pb2_grpc.TablesServiceStub(channel)
    metadata = (("authorization", f"Bearer {token}"),)
    table = (await tables.GetTable(tables_pb2.GetTableRequest(table_id=table_id))).table
    seq, game = table.seq, table.game
    for _ in range(moves):
        if not game.turn.legal_moves:
            return
        played = await tables.Play(
            tables_pb2.PlayRequest(
                table_id=table_id,
                request_id=uuid.uuid4().hex,
                expected_seq=seq,
                notation=game.turn.legal_moves[0].notation,
            ),
            metadata=metadata,
            timeout=30,
        )
        seq = played.events[-1].seq
        game.turn.CopyFrom(played.events[0].move_played.next)


async def _watch(stream: AsyncIterator[object], watching: asyncio.Queue[None], moves: int) -> None:
    """Follow one watch until ``moves`` events came, saying when its snapshot did."""
    events = 0
    async for message in stream:
        assert isinstance(message, tables_pb2.WatchTableResponse)
        kind = message.WhichOneof("message")
        if kind == "snapshot":
            watching.put_nowait(None)
        elif kind == "event":
            events += 1
            # Both games are the same (the first legal move every time), so one that ends
            # early ends as early unwatched.
            if events >= moves or message.event.WhichOneof("kind") == "game_over":
                return


async def _watched_moves_cpu(
    backend: Backend, channel: grpc.aio.Channel, protocol: ProtocolType | None
) -> float:
    """Server CPU of MOVES moves while WATCHERS follow the table over ``protocol``."""
    table_id, token = await _new_table(channel)
    request = tables_pb2.WatchTableRequest(table_id=table_id)
    info = method_info(TABLES_SERVICE, TABLES_SERVICE.methods_by_name["WatchTable"])
    clients = [_connect_client(backend, protocol) for _ in range(WATCHERS)] if protocol else []
    streams: list[AsyncIterator[object]] = (
        [client.execute_server_stream(request=request, method=info) for client in clients]
        if protocol
        else [
            aiter(tables_pb2_grpc.TablesServiceStub(channel).WatchTable(request))
            for _ in range(WATCHERS)
        ]
    )
    watching: asyncio.Queue[None] = asyncio.Queue()
    watchers = [asyncio.ensure_future(_watch(stream, watching, MOVES)) for stream in streams]
    for _ in range(WATCHERS):
        await asyncio.wait_for(watching.get(), 60)

    async def load() -> None:
        await _play_moves(channel, table_id, token, MOVES)
        await asyncio.wait_for(asyncio.gather(*watchers), 120)

    try:
        return await _cpu_of(backend, load)
    finally:
        for client in clients:
            await client.close()


async def _stream_cost(backend: Backend, protocol: ProtocolType | None) -> float:
    """Server CPU per streamed message over ``protocol`` (None: native gRPC)."""
    results = []
    async with grpc.aio.insecure_channel(backend.grpc_target) as channel:
        for _ in range(ROUNDS):
            table_id, token = await _new_table(channel)
            quiet = await _cpu_of(backend, partial(_play_moves, channel, table_id, token, MOVES))
            watched = await _watched_moves_cpu(backend, channel, protocol)
            results.append((watched - quiet) / (MOVES * WATCHERS))
    return statistics.median(results)


async def test_server_cpu_per_call_and_per_streamed_message(backend: Backend) -> None:
    async with grpc.aio.insecure_channel(backend.grpc_target) as channel:
        table_id, _ = await _new_table(channel)
    started = time.monotonic()
    unary = await _unary_costs(backend, table_id)
    streamed = {name: await _stream_cost(backend, protocol) for name, protocol in PROTOCOLS.items()}
    streamed["grpc"] = await _stream_cost(backend, None)
    figures = {
        "unary_ms_per_call": {name: round(cost * 1000, 3) for name, cost in unary.items()},
        "stream_us_per_message": {name: round(cost * 1e6, 1) for name, cost in streamed.items()},
        "calls": UNARY_CALLS,
        "concurrency": CONCURRENT_CALLS,
        "watchers": WATCHERS,
        "moves": MOVES,
        "rounds": ROUNDS,
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "seconds": round(time.monotonic() - started, 1),
    }
    print("web port cost:", json.dumps(figures))
