"""What waiting for a replica costs a move: ``GOTI_REDIS_WAIT_REPLICAS=1`` against 0.

A primary, its replica and three sentinels (the tests' Sentinel set-up,
``tests/redis_topologies.py``), one referee and two tables processes, all on loopback; both
tables processes reach Redis through the sentinels (``redis+sentinel://``).  One answers a
move as soon as the primary has it, the other once the replica holds it too (WAIT).  A guest
plays pass-and-play tables on each, one move at a time (a random legal move; a new table
when a game ends), in blocks of moves that take turns between the two, so that both meet the
machine as it is at the time.

Measured for each: the Play round trip at the client (p50, p90, p99, mean), and the CPU time
per move of the tables process and of the two Redis servers (``/proc/<pid>/stat``), read
around each block.  Also the machine's speed at the start and the end: only runs at about the
same speed compare.

Run: ``python bench/redis_wait.py`` (about a minute; ``--moves`` per setting, 400 by
default).  Figures go to ``bench/results/redis_wait.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import grpc

from goti.api.v1 import players_pb2, players_pb2_grpc, tables_pb2, tables_pb2_grpc
from goti.benchmarking import (
    describe_machine,
    finish_description,
    milliseconds,
    percentile,
    process_cpu_seconds,
)
from goti.healthcheck import wait_until_serving
from goti.redis_server import free_port

# The Sentinel set-up is the tests' own (tests/ is no package: its modules import by name).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from redis_topologies import LocalSentinels, RedisProcess

RESULTS: Final = Path(__file__).parent / "results" / "redis_wait.json"
HOST: Final = "127.0.0.1"
CALL_TIMEOUT: Final = 10.0
WARM_UP_MOVES: Final = 30
BLOCK_MOVES: Final = 25
SETTINGS: Final = {"no_wait": 0, "wait_1_replica": 1}
"""Each tables process by name, and its GOTI_REDIS_WAIT_REPLICAS."""


@dataclass
class Player:
    """A guest at a pass-and-play table of one tables process, moving for both sides."""

    name: str
    process: subprocess.Popen[bytes]
    channel: grpc.aio.Channel
    token: str = ""
    table_id: str = ""
    seq: int = 0
    turn: Any = None
    round_trips: list[float] = field(default_factory=list)
    cpu_seconds: float = 0.0
    redis_cpu_seconds: dict[str, float] = field(default_factory=dict)

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)

    async def sit_down(self) -> None:
        players = players_pb2_grpc.PlayersServiceStub(self.channel)
        created = await players.CreateGuest(
            players_pb2.CreateGuestRequest(display_name="Bench"), timeout=CALL_TIMEOUT
        )
        self.token = created.player_token
        await self.new_table()

    async def new_table(self) -> None:
        tables = tables_pb2_grpc.TablesServiceStub(self.channel)
        created = await tables.CreateTable(
            tables_pb2.CreateTableRequest(
                request_id=os.urandom(8).hex(), opponent=tables_pb2.OPPONENT_PASS_AND_PLAY
            ),
            metadata=self.metadata,
            timeout=CALL_TIMEOUT,
        )
        self.table_id, self.seq, self.turn = (
            created.table.table_id,
            created.table.seq,
            created.table.game.turn,
        )

    async def move(self, *, timed: bool) -> None:
        request = tables_pb2.PlayRequest(
            table_id=self.table_id, request_id=os.urandom(8).hex(), expected_seq=self.seq
        )
        request.path.squares.extend(random.choice(self.turn.legal_moves).path)
        tables = tables_pb2_grpc.TablesServiceStub(self.channel)
        started = time.perf_counter()
        response = await tables.Play(request, metadata=self.metadata, timeout=CALL_TIMEOUT)
        if timed:
            self.round_trips.append(time.perf_counter() - started)
        last = response.events[-1]
        if last.HasField("game_over") or not response.events[0].move_played.next.legal_moves:
            await self.new_table()
        else:
            self.seq, self.turn = last.seq, response.events[0].move_played.next


def _start(name: str, environment: dict[str, str], folder: Path) -> subprocess.Popen[bytes]:
    with (folder / f"{name}.log").open("ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", f"goti.{name.partition('-')[0]}"],
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


async def _run(sentinels: LocalSentinels, folder: Path, moves: int) -> dict[str, Any]:
    referee_port = free_port()
    base = {
        **os.environ,
        "GOTI_HOST": HOST,
        "GOTI_REDIS_URL": sentinels.url,
        "GOTI_REFEREE_PORT": str(referee_port),
        "GOTI_REFEREE_TARGET": f"{HOST}:{referee_port}",
        "GOTI_AI_TARGET": f"{HOST}:{free_port()}",
        "GOTI_LOG_LEVEL": "warning",
        "GOTI_LOG_FORMAT": "text",
        "GOTI_GUESTS_PER_MINUTE": "0",
        "GOTI_TABLES_PER_MINUTE": "0",
    }
    processes = [_start("referee", base, folder)]
    players: list[Player] = []
    try:
        await wait_until_serving(f"{HOST}:{referee_port}", timeout=60)
        for name, replicas in SETTINGS.items():
            port = free_port()
            environment = {
                **base,
                "GOTI_TABLES_PORT": str(port),
                "GOTI_REDIS_WAIT_REPLICAS": str(replicas),
            }
            process = _start(f"tables-{name}", environment, folder)
            processes.append(process)
            await wait_until_serving(f"{HOST}:{port}", timeout=60)
            players.append(Player(name, process, grpc.aio.insecure_channel(f"{HOST}:{port}")))
        for player in players:
            await player.sit_down()
            for _ in range(WARM_UP_MOVES):
                await player.move(timed=False)
        redis = {"primary": sentinels.primary()}
        redis["replica"] = next(
            node for node in sentinels.data_nodes if node is not redis["primary"]
        )
        for block in range(0, moves, BLOCK_MOVES):
            order = players if (block // BLOCK_MOVES) % 2 == 0 else players[::-1]
            for player in order:
                await _block(player, min(BLOCK_MOVES, moves - block), redis)
        return {player.name: _figures(player) for player in players}
    finally:
        for player in players:
            await player.channel.close()
        for process in processes:
            process.terminate()
            await asyncio.to_thread(process.wait, 15)


async def _block(player: Player, count: int, redis: dict[str, RedisProcess]) -> None:
    """``count`` moves in a row, with the CPU the tables process and Redis spend on them."""
    pids = {name: node.process.pid for name, node in redis.items() if node.process is not None}
    before = {name: process_cpu_seconds(pid) for name, pid in pids.items()}
    tables_before = process_cpu_seconds(player.process.pid)
    for _ in range(count):
        await player.move(timed=True)
    player.cpu_seconds += process_cpu_seconds(player.process.pid) - tables_before
    for name, pid in pids.items():
        spent = process_cpu_seconds(pid) - before[name]
        player.redis_cpu_seconds[name] = player.redis_cpu_seconds.get(name, 0.0) + spent


def _figures(player: Player) -> dict[str, Any]:
    trips, count = player.round_trips, len(player.round_trips)
    return {
        "moves": count,
        "round_trip_p50_ms": milliseconds(percentile(trips, 0.5)),
        "round_trip_p90_ms": milliseconds(percentile(trips, 0.9)),
        "round_trip_p99_ms": milliseconds(percentile(trips, 0.99)),
        "round_trip_mean_ms": milliseconds(sum(trips) / count),
        "tables_cpu_ms_per_move": milliseconds(player.cpu_seconds / count),
        "redis_cpu_ms_per_move": {
            name: milliseconds(spent / count) for name, spent in player.redis_cpu_seconds.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--moves", type=int, default=400, help="timed moves per setting")
    arguments = parser.parse_args()
    machine = describe_machine()
    with (
        tempfile.TemporaryDirectory(prefix="goti-bench-") as folder,
        LocalSentinels(Path(folder) / "redis") as sentinels,
    ):
        settings = asyncio.run(_run(sentinels, Path(folder), arguments.moves))
    speeds = finish_description(machine)
    cost = {
        name: round(
            settings["wait_1_replica"][f"round_trip_{name}_ms"]
            - settings["no_wait"][f"round_trip_{name}_ms"],
            3,
        )
        for name in ("p50", "p90", "p99", "mean")
    }
    results = {
        "benchmark": "redis_wait",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python bench/redis_wait.py " + " ".join(sys.argv[1:]),
        "machine": machine,
        "settings": settings,
        "wait_adds_ms": cost,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps({"settings": settings, "wait_adds_ms": cost}, indent=2))
    print(speeds)


if __name__ == "__main__":
    main()
