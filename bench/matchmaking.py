"""Matchmaking speed: seekers arriving at random, paired by two tables replicas.

Redis, a referee and two tables processes run as subprocesses on loopback; the seekers run in
this process on raw generated stubs, their streams spread over both replicas.

- ``--seekers`` guests (10,000) seek at uniformly random moments over ``--seconds`` (60), each
  in one of four untimed pools (English and Russian, rated and casual), with a settled rating
  drawn around 1500 (sd 300) and written straight into the player's hash (``rating_<variant>``,
  as rated games leave it): no API sets a rating.
- Seek to table, p50/p99: from the Seek call to its SeekPaired, for all and apart for those
  who found a compatible seeker waiting on arrival; and from the moment each seeker and its
  eventual opponent were compatible (``goti.tables.pairing``'s rule) to the table.  Goal: p99
  under 2 s once a compatible seeker exists.
- Per pairing: Redis commands (``INFO commandstats``) and server CPU (``/proc/<pid>/stat`` of
  the tables processes, the referee and Redis), in all and above the idle rate.
- Redis memory per waiting seeker: ``INFO memory`` and ``MEMORY USAGE`` with ``--waiting``
  (1,000) seekers in a pool whose pairing lease the benchmark holds, so that none pairs.

Run: ``python bench/matchmaking.py`` (about 3 minutes; ``--seekers 2000 --seconds 30`` for a
smaller machine).  Figures go to ``bench/results/matchmaking.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import grpc
from redis.asyncio import Redis

from goti import serving
from goti.api.v1 import (
    game_pb2,
    matchmaking_pb2,
    matchmaking_pb2_grpc,
    players_pb2,
    players_pb2_grpc,
)
from goti.benchmarking import (
    LoopbackServers,
    finish_description,
    milliseconds,
    percentile,
    redis_command_counts,
    run_record,
    service_environment,
    write_figures,
)
from goti.ratings import Rating
from goti.redis_server import free_port
from goti.tables import keys, pairing
from goti.tables.rated_games import StoredRating, rating_field

RESULTS: Final = Path(__file__).parent / "results" / "matchmaking.json"
HOST: Final = "127.0.0.1"
CALL_TIMEOUT: Final = 30.0
SETUP_CONCURRENCY: Final = 32
REPLICAS: Final = 2
CHANNELS_PER_REPLICA: Final = 8
SETTLE_SECONDS: Final = 2.0
"""Quiet before and after a memory reading, for the streams to settle."""
IDLE_SECONDS: Final = 5.0
"""How long the idle servers are measured."""
Pool = tuple[int, int, bool]
"""A pool as a seek names it: variant, turn timer, rated."""
POOLS: Final[list[Pool]] = [
    (variant, matchmaking_pb2.SEEK_TIMER_NONE, rated)
    for variant in (game_pb2.VARIANT_ENGLISH, game_pb2.VARIANT_RUSSIAN)
    for rated in (True, False)
]
"""The four pools of the arrivals: English and Russian, rated and casual, all untimed (a
timed table's timer would play moves for the idle seekers, work that is not the pairing's)."""
WAITING_POOL: Final[Pool] = (game_pb2.VARIANT_ENGLISH, matchmaking_pb2.SEEK_TIMER_2_MINUTES, True)
"""The pool the memory phase's seekers wait in, its lease held (no arrival goes there)."""
RATING_MEAN: Final = 1500.0
RATING_SD: Final = 300.0
RATING_DEVIATION: Final = 60.0
GOALS: Final = {
    "seek_to_table_p99_ms_with_a_compatible_seeker_waiting_on_arrival": 2000.0,
    "couple_compatible_to_table_p99_ms": 2000.0,
}
"""p99 under 2 s once a compatible seeker exists: on arrival, or once the ranges met."""
CHANNEL_OPTIONS: Final = [
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_permit_without_calls", 1),
    # Separate channels to one target would otherwise share one connection.
    ("grpc.use_local_subchannel_pool", 1),
]


