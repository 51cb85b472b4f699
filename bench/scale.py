"""Scale-out: how throughput grows with AI worker processes and with tables replicas.

- AI: Hard moves per second from one AI service with 1, 2, 4 and 8 worker processes, kept
  busy by twice as many calls in flight as workers, from positions of real openings.
- Tables: moves per second through 1, 2 and 4 tables replicas on one Redis and one referee,
  pass-and-play tables spread over the replicas, each moved as fast as its answers come.

The goal is AI throughput of at least 0.8 x linear up to 8 workers, which needs a machine
with 8 free cores: on a smaller one the curve flattens at its core count, and the report
says how many cores there were.  Every server is its own process on loopback; the load comes
from this process.

    python bench/scale.py                       # the whole run, a few minutes
    python bench/scale.py --seconds 10 --workers 1 2 --replicas 1 2

Figures go to ``bench/results/scale.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc

from goti.api import convert
from goti.api.v1 import (
    ai_pb2,
    ai_pb2_grpc,
    players_pb2,
    players_pb2_grpc,
    tables_pb2,
    tables_pb2_grpc,
)
from goti.healthcheck import wait_until_serving
from goti.redis_server import RedisServer
from goti.rules.game import Game

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results" / "scale.json"
OPENINGS = BENCH / "openings.json"
GOAL_EFFICIENCY = 0.8
CALL_TIMEOUT = 30.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _service(name: str, environment: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", f"goti.{name}"],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _stop(processes: Sequence[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()


def _base_environment() -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("GOTI_")}
    environment.update({"GOTI_HOST": "127.0.0.1", "GOTI_LOG_LEVEL": "warning"})
    return environment


def _opening_states(count: int) -> list[Any]:
    """Game states after real openings of both variants, forced moves played."""
    table = json.loads(OPENINGS.read_text())
    states = []
    for variant in ("english", "russian"):
        for opening in table[variant]["openings"][:count]:
            game = Game(variant)
            for text in opening["moves"]:
                game.play(text)
            while not game.is_over and len(game.legal_moves) == 1:
                game.push(game.legal_moves[0])
            states.append(convert.game_state_to_proto(game.state()))
    return states


async def ai_throughput(workers: int, seconds: float, states: list[Any]) -> dict[str, Any]:
    """Hard moves per second from one AI service with ``workers`` search processes."""
    port = _free_port()
    environment = _base_environment() | {"GOTI_AI_PORT": str(port), "GOTI_AI_WORKERS": str(workers)}
    process = _service("ai", environment)
    target = f"127.0.0.1:{port}"
    try:
        await wait_until_serving(target, timeout=120)
        async with grpc.aio.insecure_channel(target) as channel:
            ai = ai_pb2_grpc.AiServiceStub(channel)
            chance = random.Random(workers)
            done = 0
            nodes = 0
            stop_at = time.monotonic() + seconds

            async def keep_busy() -> None:
                nonlocal done, nodes
                while time.monotonic() < stop_at:
                    request = ai_pb2.ChooseMoveRequest(
                        state=chance.choice(states), level=ai_pb2.LEVEL_HARD
                    )
                    reply = await ai.ChooseMove(request, timeout=CALL_TIMEOUT)
                    done += 1
                    nodes += reply.nodes

            started = time.monotonic()
            await asyncio.gather(*(keep_busy() for _ in range(2 * workers)))
            elapsed = time.monotonic() - started
    finally:
        _stop([process])
    return {
        "workers": workers,
        "seconds": round(elapsed, 2),
        "moves": done,
        "moves_per_second": round(done / elapsed, 2),
        "nodes_per_second": round(nodes / elapsed),
    }


async def _play_games(channel: grpc.aio.Channel, stop_at: float) -> int:
    """A guest's pass-and-play games, one after another, each move its first legal one, until
    ``stop_at`` (monotonic); the moves played."""
    done = 0
    players = players_pb2_grpc.PlayersServiceStub(channel)
    tables = tables_pb2_grpc.TablesServiceStub(channel)
    guest = await players.CreateGuest(players_pb2.CreateGuestRequest(), timeout=CALL_TIMEOUT)
    metadata = (("authorization", f"Bearer {guest.player_token}"),)
    while time.monotonic() < stop_at:
        created = await tables.CreateTable(
            tables_pb2.CreateTableRequest(
                request_id=uuid.uuid4().hex, opponent=tables_pb2.OPPONENT_PASS_AND_PLAY
            ),
            metadata=metadata,
            timeout=CALL_TIMEOUT,
        )
        seq = created.table.seq
        turn = created.table.game.turn
        while turn.legal_moves and time.monotonic() < stop_at:
            reply = await tables.Play(
                tables_pb2.PlayRequest(
                    table_id=created.table.table_id,
                    request_id=uuid.uuid4().hex,
                    expected_seq=seq,
                    notation=turn.legal_moves[0].notation,
                ),
                metadata=metadata,
                timeout=CALL_TIMEOUT,
            )
            done += 1
            seq = reply.events[-1].seq
            moved = reply.events[0].move_played
            if not moved.HasField("next"):
                break
            turn = moved.next
    return done


async def tables_throughput(
    replicas: int, seconds: float, tables_per_replica: int, redis_url: str
) -> dict[str, Any]:
    """Moves per second through ``replicas`` tables processes sharing one Redis and referee."""
    referee_port = _free_port()
    base = _base_environment()
    processes = [_service("referee", base | {"GOTI_REFEREE_PORT": str(referee_port)})]
    targets = []
    try:
        for _ in range(replicas):
            port = _free_port()
            processes.append(
                _service(
                    "tables",
                    base
                    | {
                        "GOTI_TABLES_PORT": str(port),
                        "GOTI_REDIS_URL": redis_url,
                        "GOTI_REFEREE_TARGET": f"127.0.0.1:{referee_port}",
                        "GOTI_WEB_PORT": "0",
                        "GOTI_TABLES_PER_MINUTE": "0",
                        "GOTI_GUESTS_PER_MINUTE": "0",
                    },
                )
            )
            targets.append(f"127.0.0.1:{port}")
        await wait_until_serving(f"127.0.0.1:{referee_port}", timeout=120)
        for target in targets:
            await wait_until_serving(target, timeout=120)
        async with AsyncExitStack() as stack:
            channels = [
                await stack.enter_async_context(grpc.aio.insecure_channel(target))
                for target in targets
            ]
            stop_at = time.monotonic() + seconds
            started = time.monotonic()
            done = sum(
                await asyncio.gather(
                    *(
                        _play_games(channel, stop_at)
                        for channel in channels
                        for _ in range(tables_per_replica)
                    )
                )
            )
            elapsed = time.monotonic() - started
    finally:
        _stop(processes)
    return {
        "replicas": replicas,
        "tables": replicas * tables_per_replica,
        "seconds": round(elapsed, 2),
        "moves": done,
        "moves_per_second": round(done / elapsed, 1),
    }


def _with_speed_up(rows: list[dict[str, Any]], unit: str) -> list[dict[str, Any]]:
    base = rows[0]["moves_per_second"] / rows[0][unit]
    for row in rows:
        row["speed_up"] = round(row["moves_per_second"] / rows[0]["moves_per_second"], 2)
        row["efficiency"] = round(row["moves_per_second"] / (base * row[unit]), 2)
    return rows


async def run(args: argparse.Namespace) -> dict[str, Any]:
    states = _opening_states(20)
    ai_rows = []
    for workers in args.workers:
        row = await ai_throughput(workers, args.seconds, states)
        print(f"AI, {workers} worker(s): {row['moves_per_second']} Hard moves/s", flush=True)
        ai_rows.append(row)
    tables_rows = []
    folder = Path(tempfile.mkdtemp(prefix="goti-scale-"))
    try:
        with RedisServer(folder, persistent=False) as redis:
            for replicas in args.replicas:
                row = await tables_throughput(
                    replicas, args.seconds, args.tables_per_replica, redis.url
                )
                print(
                    f"tables, {replicas} replica(s): {row['moves_per_second']} moves/s", flush=True
                )
                tables_rows.append(row)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {
        "ai": _with_speed_up(ai_rows, "workers"),
        "tables": _with_speed_up(tables_rows, "replicas"),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="measuring time per point")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--tables-per-replica", type=int, default=8)
    args = parser.parse_args(argv)
    figures = asyncio.run(run(args))
    cores = len(os.sched_getaffinity(0))
    report = {
        "benchmark": "scale-out: AI workers and tables replicas",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python bench/scale.py " + " ".join(sys.argv[1:]),
        "machine": {
            "cores": cores,
            "python": platform.python_version(),
            "cpu": platform.processor(),
        },
        "goal": f"AI >= {GOAL_EFFICIENCY} x linear up to 8 workers (needs 8 free cores)",
        "note": f"measured on {cores} cores: speed-up cannot pass {cores}x here",
        **figures,
    }
    for row in figures["ai"]:
        print(
            f"  AI {row['workers']} workers: speed-up {row['speed_up']}x, "
            f"efficiency {row['efficiency']}"
        )
    for row in figures["tables"]:
        print(f"  tables {row['replicas']} replicas: speed-up {row['speed_up']}x")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
