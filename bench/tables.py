"""Tables service speed: bots play real games through the public API, two watchers per table.

One Redis, one referee (``python -m goti.referee``) and one tables process
(``python -m goti.tables``) run as subprocesses on loopback; the bots and the watchers run in
this process, on raw generated stubs (the cheapest client there is, so that the client's CPU
stays out of the servers' way on a small machine).  Each table is two guest players; its
driver plays the side to move, a random legal move taken from the previous move's event.

- Open loop, like real players: N tables (10, 100, 1,000 by default), each moving once every
  ``--mean-interval`` seconds on average (exponential think times).  The round trip is from
  the Play call to the move's event at both watchers: p50/p99.
- Closed loop (saturation): ``--closed-tables`` tables moving as fast as the service answers:
  moves per second, and the CPU time each server process spends per move, read from its own
  counters in ``/proc/<pid>/stat`` (tables, referee and Redis; the watchers' fan-out
  included).
- Redis memory per live table: ``INFO memory`` before and after the largest open-loop run
  set up its tables (games started, moves played, watchers attached).

- Where an unloaded move's time goes: Redis, a bare gRPC call to the tables service and a
  referee Apply timed back to back and after 0.3 s of quiet, then moves one at a time.
- The machine's speed at the start and the end (English perft leaves per CPU-second): a
  shared machine's speed drifts, and only runs at about the same speed compare.

Run: ``python bench/tables.py`` (about 5 minutes; ``--quick`` for a one-minute smoke run).
Figures go to ``bench/results/tables.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import random
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import grpc
from redis.asyncio import Redis

from goti import serving
from goti.api.error_status import ErrorStatus
from goti.api.v1 import (
    game_pb2,
    players_pb2,
    players_pb2_grpc,
    referee_pb2,
    referee_pb2_grpc,
    tables_pb2,
    tables_pb2_grpc,
)
from goti.benchmarking import (
    LoopbackServers,
    finish_description,
    milliseconds,
    percentile,
    process_cpu_seconds,
    redis_command_counts,
    run_record,
    service_environment,
    write_figures,
)
from goti.healthcheck import HealthCheckRequest, health_check_call
from goti.redis_server import free_port

RESULTS: Final = Path(__file__).parent / "results" / "tables.json"
HOST: Final = "127.0.0.1"
CALL_TIMEOUT: Final = 10.0
SLOW_SECONDS: Final = 0.05
SETUP_CONCURRENCY: Final = 32
GOALS: Final = {
    "open_loop_10_tables_p50_ms": 3.0,
    "open_loop_10_tables_p99_ms": 10.0,
    "open_loop_1000_tables_p99_ms": 50.0,
    "server_cpu_ms_per_move": 2.5,
    "redis_bytes_per_live_table": 4096,
}
CHANNEL_OPTIONS: Final = [
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    # Separate channels to one target would otherwise share one connection.
    ("grpc.use_local_subchannel_pool", 1),
]


# -- the backend ----------------------------------------------------------------------------


@dataclass
class Backend(LoopbackServers):
    """Redis, the referee and the tables service, each its own process on loopback."""

    profile_dir: Path | None = None
    """When set, the tables and referee processes run under cProfile and leave
    ``<name>.prof`` there (slower: for finding where the time goes, not for figures)."""
    tables_target: str = ""
    referee_target: str = ""

    def pids(self) -> dict[str, int]:
        assert self.redis is not None and self.redis.pid is not None
        return {
            "tables": self.services["tables"].pid,
            "referee": self.services["referee"].pid,
            "redis": self.redis.pid,
        }

    def cpu(self) -> dict[str, float]:
        return {name: process_cpu_seconds(pid) for name, pid in self.pids().items()}

    async def start(self) -> None:
        await super().start()
        assert self.redis is not None
        referee_port, tables_port = free_port(), free_port()
        environment = {
            **service_environment(self.redis.url, referee_port),
            "GOTI_TABLES_PORT": str(tables_port),
            "GOTI_TABLES_METRICS_PORT": "0",
            "GOTI_REFEREE_METRICS_PORT": "0",
            "GOTI_TABLES_PER_MINUTE": "0",
            "GOTI_JOINS_PER_MINUTE": "0",
        }
        for name, port in (("referee", referee_port), ("tables", tables_port)):
            profile = (
                ["-m", "cProfile", "-o", str(self.profile_dir / f"{name}.prof")]
                if self.profile_dir is not None
                else []
            )
            command = [sys.executable, *profile, "-m", f"goti.{name}"]
            await self.spawn(name, command, environment, f"{HOST}:{port}")
        self.tables_target = f"{HOST}:{tables_port}"
        self.referee_target = f"{HOST}:{referee_port}"

    async def key_memory(self) -> dict[str, Any]:
        """The bytes Redis holds for Goti's keys by kind (``MEMORY USAGE`` of every key), and
        how many tables and players there are."""
        assert self.redis is not None
        client = Redis.from_url(self.redis.url)
        totals: dict[str, int] = {}
        tables: set[bytes] = set()
        players: set[bytes] = set()
        try:
            batch: list[bytes] = []

            async def measure() -> None:
                pipeline = client.pipeline(transaction=False)
                for key in batch:
                    pipeline.memory_usage(key, samples=0)
                for key, size in zip(batch, await pipeline.execute(), strict=True):
                    kind = _key_kind(key, tables, players)
                    totals[kind] = totals.get(kind, 0) + int(size or 0)
                batch.clear()

            async for key in client.scan_iter(match="goti:*", count=1000):
                batch.append(key)
                if len(batch) >= 1000:
                    await measure()
            await measure()
        finally:
            await client.aclose()
        return {"bytes": totals, "tables": len(tables), "players": len(players)}

    async def redis_command_counts(self) -> dict[str, int]:
        assert self.redis is not None
        client = Redis.from_url(self.redis.url)
        try:
            return await redis_command_counts(client)
        finally:
            await client.aclose()

    async def redis_used_memory(self) -> int:
        assert self.redis is not None
        client = Redis.from_url(self.redis.url)
        try:
            info = await client.info("memory")
            return int(info["used_memory"])
        finally:
            await client.aclose()


def _key_kind(key: bytes, tables: set[bytes], players: set[bytes]) -> str:
    """``table``, ``player`` or ``shared`` (the lobby, the timers, table codes), noting the
    table or player a key belongs to by its hash tag."""
    if key.startswith(b"goti:{t:"):
        tables.add(key.split(b"}", 1)[0])
        return "table"
    if key.startswith(b"goti:{p:"):
        players.add(key.split(b"}", 1)[0])
        return "player"
    if key.startswith(b"goti:code:"):
        return "table"
    return "shared"


# -- bots -----------------------------------------------------------------------------------


def _bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@dataclass
class Game:
    """One table being played: who holds which colour, where it stands, what may be played."""

    table_id: str
    seq: int
    turn: int
    """The side to move (a game_pb2.Color value)."""
    legal: list[list[int]]
    """The legal moves of the side to move, as paths."""
    players: dict[int, tuple[tuple[str, str], ...]]
    """Colour -> the metadata of the player holding it."""
    over: bool = False


@dataclass
class Pending:
    started: float
    seen: int = 0


@dataclass
class Recorder:
    """Round trips of the moves played inside the measurement window."""

    watchers: int
    window_start: float = float("inf")
    window_end: float = float("inf")
    pending: dict[tuple[str, int], Pending] = field(default_factory=dict)
    round_trips: list[float] = field(default_factory=list)
    slow_starts: list[float] = field(default_factory=list)
    """When the moves slower than SLOW_SECONDS started: do they bunch up?"""
    play_calls: list[float] = field(default_factory=list)
    moves: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    events_seen: int = 0

    def in_window(self, moment: float) -> bool:
        return self.window_start <= moment < self.window_end

    def expect(self, table_id: str, seq: int, started: float) -> None:
        self.pending[(table_id, seq)] = Pending(started)

    def played(self, started: float, finished: float) -> None:
        if self.in_window(started):
            self.moves += 1
            self.play_calls.append(finished - started)

    def event(self, table_id: str, seq: int, moment: float) -> None:
        self.events_seen += 1
        pending = self.pending.get((table_id, seq))
        if pending is None:
            return
        pending.seen += 1
        if pending.seen >= self.watchers:
            del self.pending[(table_id, seq)]
            if self.in_window(pending.started):
                self.round_trips.append(moment - pending.started)
                if moment - pending.started > SLOW_SECONDS:
                    self.slow_starts.append(pending.started)

    def failed(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1


class Bots:
    """Players, tables and watchers over a pool of channels."""

    def __init__(self, target: str, channels: int) -> None:
        self._channels = [
            grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS) for _ in range(channels)
        ]
        self._tables = [tables_pb2_grpc.TablesServiceStub(c) for c in self._channels]
        self._players = [players_pb2_grpc.PlayersServiceStub(c) for c in self._channels]
        self._next = 0

    def tables(self) -> tables_pb2_grpc.TablesServiceAsyncStub:
        self._next = (self._next + 1) % len(self._tables)
        return self._tables[self._next]

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close()

    async def guest(self) -> tuple[tuple[str, str], ...]:
        stub = self._players[random.randrange(len(self._players))]
        response = await stub.CreateGuest(
            players_pb2.CreateGuestRequest(display_name="Bot"), timeout=CALL_TIMEOUT
        )
        return _bearer(response.player_token)

    async def new_game(
        self, first: tuple[tuple[str, str], ...], second: tuple[tuple[str, str], ...]
    ) -> Game:
        created = await self.tables().CreateTable(
            tables_pb2.CreateTableRequest(
                request_id=os.urandom(8).hex(),
                variant=game_pb2.VARIANT_ENGLISH,
                starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1,
                opponent=tables_pb2.OPPONENT_HUMAN,
                visibility=tables_pb2.VISIBILITY_PRIVATE,
            ),
            metadata=first,
            timeout=CALL_TIMEOUT,
        )
        joined = await self.tables().JoinTable(
            tables_pb2.JoinTableRequest(request_id=os.urandom(8).hex(), code=created.table.code),
            metadata=second,
            timeout=CALL_TIMEOUT,
        )
        table = joined.table
        first_color = (
            game_pb2.COLOR_WHITE
            if created.your_role == tables_pb2.ROLE_WHITE
            else game_pb2.COLOR_BLACK
        )
        second_color = (
            game_pb2.COLOR_WHITE if first_color == game_pb2.COLOR_BLACK else game_pb2.COLOR_BLACK
        )
        return Game(
            table_id=table.table_id,
            seq=table.seq,
            turn=table.game.turn.side,
            legal=[list(move.path) for move in table.game.turn.legal_moves],
            players={first_color: first, second_color: second},
        )

    async def play(self, game: Game, recorder: Recorder) -> None:
        """Play a random legal move for the side to move; follow the game from the reply."""
        path = random.choice(game.legal)
        expected = game.seq
        started = time.perf_counter()
        recorder.expect(game.table_id, expected + 1, started)
        try:
            response = await self.tables().Play(
                tables_pb2.PlayRequest(
                    table_id=game.table_id,
                    request_id=os.urandom(8).hex(),
                    expected_seq=expected,
                    path=game_pb2.MovePath(squares=path),
                ),
                metadata=game.players[game.turn],
                timeout=CALL_TIMEOUT,
            )
        except grpc.aio.AioRpcError as error:
            recorder.pending.pop((game.table_id, expected + 1), None)
            status = ErrorStatus.from_rpc_error(error)
            reason = f" {status.reason}: {status.message}" if status else f": {error.details()}"
            recorder.failed(f"{error.code().name}{reason}")
            game.over = True  # start a fresh game rather than guess where this one stands
            return
        recorder.played(started, time.perf_counter())
        for event in response.events:
            game.seq = max(game.seq, event.seq)
            if event.HasField("move_played"):
                played = event.move_played
                if played.HasField("next"):
                    game.turn = played.next.side
                    game.legal = [list(move.path) for move in played.next.legal_moves]
                else:
                    game.over = True
            elif event.HasField("game_over"):
                game.over = True

    async def watch(self, table_id: str, after_seq: int, recorder: Recorder) -> None:
        call = self.tables().WatchTable(
            tables_pb2.WatchTableRequest(table_id=table_id, after_seq=after_seq)
        )
        try:
            async for response in call:
                if response.HasField("event"):
                    recorder.event(table_id, response.event.seq, time.perf_counter())
                    if response.event.HasField("game_over"):
                        return
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                recorder.failed(f"watch {error.code().name}")
        finally:
            call.cancel()


async def _bounded(coroutines: Sequence[Any], limit: int) -> list[Any]:
    gate = asyncio.Semaphore(limit)

    async def run(coroutine: Any) -> Any:
        async with gate:
            return await coroutine

    return list(await asyncio.gather(*(run(c) for c in coroutines)))


class Table:
    """A table's driver: a game between two bot players, watched by ``watchers`` bots; when a
    game ends the same players start another."""

    def __init__(self, bots: Bots, recorder: Recorder, watchers: int) -> None:
        self._bots = bots
        self._recorder = recorder
        self._watchers = watchers
        self._watch_tasks: list[asyncio.Task[None]] = []
        self.game: Game | None = None
        self.players: tuple[tuple[tuple[str, str], ...], ...] = ()

    async def set_up(self) -> None:
        self.players = (await self._bots.guest(), await self._bots.guest())
        await self._new_game()

    async def next_game(self) -> None:
        """Start a new game between the same players, watched afresh."""
        await self._new_game()

    async def _new_game(self) -> None:
        # The watchers of a finished game end by themselves after its GameOver.
        self._watch_tasks = [task for task in self._watch_tasks if not task.done()]
        self.game = await self._bots.new_game(*self.players)
        game = self.game
        self._watch_tasks += [
            asyncio.create_task(self._bots.watch(game.table_id, game.seq, self._recorder))
            for _ in range(self._watchers)
        ]

    def _stop_watching(self) -> None:
        for task in self._watch_tasks:
            task.cancel()
        self._watch_tasks = []

    async def drive(self, until: float, mean_interval: float) -> None:
        """Move until ``until`` (perf_counter): after an exponential think time with this
        mean, or at once when it is 0."""
        while time.perf_counter() < until:
            if mean_interval > 0:
                await asyncio.sleep(min(random.expovariate(1 / mean_interval), 10 * mean_interval))
                if time.perf_counter() >= until:
                    break
            assert self.game is not None
            if self.game.over:
                await self._new_game()
                continue
            await self._bots.play(self.game, self._recorder)

    async def close(self) -> None:
        tasks = self._watch_tasks
        self._stop_watching()
        await asyncio.gather(*tasks, return_exceptions=True)


# -- measurements ---------------------------------------------------------------------------


@contextlib.contextmanager
def _bots_uncollected() -> Iterator[None]:
    """No garbage collection in the bots while they are timed: one process holds every
    player's and watcher's calls, a heap no real client has, and a collection of it pauses
    every bot at once (40-90 ms at a thousand tables), which would show up as slow moves of
    the service.  What the block leaves is collected after it."""
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.unfreeze()


@contextlib.asynccontextmanager
async def _tables(
    bots: Bots, count: int, watchers: int
) -> AsyncIterator[tuple[list[Table], Recorder]]:
    recorder = Recorder(watchers=watchers)
    tables = [Table(bots, recorder, watchers) for _ in range(count)]
    try:
        await _bounded([table.set_up() for table in tables], SETUP_CONCURRENCY)
        yield tables, recorder
    finally:
        await asyncio.gather(*(table.close() for table in tables))


def _by_second(moments: Sequence[float], origin: float) -> dict[int, int]:
    """How many of ``moments`` fell in each second after ``origin`` (seconds with none left
    out)."""
    counts: dict[int, int] = {}
    for moment in moments:
        second = int(moment - origin)
        counts[second] = counts.get(second, 0) + 1
    return dict(sorted(counts.items()))


async def _cpu_rates(backend: Backend, seconds: float) -> dict[str, float]:
    """Each server process's CPU seconds per second over a quiet spell."""
    before, started = backend.cpu(), time.perf_counter()
    await asyncio.sleep(seconds)
    after, wall = backend.cpu(), time.perf_counter() - started
    return {name: (after[name] - before[name]) / wall for name in before}