def _now_ms() -> float:
    return time.time() * 1000


# -- the backend ----------------------------------------------------------------------------


@dataclass
class Backend(LoopbackServers):
    """Redis, the referee and two tables replicas, each its own process on loopback."""

    tables_targets: list[str] = field(default_factory=list)

    async def start(self) -> None:
        await super().start()
        assert self.redis is not None
        referee_port = free_port()
        base = {
            **service_environment(self.redis.url, referee_port),
            "GOTI_SEEKS_PER_MINUTE": "0",
        }
        await self.spawn(
            "referee", [sys.executable, "-m", "goti.referee"], base, f"{HOST}:{referee_port}"
        )
        for index in range(REPLICAS):
            port = free_port()
            environment = {**base, "GOTI_TABLES_PORT": str(port)}
            target = f"{HOST}:{port}"
            await self.spawn(
                f"tables-{index}", [sys.executable, "-m", "goti.tables"], environment, target
            )
            self.tables_targets.append(target)


async def _used_memory(redis: Redis) -> int:
    return int((await redis.info("memory"))["used_memory"])


Spent = tuple[float, dict[str, float], dict[str, int]]
"""A moment (or a span) of the servers' work: seconds, CPU seconds by process, Redis commands
by name."""


async def _spent(backend: Backend, redis: Redis) -> Spent:
    return time.monotonic(), backend.cpu(), await redis_command_counts(redis)


def _between(start: Spent, end: Spent) -> Spent:
    return (
        end[0] - start[0],
        {name: end[1][name] - start[1][name] for name in end[1]},
        {name: calls - start[2].get(name, 0) for name, calls in end[2].items()},
    )


# -- seekers --------------------------------------------------------------------------------


@dataclass
class Seeker:
    """One guest's seek and what became of it (times in ms on this machine's clock)."""

    metadata: tuple[tuple[str, str], ...]
    player_id: str
    replica: int
    pool: int
    rating: float
    arrival: float = 0.0
    """Seconds after the arrivals' start."""
    started_ms: float = 0.0
    entered_ms: float = 0.0
    """When the server put it in the pool: its first waiting message's arrival less the wait
    it reports (the call's start when it was paired before any)."""
    paired_at_ms: float = 0.0
    """The table's creation time, on the server."""
    received_ms: float = 0.0
    opponent: str = ""
    table_id: str = ""
    error: str = ""


class Crowd:
    """Channels to both replicas, and the stubs the seekers call."""

    def __init__(self, targets: Sequence[str], channels_per_replica: int) -> None:
        self._channels = [
            [grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS) for _ in range(count)]
            for target, count in ((target, channels_per_replica) for target in targets)
        ]
        self._next = 0

    def _channel(self, replica: int) -> grpc.aio.Channel:
        self._next += 1
        row = self._channels[replica]
        return row[self._next % len(row)]

    async def close(self) -> None:
        for row in self._channels:
            for channel in row:
                await channel.close()

    async def guests(self, count: int, rng: random.Random) -> list[Seeker]:
        """``count`` new guests, half created through each replica, each given a pool of the
        arrivals and a rating in its variant."""
        limit = asyncio.Semaphore(SETUP_CONCURRENCY)

        async def one(index: int) -> Seeker:
            replica = index % REPLICAS
            stub = players_pb2_grpc.PlayersServiceStub(self._channel(replica))
            async with limit:
                created = await stub.CreateGuest(
                    players_pb2.CreateGuestRequest(display_name="Seeker"), timeout=CALL_TIMEOUT
                )
            metadata = (("authorization", f"Bearer {created.player_token}"),)
            return Seeker(
                metadata,
                created.player.player_id,
                replica,
                rng.randrange(len(POOLS)),
                rng.gauss(RATING_MEAN, RATING_SD),
            )

        return list(await asyncio.gather(*(one(index) for index in range(count))))

    async def seek(self, seeker: Seeker, pool: Pool) -> None:
        """Seek until paired (or cancelled), noting the times."""
        stub = matchmaking_pb2_grpc.MatchmakingServiceStub(self._channel(seeker.replica))
        variant, timer, rated = pool
        request = matchmaking_pb2.SeekRequest(
            request_id=os.urandom(12).hex(),
            variant=variant,  # type: ignore[arg-type]
            timer=timer,  # type: ignore[arg-type]
            rated=rated,
        )
        seeker.started_ms = _now_ms()
        seeker.entered_ms = 0.0
        call = stub.Seek(request, metadata=seeker.metadata)
        try:
            async for response in call:
                if response.HasField("waiting") and not seeker.entered_ms:
                    seeker.entered_ms = _now_ms() - response.waiting.waited.ToMilliseconds()
                elif response.HasField("paired"):
                    seeker.received_ms = _now_ms()
                    paired = response.paired
                    seeker.paired_at_ms = paired.table.created_at.ToMilliseconds()
                    seeker.opponent = paired.opponent.player_id
                    seeker.table_id = paired.table.table_id
        except grpc.aio.AioRpcError as error:
            if error.code() is not grpc.StatusCode.CANCELLED:
                seeker.error = f"{error.code().name}: {error.details()}"
        if not seeker.entered_ms:
            seeker.entered_ms = seeker.started_ms


