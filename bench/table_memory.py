"""Redis memory per live table over a long game: what one table costs at plies 0 to 240.

One Redis, and a referee and a tables server in this process on loopback (the tables options
from the ``GOTI_*`` settings, so ``GOTI_TABLE_LOG_EVENTS`` applies).  Each table is two guest
players (one creates it, the other joins) playing a long English game through the public
API, one Play call per ply by the side to move; half the tables have a turn timer, whose
deadline every event then carries.  The games are found beforehand with ``goti.rules``:
random legal moves, backtracking from any that ends the game, so every table is still live
at the last ply measured.  Long games end in king manoeuvres, so their repetition windows
are long too.

At each ply count, ``MEMORY USAGE`` (every sample) of each table's keys: its state hash, its
event log, its remembered requests and its join code; the two players' keys are counted
apart.  The goal is 4 KB per live table (the table's own keys).

Run: ``python bench/table_memory.py`` (about ten seconds).  Figures go to
``bench/results/table_memory.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import platform
import random
import shlex
import statistics
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import grpc
from redis.asyncio import Redis

from goti import serving
from goti.api.v1 import players_pb2, players_pb2_grpc, tables_pb2, tables_pb2_grpc
from goti.redis_server import RedisServer
from goti.referee.servicer import bind as bind_referee
from goti.rules.game import Game
from goti.rules.moves import Move
from goti.settings import Settings
from goti.tables import keys
from goti.tables.options import TablesOptions
from goti.tables.runtime import TablesRuntime, open_redis

RESULTS: Final = Path(__file__).parent / "results" / "table_memory.json"
GOAL_BYTES_PER_TABLE: Final = 4096
CALL_TIMEOUT: Final = 30.0
SEARCH_STEPS: Final = 20_000
"""Moves tried per seed before giving up on finding a long enough game from it."""


def long_game(plies: int, seed: int) -> list[str] | None:
    """An English game of ``plies`` moves that has not ended, or None if the seed's random
    walk (with backtracking) did not find one soon."""
    rng = random.Random(seed)
    game = Game("english")
    tried: list[set[Move]] = [set()]
    for _ in range(SEARCH_STEPS):
        if game.ply >= plies:
            return list(game.moves)
        untried = (
            [] if game.is_over else [move for move in game.legal_moves if move not in tried[-1]]
        )
        if not untried:
            game.pop()
            tried.pop()
            continue
        move = rng.choice(untried)
        tried[-1].add(move)
        game.push(move)
        tried.append(set())
    return None


def long_games(count: int, plies: int) -> list[list[str]]:
    """``count`` different long games."""
    games: list[list[str]] = []
    seed = 0
    while len(games) < count:
        found = long_game(plies, seed)
        if found is not None:
            games.append(found)
        seed += 1
    return games


@dataclass
class Seat:
    """A guest at a table, with its token."""

    tables: tables_pb2_grpc.TablesServiceAsyncStub
    player_id: str
    token: str

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)


@dataclass
class LiveTable:
    """A table being played: its id and code, its seats by colour, its moves to play."""

    table_id: str
    code: str
    seats: dict[int, Seat]
    moves: list[str]
    seq: int = 0
    turn: int = 0
    ply: int = 0

    async def play_until(self, plies: int) -> None:
        while self.ply < plies:
            seat = self.seats[self.turn]
            response = await seat.tables.Play(
                tables_pb2.PlayRequest(
                    table_id=self.table_id,
                    request_id=f"{self.table_id}-{self.ply}",
                    expected_seq=self.seq,
                    notation=self.moves[self.ply],
                ),
                metadata=seat.metadata,
                timeout=CALL_TIMEOUT,
            )
            played = response.events[0].move_played
            if played.record.HasField("outcome"):
                raise RuntimeError(f"the game at {self.table_id} ended at ply {self.ply}")
            self.seq = response.events[-1].seq
            self.turn = played.next.side
            self.ply += 1


@contextlib.asynccontextmanager
async def servers(folder: Path) -> AsyncIterator[tuple[grpc.aio.Channel, Redis]]:
    """Redis, a referee and a tables server (its options from the ``GOTI_*`` settings)."""
    settings = dataclasses.replace(Settings.from_env(), host="127.0.0.1", grace_seconds=1)
    options = TablesOptions.from_settings(
        settings, tables_per_minute=0, joins_per_minute=0, guests_per_minute=0
    )
    async with contextlib.AsyncExitStack() as stack:
        redis_server = RedisServer(folder / "redis", persistent=False)
        await redis_server.astart()
        stack.push_async_callback(redis_server.astop)
        referee = await serving.start_server("referee", bind_referee, settings, port=0)
        stack.push_async_callback(referee.stop, None)
        redis = open_redis(redis_server.url)
        stack.push_async_callback(redis.aclose)
        referee_channel = serving.open_channel(referee.target, settings)
        stack.push_async_callback(referee_channel.close)
        # No table here plays the computer: its channel is never used.
        ai_channel = serving.open_channel("127.0.0.1:9", settings)
        stack.push_async_callback(ai_channel.close)
        runtime = TablesRuntime.assemble(redis, referee_channel, ai_channel, options)
        runtime.start()
        stack.push_async_callback(runtime.close)
        tables = await serving.start_server(
            "tables", runtime.bind, settings, port=0, drain=runtime.drain
        )
        stack.push_async_callback(tables.stop, None)
        channel = serving.open_channel(tables.target, settings)
        stack.push_async_callback(channel.close)
        measuring = Redis.from_url(redis_server.url)
        stack.push_async_callback(measuring.aclose)
        yield channel, measuring


async def guest(channel: grpc.aio.Channel, name: str) -> Seat:
    created = await players_pb2_grpc.PlayersServiceStub(channel).CreateGuest(
        players_pb2.CreateGuestRequest(display_name=name), timeout=CALL_TIMEOUT
    )
    return Seat(
        tables_pb2_grpc.TablesServiceStub(channel), created.player.player_id, created.player_token
    )


async def open_table(
    channel: grpc.aio.Channel, name: str, moves: list[str], turn_timer_seconds: int
) -> LiveTable:
    """Two guests at a new table, both seated."""
    host, visitor = await guest(channel, "Ann"), await guest(channel, "Bob")
    created = await host.tables.CreateTable(
        tables_pb2.CreateTableRequest(
            request_id=f"table-{name}",
            starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1,
            turn_timer_seconds=turn_timer_seconds,
        ),
        metadata=host.metadata,
        timeout=CALL_TIMEOUT,
    )
    joined = await visitor.tables.JoinTable(
        tables_pb2.JoinTableRequest(request_id=f"join-{name}", code=created.table.code),
        metadata=visitor.metadata,
        timeout=CALL_TIMEOUT,
    )
    table = joined.table
    by_id = {host.player_id: host, visitor.player_id: visitor}
    seats = {int(seat.color): by_id[seat.player.player_id] for seat in (table.white, table.black)}
    return LiveTable(
        table.table_id, table.code, seats, moves, seq=table.seq, turn=table.game.turn.side
    )


async def key_bytes(redis: Redis, names: list[str]) -> dict[str, int]:
    """``MEMORY USAGE`` of each key, every sample taken."""
    pipeline = redis.pipeline(transaction=False)
    for name in names:
        pipeline.memory_usage(name, samples=0)
    return {
        name: int(size or 0) for name, size in zip(names, await pipeline.execute(), strict=True)
    }


async def measure(redis: Redis, tables: list[LiveTable]) -> dict[str, Any]:
    """Bytes per table, by key, mean and largest; the players' bytes apart."""
    parts: dict[str, list[int]] = {"state": [], "log": [], "requests": [], "code": []}
    totals: list[int] = []
    players: list[int] = []
    log_lengths: list[int] = []
    game_fields: list[int] = []
    for table in tables:
        table_keys = {
            "state": keys.table_state(table.table_id),
            "log": keys.table_log(table.table_id),
            "requests": keys.table_requests(table.table_id),
            "code": keys.table_code(table.code),
        }
        sizes = await key_bytes(redis, list(table_keys.values()))
        for part, name in table_keys.items():
            parts[part].append(sizes[name])
        totals.append(sum(sizes.values()))
        player_keys = [
            name.decode()
            for seat in table.seats.values()
            async for name in redis.scan_iter(match=f"goti:{{p:{seat.player_id}}}:*")
        ]
        players.append(sum((await key_bytes(redis, player_keys)).values()))
        log_lengths.append(await redis.llen(table_keys["log"]))
        game_fields.append(await redis.hstrlen(table_keys["state"], "game"))
    return {
        "bytes_per_table": round(statistics.mean(totals)),
        "bytes_per_table_max": max(totals),
        "by_key": {part: round(statistics.mean(sizes)) for part, sizes in parts.items()},
        "events_in_log": round(statistics.mean(log_lengths), 1),
        "game_field_bytes": round(statistics.mean(game_fields)),
        "bytes_per_two_players": round(statistics.mean(players)),
    }