async def run_phase(
    backend: Backend,
    tables: list[Table],
    recorder: Recorder,
    *,
    mean_interval: float,
    warmup: float,
    measure: float,
    idle: float,
) -> dict[str, Any]:
    """Drive every table for warmup + measure seconds; figures over the measure window.

    Before the first move, the servers' CPU is read over ``idle`` quiet seconds: what the
    live tables cost with nobody moving (heartbeats, timer polls), so that the cost of the
    moves themselves can be told apart at low move rates.
    """
    # Let the watch streams open before anything is timed.
    await asyncio.sleep(min(2.0, 0.2 + len(tables) / 1000))
    with _bots_uncollected():
        idle_rates = await _cpu_rates(backend, idle)
        start = time.perf_counter()
        recorder.window_start = start + warmup
        recorder.window_end = recorder.window_start + measure
        drivers = [
            asyncio.create_task(table.drive(recorder.window_end, mean_interval)) for table in tables
        ]
        await asyncio.sleep(max(0.0, recorder.window_start - time.perf_counter()))
        commands_before = await backend.redis_command_counts()
        cpu_before, client_before = backend.cpu(), time.process_time()
        wall_before = time.perf_counter()
        await asyncio.sleep(max(0.0, recorder.window_end - time.perf_counter()))
        cpu_after, client_after = backend.cpu(), time.process_time()
        wall_after = time.perf_counter()
        commands_after = await backend.redis_command_counts()
        await asyncio.wait_for(
            asyncio.gather(*drivers), timeout=CALL_TIMEOUT + 10 * max(mean_interval, 1)
        )
        # The last moves' events are still on their way to the watchers.
        await asyncio.sleep(1.0)
    wall = wall_after - wall_before
    moves = recorder.moves
    spent = {name: cpu_after[name] - cpu_before[name] for name in cpu_before}

    def per_move(cpu: dict[str, float]) -> dict[str, float | None]:
        figures: dict[str, float | None] = {
            name: milliseconds(value / moves) if moves else None for name, value in cpu.items()
        }
        figures["total"] = milliseconds(sum(cpu.values()) / moves) if moves else None
        return figures

    return {
        "tables": len(tables),
        "watchers_per_table": recorder.watchers,
        "mean_interval_seconds": mean_interval,
        "measured_seconds": round(wall, 2),
        "moves": moves,
        "moves_per_second": round(moves / wall, 1),
        "round_trip_ms": {
            "samples": len(recorder.round_trips),
            "p50": milliseconds(percentile(recorder.round_trips, 0.50)),
            "p90": milliseconds(percentile(recorder.round_trips, 0.90)),
            "p99": milliseconds(percentile(recorder.round_trips, 0.99)),
            "max": milliseconds(max(recorder.round_trips, default=float("nan"))),
        },
        "play_call_ms": {
            "p50": milliseconds(percentile(recorder.play_calls, 0.50)),
            "p99": milliseconds(percentile(recorder.play_calls, 0.99)),
        },
        "moves_over_50_ms_by_second": _by_second(recorder.slow_starts, recorder.window_start),
        "server_cpu_ms_per_move": per_move(spent),
        "server_cpu_ms_per_move_above_idle": per_move(
            {name: max(0.0, spent[name] - idle_rates[name] * wall) for name in spent}
        ),
        "server_cpu_utilisation": {name: round(value / wall, 3) for name, value in spent.items()},
        "server_cpu_utilisation_idle": {
            name: round(value, 3) for name, value in idle_rates.items()
        },
        "client_cpu_ms_per_move": milliseconds((client_after - client_before) / moves)
        if moves
        else None,
        "redis_commands_per_move": {
            name: round((calls - commands_before.get(name, 0)) / moves, 2)
            for name, calls in sorted(commands_after.items())
            if moves and calls - commands_before.get(name, 0) > 0
        },
        "moves_without_both_events": len(
            [p for p in recorder.pending.values() if recorder.in_window(p.started)]
        ),
        "errors": dict(recorder.errors),
    }