async def _set_ratings(redis: Redis, seekers: Sequence[Seeker]) -> None:
    """Each seeker's settled rating in its pool's variant, where rated games keep it."""
    for start in range(0, len(seekers), 1000):
        async with redis.pipeline(transaction=False) as pipeline:
            for seeker in seekers[start : start + 1000]:
                stored = StoredRating(Rating(seeker.rating, RATING_DEVIATION), 40)
                variant = POOLS[seeker.pool][0]
                pipeline.hset(keys.player(seeker.player_id), rating_field(variant), stored.encode())
            await pipeline.execute()


# -- the phases -----------------------------------------------------------------------------


async def memory_phase(crowd: Crowd, redis: Redis, seekers: Sequence[Seeker]) -> dict[str, Any]:
    """Redis memory while ``seekers`` wait in a pool nobody pairs (its lease held here)."""
    pool_key = keys.seek_pool(*WAITING_POOL)
    lease = keys.seek_pool_lease(pool_key)
    await redis.set(lease, "benchmark", px=600_000)
    await asyncio.sleep(SETTLE_SECONDS)
    before = await _used_memory(redis)
    clients_before = int((await redis.info("clients"))["connected_clients"])
    streams = [asyncio.ensure_future(crowd.seek(seeker, WAITING_POOL)) for seeker in seekers]
    try:
        deadline = time.monotonic() + 120
        while await redis.zcard(pool_key) < len(seekers):
            if time.monotonic() > deadline:
                raise RuntimeError("the waiting seekers never all entered their pool")
            await asyncio.sleep(0.2)
        await asyncio.sleep(SETTLE_SECONDS)
        after = await _used_memory(redis)
        clients_after = int((await redis.info("clients"))["connected_clients"])
        key_bytes = 0
        async with redis.pipeline(transaction=False) as pipeline:
            for seeker in seekers:
                pipeline.memory_usage(keys.seeker(seeker.player_id), samples=0)
            pipeline.memory_usage(pool_key, samples=0)
            pipeline.memory_usage(keys.seek_pool_seekers(pool_key), samples=0)
            key_bytes = sum(int(size or 0) for size in await pipeline.execute())
    finally:
        for stream in streams:
            stream.cancel()
        await asyncio.gather(*streams, return_exceptions=True)
        # The lease goes only once every seek has left: none is paired by a replica.
        deadline = time.monotonic() + 60
        while await redis.zcard(pool_key) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        await redis.delete(lease)
    return {
        "waiting_seekers": len(seekers),
        "used_memory_bytes_per_waiting_seeker": round((after - before) / len(seekers)),
        "key_bytes_per_waiting_seeker": round(key_bytes / len(seekers)),
        "redis_connections": [clients_before, clients_after],
        "note": "used_memory: INFO memory before the seeks and once all waited (their pub/sub "
        "subscriptions, and the replicas' extra Redis connections with their buffers, "
        "included); key bytes: MEMORY USAGE of each seek record and of the pool's sorted set "
        "and waits hash, shared out; redis_connections: connected clients before and while "
        "they waited",
    }