TURN_TIMERS: Final = {"no_turn_timer": 0, "turn_timer_600s": 600}
"""The two kinds of table measured: with a turn timer, every event also carries the deadline."""


async def run(tables_per_kind: int, plies: list[int]) -> dict[str, dict[str, Any]]:
    """The figures by kind of table, then by ply."""
    games = long_games(tables_per_kind, plies[-1])
    figures: dict[str, dict[str, Any]] = {kind: {} for kind in TURN_TIMERS}
    with tempfile.TemporaryDirectory(prefix="goti-table-memory-") as folder:
        async with servers(Path(folder)) as (channel, redis):
            tables = {
                kind: [
                    await open_table(channel, f"{kind}-{number}", moves, seconds)
                    for number, moves in enumerate(games)
                ]
                for kind, seconds in TURN_TIMERS.items()
            }
            everyone = [table for kind in tables.values() for table in kind]
            for ply in plies:
                await asyncio.gather(*(table.play_until(ply) for table in everyone))
                for kind, kind_tables in tables.items():
                    figures[kind][str(ply)] = await measure(redis, kind_tables)
                    print(describe(kind, ply, figures[kind][str(ply)]), flush=True)
    return figures


def describe(kind: str, ply: int, figures: dict[str, Any]) -> str:
    parts = ", ".join(f"{part} {size}" for part, size in figures["by_key"].items())
    return (
        f"{kind:<15} ply {ply:>3}: {figures['bytes_per_table']} B per table "
        f"(largest {figures['bytes_per_table_max']}; {parts}); "
        f"{figures['events_in_log']} events in the log, "
        f"game field {figures['game_field_bytes']} B; "
        f"two players {figures['bytes_per_two_players']} B"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=8, help="tables of each kind")
    parser.add_argument(
        "--plies", type=int, nargs="+", default=[0, 40, 80, 160, 240], help="where to measure"
    )
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    figures = asyncio.run(run(args.tables, sorted(set(args.plies))))
    largest = max(
        by_ply["bytes_per_table_max"] for kind in figures.values() for by_ply in kind.values()
    )
    results = {
        "benchmark": "table_memory",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": shlex.join([sys.executable, *sys.argv]),
        "machine": platform.platform(),
        "settings": {"GOTI_TABLE_LOG_EVENTS": Settings.from_env().table_log_events},
        "goal_bytes_per_table": GOAL_BYTES_PER_TABLE,
        "largest_bytes_per_table": largest,
        "goal_met": largest <= GOAL_BYTES_PER_TABLE,
        "tables_of_each_kind": args.tables,
        "by_kind_and_ply": figures,
        "note": "MEMORY USAGE (every sample) of each live table's state hash, event log, "
        "remembered requests and join code; its two guest players' keys apart. A table's "
        "figure is the same for as long as its game lasts, but for the game's move list "
        "(in the state hash, deflated): a few bytes a ply",
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=1) + "\n")
    print(f"largest table: {largest} B (goal {GOAL_BYTES_PER_TABLE} B); wrote {args.output}")


if __name__ == "__main__":
    main()