async def _timed(
    call: Callable[[], Awaitable[object]], rounds: int, pause: float = 0.0
) -> dict[str, float]:
    times = []
    for _ in range(rounds):
        if pause:
            await asyncio.sleep(pause)
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return {
        "p50": milliseconds(percentile(times, 0.5)),
        "p99": milliseconds(percentile(times, 0.99)),
    }


async def anatomy(
    backend: Backend, bots: Bots, *, rounds: int, watchers: int, idle_pause: float
) -> dict[str, Any]:
    """Where an unloaded move's time goes: each hop of its path timed on its own, one call
    at a time, back to back and after ``idle_pause`` seconds of quiet (as in the open loop,
    where every process sleeps between moves), then whole moves one at a time on one
    table."""
    assert backend.redis is not None
    figures: dict[str, Any] = {"idle_pause_seconds": idle_pause}
    idle_rounds = max(1, min(rounds, round(6 / idle_pause))) if idle_pause else 0
    redis = Redis.from_url(backend.redis.url)
    try:
        figures["redis_ping_ms"] = await _timed(redis.ping, rounds)
        if idle_rounds:
            figures["redis_ping_after_idle_ms"] = await _timed(redis.ping, idle_rounds, idle_pause)
    finally:
        await redis.aclose()
    async with grpc.aio.insecure_channel(backend.tables_target) as channel:
        health_check = health_check_call(channel)
        empty = HealthCheckRequest()
        figures["tables_health_check_ms"] = await _timed(
            lambda: health_check(empty, timeout=CALL_TIMEOUT), rounds
        )
        if idle_rounds:
            figures["tables_health_check_after_idle_ms"] = await _timed(
                lambda: health_check(empty, timeout=CALL_TIMEOUT), idle_rounds, idle_pause
            )
    async with grpc.aio.insecure_channel(backend.referee_target) as channel:
        referee = referee_pb2_grpc.RefereeServiceStub(channel)
        started = await referee.StartGame(
            referee_pb2.StartGameRequest(variant=game_pb2.VARIANT_ENGLISH), timeout=CALL_TIMEOUT
        )
        apply = referee_pb2.ApplyRequest(state=started.state, move_notation="11-15")
        figures["referee_apply_ms"] = await _timed(
            lambda: referee.Apply(apply, timeout=CALL_TIMEOUT), rounds
        )
        if idle_rounds:
            figures["referee_apply_after_idle_ms"] = await _timed(
                lambda: referee.Apply(apply, timeout=CALL_TIMEOUT), idle_rounds, idle_pause
            )
    async with _tables(bots, 1, watchers) as (tables, recorder):
        table = tables[0]
        assert table.game is not None
        request = tables_pb2.GetTableRequest(table_id=table.game.table_id)
        stub = bots.tables()
        figures["tables_get_table_ms"] = await _timed(
            lambda: stub.GetTable(request, timeout=CALL_TIMEOUT), rounds
        )
        recorder.window_start, recorder.window_end = 0.0, float("inf")
        for _ in range(rounds):
            assert table.game is not None
            if table.game.over:
                await table.next_game()
                await asyncio.sleep(0.2)
            await bots.play(table.game, recorder)
            # Each move alone: its events reach the watchers before the next one starts.
            await asyncio.sleep(0.01)
        figures["tables_play_ms"] = {
            "p50": milliseconds(percentile(recorder.play_calls, 0.5)),
            "p99": milliseconds(percentile(recorder.play_calls, 0.99)),
        }
        figures["move_round_trip_ms"] = {
            "p50": milliseconds(percentile(recorder.round_trips, 0.5)),
            "p99": milliseconds(percentile(recorder.round_trips, 0.99)),
        }
    return figures


