"""The move path's floor: Goti's hops built out of bare parts with handlers that do nothing
(``bench/move_path_floor.py`` says what is measured and why), run as child processes and
driven the way ``bench/tables.py`` drives Goti, so that other benchmarks
(``bench/move_path_paired.py``) can put the same load on both side by side.

``python -m goti.benchmark_floor referee PORT`` and ``python -m goti.benchmark_floor tables PORT
REFEREE_TARGET REDIS_URL`` are the two servers :class:`FloorBackend` starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import random
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import grpc
from redis.asyncio import Redis
from redis.asyncio.client import PubSub

from goti import serving
from goti.benchmarking import LoopbackServers, call_seconds, milliseconds, percentile
from goti.redis_server import free_port
from goti.settings import Settings

HOST: Final = "127.0.0.1"
CALL_TIMEOUT: Final = 10.0
PLAY: Final = "/floor.Tables/Play"
WATCH: Final = "/floor.Tables/Watch"
APPLY: Final = "/floor.Referee/ApplyStream"
APPLY_STREAMS: Final = 4
"""Streams the tables stand-in keeps open to the referee's, as Goti's tables service does."""
CALL_ID_BYTES: Final = 8
PING: Final = "/floor.Tables/Ping"
STATE_BYTES: Final = 230
ANSWER_BYTES: Final = 570
EVENT_BYTES: Final = 270
COMMIT_SCRIPT: Final = """
redis.call('HSET', KEYS[1], 'game', ARGV[1])
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('LTRIM', KEYS[2], -16, -1)
redis.call('PUBLISH', KEYS[3], ARGV[2])
return 1
"""


def _summary(values: Sequence[float]) -> dict[str, float | int]:
    return {
        "samples": len(values),
        "p50": milliseconds(percentile(values, 0.5)),
        "p99": milliseconds(percentile(values, 0.99)),
        "max": milliseconds(max(values)),
    }


# -- the two servers ------------------------------------------------------------------------


async def _serve_referee(port: int) -> None:
    async def apply(
        requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        async for request in requests:
            await context.write(request + b"\0" * (ANSWER_BYTES - len(request)))

    server = grpc.aio.server(options=serving.server_options(Settings()))
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                "floor.Referee", {"ApplyStream": grpc.stream_stream_rpc_method_handler(apply)}
            )
        ]
    )
    server.add_insecure_port(f"{HOST}:{port}")
    await server.start()
    await server.wait_for_termination()


class RefereeStream:
    """One long-lived stream to the referee's stand-in: a task writes the requests in turn,
    a task reads the answers and hands each to the caller waiting for its call id."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        open_stream: grpc.aio.StreamStreamMultiCallable[bytes, bytes] = channel.stream_stream(APPLY)
        # Either stand-in may start first: the stream waits for the referee's.
        self._call = open_stream(wait_for_ready=True)
        self._outgoing: asyncio.Queue[bytes] = asyncio.Queue()
        self._waiting: dict[bytes, asyncio.Future[bytes]] = {}
        self._ids = itertools.count()
        self._tasks = (
            asyncio.ensure_future(self._write()),
            asyncio.ensure_future(self._read()),
        )

    async def ask(self, state: bytes) -> bytes:
        call_id = next(self._ids).to_bytes(CALL_ID_BYTES, "big")
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiting[call_id] = future
        self._outgoing.put_nowait(call_id + state)
        try:
            return await future
        finally:
            self._waiting.pop(call_id, None)

    async def _write(self) -> None:
        while True:
            await self._call.write(await self._outgoing.get())

    async def _read(self) -> None:
        while (answer := await self._call.read()) is not grpc.aio.EOF:
            assert isinstance(answer, bytes)
            future = self._waiting.pop(answer[:CALL_ID_BYTES], None)
            if future is not None and not future.done():
                future.set_result(answer[CALL_ID_BYTES:])

    def close(self) -> None:
        self._call.cancel()
        for task in self._tasks:
            task.cancel()


@dataclass
class _Subscriptions:
    """One pub/sub connection; each channel's messages to every local listener's queue."""

    redis: Redis
    listeners: dict[str, set[asyncio.Queue[bytes]]] = field(default_factory=dict)
    subscribed: asyncio.Event = field(default_factory=asyncio.Event)
    pubsub: PubSub | None = None

    async def read_forever(self) -> None:
        pubsub = self.redis.pubsub()
        await pubsub.subscribe("floor:idle")
        self.pubsub = pubsub
        self.subscribed.set()
        while True:
            message = await pubsub.get_message(timeout=1.0)
            if message is None or message["type"] != "message":
                continue
            for queue in self.listeners.get(message["channel"].decode(), ()):
                queue.put_nowait(message["data"])

    @contextlib.asynccontextmanager
    async def listen(self, channel: str) -> AsyncIterator[asyncio.Queue[bytes]]:
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        listeners = self.listeners.setdefault(channel, set())
        if not listeners:
            assert self.pubsub is not None, "subscribe only once read_forever has connected"
            await self.pubsub.subscribe(channel)
        listeners.add(queue)
        try:
            yield queue
        finally:
            listeners.discard(queue)


