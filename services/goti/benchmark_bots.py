"""The load Goti's table benchmarks put on the tables service: bot players and watchers
through the public API, and the measured spell of their moves.

Each table is two guest players; its driver plays the side to move, a random legal move taken
from the previous move's event, and ``watchers`` bots watch it.  The bots speak the raw
generated stubs (the cheapest client there is, so that the client's CPU stays out of the
servers' way on a small machine), over channels spread over one or more tables replicas.

:func:`run_phase` drives the tables open loop (each moving after exponential think times, like
real players) or closed loop (as fast as the service answers), and reads the round trip from
the Play call to the move's event at every watcher, the moves per second, and each server
process's CPU time per move, from its own counters.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import random
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

import grpc
from redis.asyncio import Redis

from goti.api.error_status import ErrorStatus
from goti.api.v1 import game_pb2, players_pb2, players_pb2_grpc, tables_pb2, tables_pb2_grpc
from goti.benchmarking import (
    LoopbackServers,
    milliseconds,
    percentile,
    redis_command_counts,
    service_environment,
)
from goti.redis_server import free_port

_HOST: Final = "127.0.0.1"
CALL_TIMEOUT: Final = 10.0
SLOW_SECONDS: Final = 0.05
SETUP_CONCURRENCY: Final = 32
NEW_GAME_RETRY_SECONDS: Final = 1.0
CHANNEL_OPTIONS: Final = [
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    # Separate channels to one target would otherwise share one connection.
    ("grpc.use_local_subchannel_pool", 1),
]


class MeasuredServers(Protocol):
    """Goti's server processes as a benchmark reads them."""

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far, by the name of a process or a group of them."""

    async def redis_command_counts(self) -> dict[str, int]:
        """How often Redis has run each command, over every primary."""


def crowd_environment(redis_url: str, referee_port: int) -> dict[str, str]:
    """A service's environment beside one referee, with the limits that a crowd of bots from
    one address would trip turned off and no metrics ports."""
    return {
        **service_environment(redis_url, referee_port),
        "GOTI_TABLES_METRICS_PORT": "0",
        "GOTI_REFEREE_METRICS_PORT": "0",
        "GOTI_TABLES_PER_MINUTE": "0",
        "GOTI_JOINS_PER_MINUTE": "0",
    }


@dataclass
class TablesBackend(LoopbackServers):
    """Redis, the referee and the tables service, each its own process on loopback, for
    the bots to play through."""

    profile_dir: Path | None = None
    """When set, the tables and referee processes run under cProfile and leave
    ``<name>.prof`` there (slower: for finding where the time goes, not for figures)."""
    server_path: str | None = None
    """When set, the tables and referee processes import Goti from here (``PYTHONPATH``):
    another commit's sources or a compiled build, driven by this tree's bots."""
    tables_target: str = ""
    referee_target: str = ""

    async def start(self) -> None:
        await super().start()
        assert self.redis is not None
        referee_port, tables_port = free_port(), free_port()
        environment = {
            **crowd_environment(self.redis.url, referee_port),
            "GOTI_TABLES_PORT": str(tables_port),
        }
        if self.server_path is not None:
            environment["PYTHONPATH"] = self.server_path
        for name, port in (("referee", referee_port), ("tables", tables_port)):
            profile = (
                ["-m", "cProfile", "-o", str(self.profile_dir / f"{name}.prof")]
                if self.profile_dir is not None
                else []
            )
            command = [sys.executable, *profile, "-m", f"goti.{name}"]
            await self.spawn(name, command, environment, f"{_HOST}:{port}")
        self.tables_target = f"{_HOST}:{tables_port}"
        self.referee_target = f"{_HOST}:{referee_port}"

    async def redis_command_counts(self) -> dict[str, int]:
        assert self.redis is not None
        client = Redis.from_url(self.redis.url)
        try:
            return await redis_command_counts(client)
        finally:
            await client.aclose()


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
    """Players, tables and watchers over a pool of channels, spread evenly over the tables
    replicas at ``targets``; each call takes the next channel, so a table's moves and its
    watchers are served by every replica in turn, as behind a load balancer."""

    def __init__(self, targets: Sequence[str], channels: int) -> None:
        self._channels = [
            grpc.aio.insecure_channel(targets[index % len(targets)], options=CHANNEL_OPTIONS)
            for index in range(max(channels, len(targets)))
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
                try:
                    await self._new_game()
                except grpc.aio.AioRpcError as error:
                    # Counted, and tried again after a pause, as a player would.
                    self._recorder.failed(f"new game {error.code().name}: {error.details()}")
                    await asyncio.sleep(NEW_GAME_RETRY_SECONDS)
                continue
            await self._bots.play(self.game, self._recorder)

    async def close(self) -> None:
        tasks = self._watch_tasks
        self._stop_watching()
        await asyncio.gather(*tasks, return_exceptions=True)


# -- measurements ---------------------------------------------------------------------------


@contextlib.contextmanager
def bots_uncollected() -> Iterator[None]:
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
async def playing_tables(
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


async def _cpu_rates(backend: MeasuredServers, seconds: float) -> dict[str, float]:
    """Each server process's CPU seconds per second over a quiet spell."""
    before, started = backend.cpu(), time.perf_counter()
    await asyncio.sleep(seconds)
    after, wall = backend.cpu(), time.perf_counter() - started
    return {name: (after[name] - before[name]) / wall for name in before}


async def run_phase(
    backend: MeasuredServers,
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
    with bots_uncollected():
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
        **_latency_figures(recorder),
        "tables": len(tables),
        "watchers_per_table": recorder.watchers,
        "mean_interval_seconds": mean_interval,
        "measured_seconds": round(wall, 2),
        "moves": moves,
        "moves_per_second": round(moves / wall, 1),
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


def _latency_figures(recorder: Recorder) -> dict[str, Any]:
    """How long the moves of a phase took: the round trip to both watchers, the Play call."""
    return {
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
    }


def describe_phase(label: str, figures: dict[str, Any]) -> str:
    """One line of a :func:`run_phase`'s figures."""
    rt = figures["round_trip_ms"]
    cpu = dict(figures["server_cpu_ms_per_move"])
    total = cpu.pop("total")
    return (
        f"{label}: {figures['tables']} tables, {figures['moves']} moves "
        f"({figures['moves_per_second']}/s) - round trip p50 {rt['p50']} ms, p99 {rt['p99']} ms, "
        f"max {rt['max']} ms; server CPU/move {total} ms "
        f"({', '.join(f'{name} {value}' for name, value in cpu.items())}); "
        f"client {figures['client_cpu_ms_per_move']} ms"
        + (f"; errors {figures['errors']}" if figures["errors"] else "")
        + (
            f"; {figures['moves_without_both_events']} moves not seen by both watchers"
            if figures["moves_without_both_events"]
            else ""
        )
    )