def _describe(label: str, figures: dict[str, Any]) -> str:
    rt = figures["round_trip_ms"]
    cpu = figures["server_cpu_ms_per_move"]
    return (
        f"{label}: {figures['tables']} tables, {figures['moves']} moves "
        f"({figures['moves_per_second']}/s) - round trip p50 {rt['p50']} ms, p99 {rt['p99']} ms, "
        f"max {rt['max']} ms; server CPU/move {cpu['total']} ms "
        f"(tables {cpu['tables']}, referee {cpu['referee']}, redis {cpu['redis']}); "
        f"client {figures['client_cpu_ms_per_move']} ms"
        + (f"; errors {figures['errors']}" if figures["errors"] else "")
        + (
            f"; {figures['moves_without_both_events']} moves not seen by both watchers"
            if figures["moves_without_both_events"]
            else ""
        )
    )


async def run(args: argparse.Namespace) -> dict[str, Any]:
    deadline = time.monotonic() + args.max_minutes * 60
    results: dict[str, Any] = {
        **run_record("tables service: bots through the public API, two watchers per table"),
        "goals": GOALS,
        "open_loop": [],
    }
    with tempfile.TemporaryDirectory(prefix="goti-bench-") as folder:
        backend = Backend(
            Path(folder),
            persistent_redis=not args.no_redis_persistence,
            profile_dir=args.profile_dir,
        )
        async with backend.running():
            backend.describe_redis(results["machine"])
            bots = Bots(backend.tables_target, args.channels)
            try:
                results["unloaded_move_anatomy"] = await anatomy(
                    backend,
                    bots,
                    rounds=args.anatomy_rounds,
                    watchers=args.watchers,
                    idle_pause=args.anatomy_idle_pause,
                )
                print(f"one move at a time: {results['unloaded_move_anatomy']}", flush=True)
                largest = max(args.tables, default=0)
                for count in args.tables:
                    if time.monotonic() > deadline:
                        print(f"time budget spent: skipping {count} tables")
                        continue
                    before = await backend.redis_used_memory()
                    async with _tables(bots, count, args.watchers) as (tables, recorder):
                        after_setup = await backend.redis_used_memory()
                        figures = await run_phase(
                            backend,
                            tables,
                            recorder,
                            mean_interval=args.mean_interval,
                            warmup=args.warmup,
                            measure=args.measure,
                            idle=args.idle,
                        )
                        if count == largest:
                            after_play = await backend.redis_used_memory()
                            keys = await backend.key_memory()
                            table_bytes = keys["bytes"].get("table", 0)
                            player_bytes = keys["bytes"].get("player", 0)
                            results["redis_memory"] = {
                                "live_tables": count,
                                "tables_in_redis": keys["tables"],
                                "players_in_redis": keys["players"],
                                "events_per_table": round(
                                    sum(t.game.seq for t in tables if t.game) / count, 1
                                ),
                                "key_bytes_per_table": round(table_bytes / keys["tables"]),
                                "key_bytes_per_player": round(player_bytes / keys["players"]),
                                "key_bytes_shared": keys["bytes"].get("shared", 0),
                                "used_memory_per_live_table_after_setup": round(
                                    (after_setup - before) / count
                                ),
                                "used_memory_per_live_table_after_play": round(
                                    (after_play - before) / count
                                ),
                                "note": "key bytes: MEMORY USAGE of every key, a table's "
                                "state, log, requests and code; used_memory: INFO memory "
                                "before and after the run set up its tables, two guest "
                                "players each included, and with Redis's own buffers",
                            }
                    results["open_loop"].append(figures)
                    print(_describe("open loop", figures), flush=True)
                if time.monotonic() < deadline:
                    async with _tables(bots, args.closed_tables, args.watchers) as (
                        tables,
                        recorder,
                    ):
                        figures = await run_phase(
                            backend,
                            tables,
                            recorder,
                            mean_interval=0,
                            warmup=args.warmup,
                            measure=args.closed_seconds,
                            idle=args.idle,
                        )
                    results["closed_loop"] = figures
                    print(_describe("closed loop", figures), flush=True)
                if "redis_memory" in results:
                    memory = results["redis_memory"]
                    print(
                        f"redis memory: {memory['key_bytes_per_table']} bytes of keys per table "
                        f"over {memory['tables_in_redis']} tables "
                        f"({memory['events_per_table']} events each on average), "
                        f"{memory['key_bytes_per_player']} per player; used_memory grew "
                        f"{memory['used_memory_per_live_table_after_play']} bytes per live "
                        "table, its two players included"
                    )
            finally:
                await bots.close()
    print(finish_description(results["machine"]))
    return results