async def arrival_phase(crowd: Crowd, seekers: Sequence[Seeker], drain_seconds: float) -> float:
    """Start each seek at its arrival moment and wait until every one has ended but, in each
    pool, a last seeker left alone (or until ``drain_seconds`` after the last arrival), then
    cancel the rest.  Returns the seconds it took."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    running: dict[asyncio.Future[None], Seeker] = {}
    for seeker in sorted(seekers, key=lambda seeker: seeker.arrival):
        delay = start + seeker.arrival - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        running[asyncio.ensure_future(crowd.seek(seeker, POOLS[seeker.pool]))] = seeker
    deadline = loop.time() + drain_seconds
    while loop.time() < deadline:
        left = [running[future].pool for future in running if not future.done()]
        if all(left.count(pool) <= 1 for pool in range(len(POOLS))):
            break
        await asyncio.sleep(0.1)
    took = loop.time() - start
    for future in running:
        future.cancel()
    await asyncio.gather(*running, return_exceptions=True)
    return took


# -- the figures ----------------------------------------------------------------------------


def _needed_ms(gap: float) -> int:
    """How long the later of two seekers must wait before a rating gap is within both ranges."""
    steps = max(0, -(-(gap - pairing.FIRST_RANGE) // pairing.WIDENING_STEP))
    return min(int(steps) * pairing.WIDENING_EVERY_MS, pairing.ANYONE_AFTER_MS)


def compatible_on_arrival(seekers: Sequence[Seeker]) -> set[str]:
    """The paired seekers who found a compatible seeker waiting in their pool as they entered
    it: within the first range of their rating (the newcomer's range), waiting since before
    (whose range is as wide or wider) and not yet paired."""
    found: set[str] = set()
    for pool in range(len(POOLS)):
        here = sorted((s for s in seekers if s.pool == pool and s.table_id), key=_rating_of)
        ratings = [seeker.rating for seeker in here]
        for seeker in here:
            low = bisect.bisect_left(ratings, seeker.rating - pairing.FIRST_RANGE)
            high = bisect.bisect_right(ratings, seeker.rating + pairing.FIRST_RANGE)
            if any(
                other.entered_ms <= seeker.entered_ms < other.paired_at_ms
                for other in here[low:high]
                if other is not seeker
            ):
                found.add(seeker.player_id)
    return found


def couple_compatible_since(seekers: Sequence[Seeker]) -> dict[str, float]:
    """For each paired seeker, the moment (ms) it and the opponent it was paired with were
    both waiting and each within the other's range: from then on the pairing could pair
    them."""
    by_id = {seeker.player_id: seeker for seeker in seekers}
    since: dict[str, float] = {}
    for seeker in seekers:
        other = by_id.get(seeker.opponent)
        if seeker.table_id and other is not None:
            needed = _needed_ms(abs(other.rating - seeker.rating))
            since[seeker.player_id] = max(seeker.entered_ms, other.entered_ms) + needed
    return since


def _rating_of(seeker: Seeker) -> float:
    return seeker.rating


def _spread(values_ms: Sequence[float]) -> dict[str, Any]:
    return {
        "samples": len(values_ms),
        "p50": round(percentile(values_ms, 0.5), 1),
        "p90": round(percentile(values_ms, 0.9), 1),
        "p99": round(percentile(values_ms, 0.99), 1),
        "max": round(max(values_ms, default=float("nan")), 1),
    }


def analyse(seekers: Sequence[Seeker]) -> dict[str, Any]:
    paired = [seeker for seeker in seekers if seeker.table_id]
    on_arrival = compatible_on_arrival(seekers)
    since = couple_compatible_since(seekers)
    by_id = {seeker.player_id: seeker for seeker in seekers}
    errors: dict[str, int] = {}
    for seeker in seekers:
        if seeker.error:
            errors[seeker.error] = errors.get(seeker.error, 0) + 1

    def seek_to_table(chosen: Sequence[Seeker]) -> dict[str, Any]:
        return _spread([seeker.received_ms - seeker.started_ms for seeker in chosen])

    return {
        "seekers": len(seekers),
        "paired": len(paired),
        "tables": len({seeker.table_id for seeker in paired}),
        "opponents_not_mutual": sum(
            1 for s in paired if by_id.get(s.opponent, s).opponent != s.player_id
        ),
        "errors": errors,
        "seek_to_table_ms": {
            "all": seek_to_table(paired),
            "compatible_seeker_waiting_on_arrival": seek_to_table(
                [s for s in paired if s.player_id in on_arrival]
            ),
            "no_compatible_seeker_on_arrival": seek_to_table(
                [s for s in paired if s.player_id not in on_arrival]
            ),
        },
        "couple_compatible_to_table_ms": _spread(
            [s.received_ms - since[s.player_id] for s in paired if s.player_id in since]
        ),
        "latency_note": "seek to table: from the Seek call to its SeekPaired at the seeker "
        "(a compatible seeker waiting on arrival may be paired with someone closer instead); "
        "couple compatible to table: from the moment the seeker and the opponent it was paired "
        "with were both waiting and within each other's range (goti.tables.pairing's rule, on "
        "the waits the streams report) to the SeekPaired",
    }


def cost_figures(idle: Spent, busy: Spent, pairings: int) -> dict[str, Any]:
    """CPU and Redis commands per pairing, in all and above what the same time idle costs."""
    (idle_seconds, idle_cpu, idle_commands), (seconds, cpu, commands) = idle, busy
    scale, pairings = seconds / idle_seconds, max(pairings, 1)
    cpu_ms = {name: milliseconds(value / pairings) for name, value in cpu.items()}
    cpu_above = {
        name: milliseconds((value - idle_cpu[name] * scale) / pairings)
        for name, value in cpu.items()
    }
    idle_calls = sum(idle_commands.values())
    by_command = sorted(commands.items(), key=lambda item: -item[1])[:10]
    return {
        "measured_seconds": round(seconds, 1),
        "server_cpu_ms_per_pairing": {**cpu_ms, "total": round(sum(cpu_ms.values()), 3)},
        "server_cpu_ms_per_pairing_above_idle": {
            **cpu_above,
            "total": round(sum(cpu_above.values()), 3),
        },
        "redis_commands_per_pairing": round(sum(commands.values()) / pairings, 1),
        "redis_commands_per_pairing_above_idle": round(
            (sum(commands.values()) - idle_calls * scale) / pairings, 1
        ),
        "redis_commands_per_pairing_by_command": {
            name: round(calls / pairings, 2) for name, calls in by_command
        },
        "idle_redis_commands_per_second": round(idle_calls / idle_seconds, 1),
        "cost_note": "per pairing: everything spent from the first arrival until every seek had "
        "ended, the seek streams' own work (entering, waiting, hearing the table) included, "
        "over the pairings (half the seekers); Redis commands as INFO commandstats counts "
        "them, each command a Lua script runs included (evalsha: the script calls)",
    }


# -- the run --------------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    results: dict[str, Any] = {
        **run_record("matchmaking: seekers arriving at random, paired by two tables replicas"),
        "goals": GOALS,
        "setup": {
            "seekers": args.seekers,
            "arrival_seconds": args.seconds,
            "arrivals": "uniformly random moments",
            "pools": "four, untimed: English and Russian, rated and casual (every seeker "
            "rated by the same ratings)",
            "replicas": REPLICAS,
            "ratings": f"normal around {RATING_MEAN:.0f}, sd {RATING_SD:.0f} (deviation "
            f"{RATING_DEVIATION:.0f}: settled), written straight into each player's hash "
            "(rating_<variant>, as rated games leave it): no API sets a rating",
        },
    }
    with tempfile.TemporaryDirectory(prefix="goti-bench-") as folder:
        persistent = not args.no_redis_persistence
        async with Backend(Path(folder), persistent_redis=persistent).running() as backend:
            assert backend.redis is not None
            backend.describe_redis(results["machine"])
            redis = Redis.from_url(backend.redis.url, decode_responses=False)
            crowd = Crowd(backend.tables_targets, CHANNELS_PER_REPLICA)
            try:
                await _measure(args, rng, backend, redis, crowd, results)
            finally:
                await crowd.close()
                await redis.aclose()
    print(finish_description(results["machine"]))
    return results


async def _measure(
    args: argparse.Namespace,
    rng: random.Random,
    backend: Backend,
    redis: Redis,
    crowd: Crowd,
    results: dict[str, Any],
) -> None:
    started = time.monotonic()
    seekers = await crowd.guests(args.seekers, rng)
    await _set_ratings(redis, seekers)
    print(f"{len(seekers)} guests in {time.monotonic() - started:.1f} s", flush=True)
    waiting = seekers[: min(args.waiting, len(seekers))]
    results["redis_memory"] = await memory_phase(crowd, redis, waiting)
    print(f"redis memory: {results['redis_memory']}", flush=True)
    await asyncio.sleep(SETTLE_SECONDS)  # the memory phase's streams wind down

    idle_start = await _spent(backend, redis)
    await asyncio.sleep(IDLE_SECONDS)
    idle = _between(idle_start, await _spent(backend, redis))

    for seeker in seekers:
        seeker.arrival = rng.uniform(0, args.seconds)
    client_cpu = time.process_time()
    busy_start = await _spent(backend, redis)
    took = await arrival_phase(crowd, seekers, args.drain)
    busy = _between(busy_start, await _spent(backend, redis))
    client_cpu = time.process_time() - client_cpu

    figures = analyse(seekers)
    figures.update(cost_figures(idle, busy, figures["paired"] // 2))
    figures["arrivals_and_drain_seconds"] = round(took, 1)
    figures["client_cpu_seconds"] = round(client_cpu, 1)
    results["arrivals"] = figures
    on_arrival = figures["seek_to_table_ms"]["compatible_seeker_waiting_on_arrival"]
    couple = figures["couple_compatible_to_table_ms"]
    results["goals_met"] = {
        name: measured["p99"] < GOALS[name]
        for name, measured in (
            ("seek_to_table_p99_ms_with_a_compatible_seeker_waiting_on_arrival", on_arrival),
            ("couple_compatible_to_table_p99_ms", couple),
        )
    }
    print(json.dumps({key: figures[key] for key in _SHOWN}, indent=1), flush=True)


_SHOWN: Final = (
    "paired",
    "errors",
    "seek_to_table_ms",
    "couple_compatible_to_table_ms",
    "redis_commands_per_pairing",
    "server_cpu_ms_per_pairing",
)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seekers", type=int, default=10_000, help="seekers arriving (10000)")
    parser.add_argument(
        "--seconds", type=float, default=60.0, help="seconds the arrivals spread over (60)"
    )
    parser.add_argument(
        "--drain",
        type=float,
        default=75.0,
        help="most seconds after the last arrival to wait for the last pairings (75)",
    )
    parser.add_argument(
        "--waiting", type=int, default=1000, help="seekers held waiting for the memory (1000)"
    )
    parser.add_argument("--seed", type=int, default=15, help="random seed (15)")
    parser.add_argument(
        "--no-redis-persistence", action="store_true", help="run Redis without its append-only log"
    )
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"figures file ({RESULTS})")
    args = parser.parse_args(argv)
    # uvloop where it is installed: the seekers use less CPU with it.
    write_figures(serving.run(lambda: run(args)), args.output)


if __name__ == "__main__":
    main()
