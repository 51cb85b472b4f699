"""The least a move can take on this machine along Goti's path, with handlers that do nothing.

A move in Goti crosses: the player's client → the tables service (gRPC) → the referee (a
message each way on a long-lived gRPC stream) → one Lua script on Redis (store, append to the
log, publish) → Redis pub/sub → the tables service → two watch streams (gRPC) back to the
watchers.  This benchmark builds the same chain out of bare parts and times it the way
``bench/tables.py`` times Goti:

- a *referee* process: a ``grpc.aio`` server whose one method, a bidirectional stream,
  answers each request with its call id, as Goti's ``ApplyStream`` does;
- a *tables* process: a ``grpc.aio`` server whose ``Play`` asks that referee over one of
  four long-lived streams (the answer found by its call id, as ``goti.tables.peers`` does),
  runs one Lua script (HSET, RPUSH, PUBLISH) and answers, and whose ``Watch`` streams what
  one shared pub/sub connection receives on the table's channel;
- a Redis process with the append-only log on, as in ``bench/tables.py``;
- this process: players and two watchers per table, over 16 channels.

No protobuf, no authentication, no rules, no validation: the bytes are opaque and sized like
Goti's (a 230-byte state, a 570-byte referee answer, a 270-byte event).  Both servers run on
uvloop with Goti's server options, as Goti's do.  What this measures is therefore the floor
of the architecture on this machine: the gRPC hops, the Redis round trip and the wake-ups
of processes that sleep between moves.  Goti's own figures (``bench/tables.py``) can be
read against it; run both in one session, since this machine's speed drifts.

Measured:

- open loop: N tables (10 by default), each moving once every 3 s on average (exponential
  gaps), as in ``bench/tables.py``: the move round trip (play call sent → the event at both
  watchers), p50/p99;
- closed loop: 16 tables moving back to back, as ``bench/tables.py``'s closed loop: moves
  per second and the CPU time each server process spends per move (tables, referee, Redis,
  from ``/proc/<pid>/stat``), the least Goti's own CPU figure could be;
- each hop on its own after 0.3 s of quiet: one unary call to the tables server, one request
  and its answer on an open stream to the referee, a Redis PING.

Run: ``python bench/move_path_floor.py`` (figures to ``bench/results/move_path_floor.json``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import grpc
from redis.asyncio import Redis

from goti import serving
from goti.benchmark_floor import (
    CALL_TIMEOUT,
    PING,
    STATE_BYTES,
    FloorBackend,
    RefereeStream,
    play_phase,
    timed,
)
from goti.benchmarking import finish_description, run_record, write_figures

RESULTS: Final = Path(__file__).parent / "results" / "move_path_floor.json"


async def _hops_after_idle(
    backend: FloorBackend, channels: list[grpc.aio.Channel], args: argparse.Namespace
) -> dict[str, Any]:
    """Each hop timed alone, after ``args.idle_pause`` seconds of quiet."""
    ping: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channels[0].unary_unary(PING)
    options = [("grpc.use_local_subchannel_pool", 1)]
    referee = grpc.aio.insecure_channel(backend.referee_target, options=options)
    referee_stream = RefereeStream(referee)
    await asyncio.wait_for(referee_stream.ask(b"x"), 60)
    assert backend.redis is not None
    redis = Redis.from_url(backend.redis.url)
    state = os.urandom(STATE_BYTES)
    hops = {
        "idle_pause_seconds": args.idle_pause,
        "tables_call_ms": await timed(
            lambda: ping(b"x", timeout=CALL_TIMEOUT), args.hop_rounds, args.idle_pause
        ),
        "referee_stream_message_ms": await timed(
            lambda: asyncio.wait_for(referee_stream.ask(state), CALL_TIMEOUT),
            args.hop_rounds,
            args.idle_pause,
        ),
        "redis_ping_ms": await timed(redis.ping, args.hop_rounds, args.idle_pause),
    }
    await redis.aclose()
    referee_stream.close()
    await referee.close()
    print(f"each hop after {args.idle_pause} s of quiet: {hops}")
    return hops


async def run(args: argparse.Namespace) -> dict[str, Any]:
    results = run_record("the move path's floor: Goti's hops with handlers that do nothing")
    with tempfile.TemporaryDirectory(prefix="goti-floor-") as folder:
        backend = FloorBackend(Path(folder), persistent_redis=True)
        async with backend.serving() as channels:
            if args.hop_rounds > 0:
                results["hops_after_idle"] = await _hops_after_idle(backend, channels, args)
            results["open_loop"] = []
            for count in args.tables:
                figures = await play_phase(
                    channels,
                    count,
                    mean_interval=args.mean_interval,
                    warmup=args.warmup,
                    measure=args.measure,
                    cpu=backend.cpu,
                )
                results["open_loop"].append(figures)
                print(_describe("open loop", figures), flush=True)
            if args.closed_tables > 0:
                figures = await play_phase(
                    channels,
                    args.closed_tables,
                    mean_interval=0,
                    warmup=args.warmup,
                    measure=args.closed_seconds,
                    cpu=backend.cpu,
                )
                results["closed_loop"] = figures
                print(_describe("closed loop", figures), flush=True)
    print(finish_description(results["machine"]))
    return results


def _describe(phase: str, figures: dict[str, Any]) -> str:
    trip, cpu = figures["round_trip_ms"], figures["server_cpu_ms_per_move"]
    return (
        f"{phase}: {figures['tables']} tables, {figures['moves']} moves "
        f"({figures['moves_per_second']}/s) - round trip p50 {trip['p50']} ms, "
        f"p99 {trip['p99']} ms, max {trip['max']} ms; server CPU/move {cpu['total']} ms "
        f"(tables {cpu['tables']}, referee {cpu['referee']}, redis {cpu['redis']})"
    )


def _counts(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=_counts, default=[10], help="table counts (10)")
    parser.add_argument("--mean-interval", type=float, default=3.0, help="seconds (3)")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds (3)")
    parser.add_argument("--measure", type=float, default=30.0, help="seconds (30)")
    parser.add_argument(
        "--closed-tables", type=int, default=16, help="tables in the closed loop (16; 0: none)"
    )
    parser.add_argument(
        "--closed-seconds", type=float, default=10.0, help="seconds measured, closed loop (10)"
    )
    parser.add_argument("--idle-pause", type=float, default=0.3, help="seconds (0.3)")
    parser.add_argument(
        "--hop-rounds", type=int, default=20, help="calls timed per hop (20; 0: none)"
    )
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    write_figures(serving.run(lambda: run(args)), args.output)


if __name__ == "__main__":
    main()