async def _serve_tables(port: int, referee_target: str, redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    commit = redis.register_script(COMMIT_SCRIPT)
    subscriptions = _Subscriptions(Redis.from_url(redis_url))
    reader = asyncio.ensure_future(subscriptions.read_forever())
    await subscriptions.subscribed.wait()
    channel = grpc.aio.insecure_channel(referee_target, options=serving.channel_options(Settings()))
    referee_streams = [RefereeStream(channel) for _ in range(APPLY_STREAMS)]
    turns = itertools.cycle(referee_streams)
    state = os.urandom(STATE_BYTES)

    async def play(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        table, _, event = request.partition(b"|")
        async with asyncio.timeout(CALL_TIMEOUT):
            answer = await next(turns).ask(state)
        name = table.decode()
        await commit(
            keys=[f"floor:{name}:game", f"floor:{name}:log", f"floor:{name}"],
            args=[answer[:STATE_BYTES], event],
        )
        return event

    async def watch(
        request: bytes, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[bytes]:
        async with subscriptions.listen(f"floor:{request.decode()}") as queue:
            yield b"subscribed"
            while True:
                yield await queue.get()

    async def ping(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        return request

    server = grpc.aio.server(options=serving.server_options(Settings()))
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                "floor.Tables",
                {
                    "Play": grpc.unary_unary_rpc_method_handler(play),
                    "Watch": grpc.unary_stream_rpc_method_handler(watch),
                    "Ping": grpc.unary_unary_rpc_method_handler(ping),
                },
            )
        ]
    )
    server.add_insecure_port(f"{HOST}:{port}")
    await server.start()
    try:
        await server.wait_for_termination()
    finally:
        reader.cancel()
        for stream in referee_streams:
            stream.close()


# -- the players and watchers ---------------------------------------------------------------


@dataclass
class _Table:
    name: str
    pending: dict[bytes, tuple[float, int]] = field(default_factory=dict)


async def _wait_for(call: Callable[[], Awaitable[object]], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            await call()
            return
        except grpc.aio.AioRpcError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


async def timed(
    call: Callable[[], Awaitable[object]], rounds: int, pause: float
) -> dict[str, float | int]:
    return _summary(await call_seconds(call, rounds, pause))


@dataclass
class _Phase:
    """One phase's tables and what its watchers saw within the measured window."""

    channels: list[grpc.aio.Channel]
    tables: list[_Table]
    mean_interval: float
    window: tuple[float, float] = (float("inf"), float("inf"))
    round_trips: list[float] = field(default_factory=list)
    moves: int = 0

    def channel_for(self, index: int) -> grpc.aio.Channel:
        return self.channels[index % len(self.channels)]

    def measured(self, started: float) -> bool:
        return self.window[0] <= started < self.window[1]

    async def watch(self, table: _Table, stream: Any) -> None:
        """Time each event once both of the table's watchers have it."""
        while (message := await stream.read()) is not grpc.aio.EOF:
            arrived = time.perf_counter()
            sent = table.pending.get(message)
            if sent is None:
                continue
            started, seen = sent
            if seen + 1 < 2:
                table.pending[message] = (started, seen + 1)
                continue
            del table.pending[message]
            if self.measured(started):
                self.round_trips.append(arrived - started)

    async def open_watchers(self) -> tuple[list[Any], list[asyncio.Future[None]]]:
        """Two subscribed watch streams a table, and the tasks reading them."""
        streams: list[Any] = []
        watchers: list[asyncio.Future[None]] = []
        for index, table in enumerate(self.tables):
            for watcher in range(2):
                watch_call: grpc.aio.UnaryStreamMultiCallable[bytes, bytes]
                watch_call = self.channel_for(2 * index + watcher).unary_stream(WATCH)
                stream = watch_call(table.name.encode())
                first = await stream.read()
                assert first == b"subscribed", first
                streams.append(stream)
                watchers.append(asyncio.ensure_future(self.watch(table, stream)))
        return streams, watchers

    async def drive(self, index: int, table: _Table) -> None:
        """Play the table's moves until the window ends."""
        play: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]
        play = self.channel_for(index + 7).unary_unary(PLAY)
        move = 0
        while time.perf_counter() < self.window[1]:
            if self.mean_interval > 0:
                await asyncio.sleep(random.expovariate(1 / self.mean_interval))
            move += 1
            event = f"{table.name}:{move}:".encode().ljust(EVENT_BYTES, b".")
            started = time.perf_counter()
            table.pending[event] = (started, 0)
            await play(table.name.encode() + b"|" + event, timeout=CALL_TIMEOUT)
            if self.measured(started):
                self.moves += 1


async def _cpu_over(
    window: tuple[float, float], cpu: Callable[[], dict[str, float]]
) -> dict[str, float]:
    """The CPU seconds each server spent within ``window`` (perf_counter times)."""
    await asyncio.sleep(max(0.0, window[0] - time.perf_counter()))
    before = cpu()
    await asyncio.sleep(max(0.0, window[1] - time.perf_counter()))
    return {name: seconds - before[name] for name, seconds in cpu().items()}


async def play_phase(
    channels: list[grpc.aio.Channel],
    count: int,
    *,
    mean_interval: float,
    warmup: float,
    measure: float,
    cpu: Callable[[], dict[str, float]],
) -> dict[str, Any]:
    """Tables moving once every ``mean_interval`` seconds on average, or back to back when it
    is 0 (the closed loop); the round trips and the servers' CPU time per move."""
    tables = [_Table(f"t{index}-{os.urandom(4).hex()}") for index in range(count)]
    phase = _Phase(channels, tables, mean_interval)
    streams, watchers = await phase.open_watchers()
    start = time.perf_counter()
    phase.window = (start + warmup, start + warmup + measure)
    cpu_reading = asyncio.ensure_future(_cpu_over(phase.window, cpu))
    await asyncio.gather(*(phase.drive(index, table) for index, table in enumerate(tables)))
    spent = await cpu_reading
    await asyncio.sleep(0.5)
    for stream in streams:
        stream.cancel()
    await asyncio.gather(*watchers, return_exceptions=True)
    moves = max(phase.moves, 1)
    return {
        "tables": count,
        "watchers_per_table": 2,
        "mean_interval_seconds": mean_interval,
        "measured_seconds": measure,
        "moves": phase.moves,
        "moves_per_second": round(phase.moves / measure, 1),
        "round_trip_ms": _summary(phase.round_trips),
        "server_cpu_ms_per_move": {
            **{name: milliseconds(seconds / moves) for name, seconds in spent.items()},
            "total": milliseconds(sum(spent.values()) / moves),
        },
    }


@dataclass
class FloorBackend(LoopbackServers):
    """Redis and the two stand-ins, each its own process on loopback (the stand-ins serve no
    health check: :meth:`serving` waits for the tables stand-in's ``Ping``)."""

    referee_target: str = ""
    tables_target: str = ""

    async def start(self) -> None:
        await super().start()
        assert self.redis is not None
        referee_port, tables_port = free_port(), free_port()
        self.referee_target = f"{HOST}:{referee_port}"
        environment = dict(os.environ)
        self.launch(
            "referee", [sys.executable, "-m", __name__, "referee", str(referee_port)], environment
        )
        tables = ["tables", str(tables_port), self.referee_target, self.redis.url]
        self.launch("tables", [sys.executable, "-m", __name__, *tables], environment)
        self.tables_target = f"{HOST}:{tables_port}"

    @contextlib.asynccontextmanager
    async def serving(self, channel_count: int = 16) -> AsyncIterator[list[grpc.aio.Channel]]:
        """The three servers started, and ``channel_count`` channels to the tables stand-in
        once it answers; everything stopped on exit."""
        async with self.running():
            options = [("grpc.use_local_subchannel_pool", 1)]
            channels = [
                grpc.aio.insecure_channel(self.tables_target, options=options)
                for _ in range(channel_count)
            ]
            try:
                ping: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]
                ping = channels[0].unary_unary(PING)
                await _wait_for(lambda: ping(b"x", timeout=1))
                yield channels
            finally:
                for channel in channels:
                    await channel.close()


def main(argv: Sequence[str]) -> None:
    """Serve one of the two stand-ins: ``referee PORT`` or ``tables PORT REFEREE REDIS_URL``."""
    role, *role_args = argv
    if role == "referee":
        serving.run(lambda: _serve_referee(int(role_args[0])))
    elif role == "tables":
        port, referee_target, redis_url = role_args
        serving.run(lambda: _serve_tables(int(port), referee_target, redis_url))
    else:
        raise SystemExit(f"no such stand-in: {role} (referee or tables)")


if __name__ == "__main__":
    main(sys.argv[1:])
