"""Tables service speed: bots play real games through the public API, two watchers per table.

One Redis, one referee (``python -m goti.referee``) and one tables process
(``python -m goti.tables``) run as subprocesses on loopback; the bots and the watchers
(``goti.benchmark_bots``) run in this process, on raw generated stubs.  Each table is two
guest players; its driver plays the side to move, a random legal move taken from the
previous move's event.

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
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import grpc
from redis.asyncio import Redis

from goti import serving
from goti.api.v1 import game_pb2, referee_pb2, referee_pb2_grpc, tables_pb2
from goti.benchmark_bots import (
    CALL_TIMEOUT,
    Bots,
    TablesBackend,
    describe_phase,
    playing_tables,
    run_phase,
)
from goti.benchmarking import (
    call_seconds,
    finish_description,
    milliseconds,
    percentile,
    run_record,
    whole_numbers,
    write_figures,
)
from goti.healthcheck import HealthCheckRequest, health_check_call

RESULTS: Final = Path(__file__).parent / "results" / "tables.json"
HOST: Final = "127.0.0.1"
GOALS: Final = {
    "open_loop_10_tables_p50_ms": 3.0,
    "open_loop_10_tables_p99_ms": 10.0,
    "open_loop_1000_tables_p99_ms": 50.0,
    "server_cpu_ms_per_move": 2.5,
    "redis_bytes_per_live_table": 4096,
}

# -- the backend ----------------------------------------------------------------------------


@dataclass
class Backend(TablesBackend):
    """Redis, the referee and the tables service, each its own process on loopback, with
    what this benchmark reads of Redis's memory."""

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


async def _timed(
    call: Callable[[], Awaitable[object]], rounds: int, pause: float = 0.0
) -> dict[str, float]:
    times = await call_seconds(call, rounds, pause)
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
    async with playing_tables(bots, 1, watchers) as (tables, recorder):
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


async def _redis_memory(
    backend: Backend, tables: Sequence[Any], before: int, after_setup: int
) -> dict[str, Any]:
    """What the run's live tables hold in Redis: their keys' bytes, and the growth of Redis's
    used memory from before they were set up."""
    count = len(tables)
    after_play = await backend.redis_used_memory()
    keys = await backend.key_memory()
    table_bytes = keys["bytes"].get("table", 0)
    player_bytes = keys["bytes"].get("player", 0)
    return {
        "live_tables": count,
        "tables_in_redis": keys["tables"],
        "players_in_redis": keys["players"],
        "events_per_table": round(sum(t.game.seq for t in tables if t.game) / count, 1),
        "key_bytes_per_table": round(table_bytes / keys["tables"]),
        "key_bytes_per_player": round(player_bytes / keys["players"]),
        "key_bytes_shared": keys["bytes"].get("shared", 0),
        "used_memory_per_live_table_after_setup": round((after_setup - before) / count),
        "used_memory_per_live_table_after_play": round((after_play - before) / count),
        "note": "key bytes: MEMORY USAGE of every key, a table's state, log, requests and "
        "code; used_memory: INFO memory before and after the run set up its tables, two guest "
        "players each included, and with Redis's own buffers",
    }


def _describe_memory(memory: dict[str, Any]) -> str:
    return (
        f"redis memory: {memory['key_bytes_per_table']} bytes of keys per table "
        f"over {memory['tables_in_redis']} tables "
        f"({memory['events_per_table']} events each on average), "
        f"{memory['key_bytes_per_player']} per player; used_memory grew "
        f"{memory['used_memory_per_live_table_after_play']} bytes per live "
        "table, its two players included"
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
            server_path=args.server_path,
        )
        async with backend.running():
            backend.describe_redis(results["machine"])
            bots = Bots([backend.tables_target], args.channels)
            try:
                if args.anatomy_rounds > 0:
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
                    async with playing_tables(bots, count, args.watchers) as (tables, recorder):
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
                            results["redis_memory"] = await _redis_memory(
                                backend, tables, before, after_setup
                            )
                    results["open_loop"].append(figures)
                    print(describe_phase("open loop", figures), flush=True)
                if time.monotonic() < deadline:
                    async with playing_tables(bots, args.closed_tables, args.watchers) as (
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
                    print(describe_phase("closed loop", figures), flush=True)
                if "redis_memory" in results:
                    print(_describe_memory(results["redis_memory"]))
            finally:
                await bots.close()
    print(finish_description(results["machine"]))
    return results


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tables",
        type=whole_numbers,
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
        "--anatomy-rounds",
        type=int,
        default=200,
        help="calls timed per hop, unloaded (200; 0: none)",
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
    parser.add_argument(
        "--server-path",
        help="PYTHONPATH of the tables and referee processes alone (another build's Goti)",
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