def _counts(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tables",
        type=_counts,
        default=[10, 100, 1000],
        help="open-loop table counts (10,100,1000)",
    )
    parser.add_argument(
        "--mean-interval",
        type=float,
        default=3.0,
        help="mean seconds between a table's moves in the open loop (3)",
    )
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring (3)")
    parser.add_argument(
        "--measure", type=float, default=30.0, help="seconds measured per open-loop run (30)"
    )
    parser.add_argument(
        "--idle", type=float, default=3.0, help="quiet seconds read before each run's moves (3)"
    )
    parser.add_argument(
        "--closed-tables", type=int, default=64, help="tables in the closed loop (64)"
    )
    parser.add_argument(
        "--closed-seconds",
        type=float,
        default=20.0,
        help="seconds measured in the closed loop (20)",
    )
    parser.add_argument(
        "--anatomy-rounds", type=int, default=200, help="calls timed per hop, unloaded (200)"
    )
    parser.add_argument(
        "--anatomy-idle-pause",
        type=float,
        default=0.3,
        help="seconds of quiet before each call timed after idling (0.3; 0: none)",
    )
    parser.add_argument("--watchers", type=int, default=2, help="watchers per table (2)")
    parser.add_argument(
        "--channels", type=int, default=16, help="client connections the bots spread over (16)"
    )
    parser.add_argument(
        "--no-redis-persistence", action="store_true", help="run Redis without its append-only log"
    )
    parser.add_argument(
        "--max-minutes",
        type=float,
        default=10.0,
        help="stop starting new runs after this long (10)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 10 and 100 tables, 5 s each"
    )
    parser.add_argument(
        "--profile-dir",
        type=Path,
        help="run the tables and referee services under cProfile, profiles written here",
    )
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"figures file ({RESULTS})")
    args = parser.parse_args(argv)
    if args.quick:
        args.tables, args.measure, args.closed_seconds = [10, 100], 5.0, 5.0
        args.warmup, args.idle = 1.0, 1.0
    # uvloop where it is installed: the bots use less CPU with it.
    write_figures(serving.run(lambda: run(args)), args.output)


if __name__ == "__main__":
    main()
