"""Redis failing while seekers are paired, on real Redis and real tables replicas: killed
(SIGKILL) and restarted from its append-only file; its connection cut after a pairing script
ran and before its answer was read; out of memory as a pairing script runs.  At every moment
looked at, and once Redis is back, each seeker is either in its pool (its seek goes on, the
SDK reopening it, and ends paired) or at exactly one table with exactly one opponent who
sees the same table, never both and never neither; then each pair plays a first move and the
other side sees it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import random
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, replace

import pytest
from redis import exceptions as redis_errors
from redis.asyncio import Redis
from redis_reply_cutter import ReplyCutter

import goti_client
from goti.api.v1 import game_pb2, matchmaking_pb2, tables_pb2
from goti.ratings import Rating
from goti.redis_server import RedisServer
from goti.rules import ENGLISH
from goti.tables import keys
from goti.tables.background import cancel_and_wait
from goti.tables.options import TablesOptions
from goti.tables.rated_games import StoredRating, rating_field
from goti.tables.redis_calls import StoreUnavailableError, lua_script
from goti_client import GotiClient, GotiError, MovePlayed, Seek, SeekPaired, Snapshot

from .conftest import StartReplica, TablesReplica
from .table_calls import eventually, redis_contents

WAIT_SECONDS = 30.0
"""Generous: the machine running the tests may be busy."""
POOL = keys.seek_pool(game_pb2.VARIANT_ENGLISH, matchmaking_pb2.SEEK_TIMER_NONE, False)
SEEKERS = 40
RATING_GROUPS = (1100.0, 1400.0, 1700.0, 2000.0)
"""Mixed ratings: within a group everyone accepts everyone at once (80 points apart at most),
so that every seeker finds an opponent well inside the test's time."""
PAIR_SCRIPT_SHA = hashlib.sha1(lua_script("pair", using=["new_table"]).encode()).hexdigest()
"""What a replica's EVALSHA of the pairing script carries."""

# One atomic look at everything a pairing writes, so that a moment between two pairings is
# never mistaken for half of one.
SNAPSHOT_SCRIPT = """
-- KEYS: 1 the pool, 2 its seekers' waits, then each seeker's seek record and paired table
-- ARGV: 1 the pattern of the tables' state keys, 2 .. the seekers' ids
local tables = {}
for _, key in ipairs(redis.call('KEYS', ARGV[1])) do
  tables[#tables + 1] = {key, redis.call('HGET', key, 'table') or ''}
end
local seekers = {}
for i = 2, #ARGV do
  local record = redis.call('HMGET', KEYS[2 * i - 1], 'state', 'table')
  local paired = redis.call('HGET', KEYS[2 * i], 'table')
  local in_pool = 0
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then in_pool = 1 end
  seekers[#seekers + 1] = {record[1] or '', record[2] or '', paired or '', in_pool,
                           redis.call('HEXISTS', KEYS[2], ARGV[i])}
end
return {tables, seekers}
"""


@pytest.fixture
def options(options: TablesOptions) -> TablesOptions:
    """A resume window long enough for Redis to restart and the seeks to reopen on a busy
    machine."""
    return replace(options, seek_resume_seconds=30)


@dataclass
class Seeker:
    """A player seeking through the SDK (English, no timer, casual), followed in the
    background once started."""

    client: GotiClient
    player_id: str
    seek: Seek | None = None
    waiting: int = 0
    paired: SeekPaired | None = None
    error: GotiError | None = None
    ended: bool = False

    def start(self) -> asyncio.Task[None]:
        self.seek = self.client.seek(ENGLISH)
        return asyncio.create_task(self._follow(self.seek))

    async def _follow(self, seek: Seek) -> None:
        try:
            async for progress in seek:
                if isinstance(progress, SeekPaired):
                    self.paired = progress
                else:
                    self.waiting += 1
        except GotiError as error:
            self.error = error
        finally:
            self.ended = True

    @property
    def reconnects(self) -> int:
        return 0 if self.seek is None else self.seek.reconnects


async def until(check: Callable[[], bool], what: str, timeout: float = WAIT_SECONDS) -> None:
    await eventually(check, timeout, what=f"timed out waiting for {what}")


async def new_seeker(
    stack: contextlib.AsyncExitStack, replica: TablesReplica, redis: Redis, rating: float
) -> Seeker:
    """A new guest on ``replica`` with a settled English rating, as rated games leave it."""
    client = await goti_client.connect(replica.target, timeout=WAIT_SECONDS)
    stack.push_async_callback(client.close)
    assert client.player is not None
    player_id = client.player.player_id
    stored = StoredRating(Rating(rating=rating, deviation=80.0), 30)
    await redis.hset(
        keys.player(player_id), rating_field(game_pb2.VARIANT_ENGLISH), stored.encode()
    )
    return Seeker(client, player_id)


@dataclass(frozen=True)
class SeekerState:
    """What Redis holds of one seeker's seek at one moment."""

    record: str
    """The seek record's state ('' once it is gone)."""
    record_table: str
    paired_table: str
    """The table the player's last seek paired them at ('' for none)."""
    in_pool: bool
    in_waits: bool


@dataclass(frozen=True)
class PoolSnapshot:
    """Every table and every seeker's seek, read at one moment."""

    tables: dict[str, tables_pb2.Table]
    """By id (the stored record leaves its id to the key)."""
    seekers: dict[str, SeekerState]

    def seated(self) -> dict[str, list[str]]:
        """The tables each player sits at."""
        at: dict[str, list[str]] = {}
        for table_id, table in self.tables.items():
            for seat in (table.white, table.black):
                at.setdefault(seat.player.player_id, []).append(table_id)
        return at

    def violations(self) -> list[str]:
        """Whatever breaks "in its pool or at one table with its opponent"."""
        found = [
            f"table {table_id} seats {table.white.player.player_id!r} and "
            f"{table.black.player.player_id!r}"
            for table_id, table in self.tables.items()
            if not (table.white.player.player_id and table.black.player.player_id)
            or table.white.player.player_id == table.black.player.player_id
        ]
        seated = self.seated()
        for player_id, state in self.seekers.items():
            problems = seeker_problems(state, seated.get(player_id, []))
            found.extend(f"{player_id}: {problem}" for problem in problems)
        return found


def table_id_of(state_key: bytes) -> str:
    """The id in a table's state key."""
    prefix, suffix = keys.table_state("\0").split("\0")
    name = state_key.decode()
    assert name.startswith(prefix) and name.endswith(suffix), name
    return name[len(prefix) : -len(suffix)]


def seeker_problems(state: SeekerState, at: Sequence[str]) -> list[str]:
    """What is wrong with one seeker's state, seated at the tables ``at``."""
    if len(at) > 1:
        return [f"at {len(at)} tables {list(at)}"]
    if state.in_pool != state.in_waits:
        return [f"half in its pool (sorted set {state.in_pool}, waits {state.in_waits})"]
    if not at:
        problems = []
        if state.record == "paired" or state.paired_table:
            problems.append(f"paired at {state.record_table or state.paired_table}, no table")
        if state.record == "waiting" and not state.in_pool:
            problems.append("waiting outside its pool, where no pairing can find it")
        return problems
    (table_id,) = at
    problems = []
    if state.in_pool:
        problems.append(f"in its pool and at table {table_id}")
    # The record goes once kept long enough; the pairing never leaves it waiting.
    if state.record not in ("paired", "") or state.record_table not in (table_id, ""):
        problems.append(f"at {table_id} with its seek {state.record} at {state.record_table!r}")
    if state.paired_table != table_id:
        problems.append(f"at {table_id}, its last pairing says {state.paired_table!r}")
    return problems


class PoolLooker:
    """Reads :class:`PoolSnapshot` s of the seekers ``player_ids``; :meth:`watch` does so
    over and over in the background, noting every violation seen."""

    def __init__(self, redis: Redis, player_ids: Sequence[str]) -> None:
        self._script = redis.register_script(SNAPSHOT_SCRIPT)
        self._player_ids = list(player_ids)
        self.looks = 0
        self.violations: list[str] = []

    async def snapshot(self) -> PoolSnapshot:
        record_keys = [
            key
            for player_id in self._player_ids
            for key in (keys.seeker(player_id), keys.paired_table(player_id))
        ]
        tables, seekers = await self._script(
            keys=[POOL, keys.seek_pool_seekers(POOL), *record_keys],
            args=[keys.table_state("*"), *self._player_ids],
        )
        return PoolSnapshot(
            {table_id_of(key): tables_pb2.Table.FromString(blob) for key, blob in tables},
            {
                player_id: SeekerState(
                    record.decode(), table.decode(), paired.decode(), bool(pool), bool(waits)
                )
                for player_id, (record, table, paired, pool, waits) in zip(
                    self._player_ids, seekers, strict=True
                )
            },
        )

    @contextlib.asynccontextmanager
    async def watch(self) -> AsyncIterator[None]:
        async def look() -> None:
            while True:
                try:
                    snapshot = await self.snapshot()
                except (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError):
                    # Redis is down or loading: nothing to see until it is back.
                    await asyncio.sleep(0.05)
                    continue
                self.looks += 1
                self.violations.extend(snapshot.violations())
                await asyncio.sleep(0.03)

        looking = asyncio.create_task(look())
        try:
            yield
        finally:
            await cancel_and_wait([looking])


async def kept_alive_until_ms(redis: Redis, seekers: Sequence[Seeker]) -> int:
    """The latest time (ms) until which the seekers' streams have kept their seeks alive."""
    async with redis.pipeline(transaction=False) as pipeline:
        for seeker in seekers:
            pipeline.hget(keys.seeker(seeker.player_id), "alive")
        marks = await pipeline.execute()
    return max((int(mark) for mark in marks if mark), default=0)


async def fsync_every_write(redis: Redis) -> None:
    """Append-only, flushed to disk before each answer: a write anyone heard of survives
    SIGKILL (the RedisServer's own config flushes once a second).  Tried again while the
    client's connections still lead to a Redis killed since."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_SECONDS
    while True:
        try:
            await redis.config_set("appendfsync", "always")
            break
        except redis_errors.ConnectionError:
            assert loop.time() < deadline, "Redis did not come back"
            await asyncio.sleep(0.05)
    assert await redis.config_get("appendonly") == {"appendonly": "yes"}


async def first_move_seen_by_the_other(first: Seeker, second: Seeker) -> None:
    """The player to move at the pair's table plays; the other, watching through their own
    replica, sees that move."""
    assert first.paired is not None and second.paired is not None
    table = first.paired.table
    turn = table.game.turn
    assert turn is not None
    mover, other = (first, second) if table.role.holds(turn.side) else (second, first)
    watch = other.client.watch(table.table_id, after_seq=table.seq)
    try:
        played = await mover.client.play(table.table_id, turn.legal_moves[0])
        assert isinstance(played[0], MovePlayed)
        notation = played[0].record.notation

        async def seen() -> None:
            async for update in watch:
                # A watch from seq 0 starts with a snapshot, which may hold the move already.
                if isinstance(update, Snapshot) and notation in update.table.game.moves:
                    return
                if isinstance(update, MovePlayed):
                    assert update.move == turn.legal_moves[0]
                    return
            raise AssertionError("the watch ended")

        await asyncio.wait_for(seen(), WAIT_SECONDS)
    finally:
        await watch.aclose()


def check_paired(seekers: Sequence[Seeker], snapshot: PoolSnapshot) -> dict[str, list[Seeker]]:
    """Every seeker told of one table, shared with the opponent it was told of, as Redis has
    it; returns the seekers by table."""
    by_player = {seeker.player_id: seeker for seeker in seekers}
    by_table: dict[str, list[Seeker]] = {}
    for seeker in seekers:
        assert seeker.paired is not None, f"{seeker.player_id} not paired: {seeker.error!r}"
        opponent = by_player[seeker.paired.opponent.player_id]
        assert opponent is not seeker and opponent.paired is not None
        assert opponent.paired.table.table_id == seeker.paired.table.table_id
        assert opponent.paired.opponent.player_id == seeker.player_id
        assert opponent.paired.table.role != seeker.paired.table.role
        by_table.setdefault(seeker.paired.table.table_id, []).append(seeker)
    assert all(len(pair) == 2 for pair in by_table.values())
    assert not snapshot.violations()
    seated = snapshot.seated()
    assert set(snapshot.tables) == set(by_table)
    for seeker in seekers:
        assert seeker.paired is not None
        assert seated[seeker.player_id] == [seeker.paired.table.table_id]
        assert not snapshot.seekers[seeker.player_id].in_pool
    return by_table


async def test_redis_killed_mid_pairing_leaves_each_seeker_in_its_pool_or_at_one_table(
    start_replica: StartReplica, private_redis: RedisServer
) -> None:
    """SIGKILL while forty seekers of mixed ratings arrive on two replicas and are paired;
    Redis restarted from its append-only file on the same port and folder."""
    rng = random.Random(15)
    async with contextlib.AsyncExitStack() as stack:
        redis = Redis.from_url(private_redis.url)
        stack.push_async_callback(redis.aclose)
        await fsync_every_write(redis)
        replicas = [await start_replica(redis_url=private_redis.url) for _ in range(2)]
        seekers = [
            await new_seeker(
                stack,
                replicas[index % 2],
                redis,
                RATING_GROUPS[index % len(RATING_GROUPS)] + rng.uniform(-40, 40),
            )
            for index in range(SEEKERS)
        ]
        looker = PoolLooker(redis, [seeker.player_id for seeker in seekers])
        following: list[asyncio.Task[None]] = []

        async def arrive() -> None:
            for seeker in rng.sample(seekers, len(seekers)):
                following.append(seeker.start())
                await asyncio.sleep(rng.uniform(0, 0.05))  # arrivals spread over a second

        async with looker.watch():
            arrivals = asyncio.create_task(arrive())
            await until(
                lambda: sum(seeker.paired is not None for seeker in seekers) >= 6,
                "the first pairings",
            )
            waiting = [seeker for seeker in seekers if seeker.seek and not seeker.paired]
            alive_until_ms = await kept_alive_until_ms(redis, waiting)
            await asyncio.to_thread(private_redis.kill)
            try:
                # Down until seeks have found Redis gone (streams broken, being reopened) and
                # the waiting seeks' keep-alive marks have run out: the pairing that meets
                # them once Redis is back takes them out of the pool, unless their SDK has
                # resumed them first.
                await until(
                    lambda: (
                        sum(seeker.reconnects for seeker in seekers) >= 3
                        and time.time() * 1000 > alive_until_ms
                    ),
                    "the seeks to find Redis gone",
                )
            finally:
                await private_redis.astart()
            await fsync_every_write(redis)
            await arrivals
            await until(
                lambda: all(seeker.ended for seeker in seekers) or bool(looker.violations),
                "every pairing",
                90,
            )
        assert not looker.violations, looker.violations[:5]
        await asyncio.gather(*following)
        assert looker.looks > 10
        by_table = check_paired(seekers, await looker.snapshot())
        assert len(by_table) == SEEKERS // 2
        assert await redis.zcard(POOL) == 0
        await asyncio.gather(*(first_move_seen_by_the_other(*pair) for pair in by_table.values()))


async def test_a_pairing_whose_answer_is_cut_off_still_seats_both_and_they_play(
    start_replica: StartReplica, redis: Redis, redis_url: str
) -> None:
    """The replicas' connection to Redis is cut after the pairing script has written the
    table and before the pairer reads its 'ok': both seeks learn of the table from their
    records, and no second table is made."""
    async with contextlib.AsyncExitStack() as stack:
        cutter = ReplyCutter(redis_url, marker=PAIR_SCRIPT_SHA.encode(), reply=b"$2\r\nok\r\n")
        through_cutter = await cutter.start()
        stack.push_async_callback(cutter.stop)
        replicas = [await start_replica(redis_url=through_cutter) for _ in range(2)]
        ann = await new_seeker(stack, replicas[0], redis, 1500.0)
        bob = await new_seeker(stack, replicas[1], redis, 1520.0)
        following = [ann.start(), bob.start()]
        await until(lambda: ann.ended and bob.ended, "both seeks to end")
        await asyncio.gather(*following)
        assert cutter.cut.is_set(), "no pairing's answer was cut off"
        looker = PoolLooker(redis, [ann.player_id, bob.player_id])
        by_table = check_paired([ann, bob], await looker.snapshot())
        assert len(by_table) == 1
        await first_move_seen_by_the_other(ann, bob)


async def test_a_pairing_refused_for_want_of_memory_writes_nothing_then_pairs_and_they_play(
    start_replica: StartReplica, private_redis: RedisServer, options: TablesOptions
) -> None:
    """Redis at its maxmemory (noeviction) refuses the pairing script at its first write,
    before anything is written (Redis fails a script on OOM only while it has written
    nothing); once memory is back the same pairing goes through and the game is played."""
    # Seek streams that stay quiet (woken only by their pairing) and pairing driven by the
    # test (the replicas' own pairing stopped), so that only the pairing script touches
    # Redis while memory is short.
    quiet = replace(options, seek_poll_seconds=30.0, pairing_lease_seconds=60.0)
    async with contextlib.AsyncExitStack() as stack:
        redis = Redis.from_url(private_redis.url)
        stack.push_async_callback(redis.aclose)
        replicas = [
            await start_replica(redis_url=private_redis.url, options=quiet) for _ in range(2)
        ]
        for replica in replicas:
            await replica.runtime.pairing.stop()
        pairer = replicas[0].runtime.pairing
        ann = await new_seeker(stack, replicas[0], redis, 1500.0)
        bob = await new_seeker(stack, replicas[1], redis, 1520.0)
        following = [ann.start()]
        await until(lambda: ann.waiting > 0, "Ann to wait")
        await pairer.pair_round()  # alone in the pool: takes its lease
        following.append(bob.start())
        await until(lambda: bob.waiting > 0, "Bob to wait")
        before = await redis_contents(redis)
        await redis.config_set("maxmemory-policy", "noeviction")
        await redis.config_set("maxmemory", 1)
        try:
            with pytest.raises(StoreUnavailableError, match="maxmemory"):
                await pairer.pair_round()
            assert await redis_contents(redis) == before
        finally:
            await redis.config_set("maxmemory", 0)
        looker = PoolLooker(redis, [ann.player_id, bob.player_id])
        waiting = await looker.snapshot()
        assert not waiting.tables and not waiting.violations()
        assert all(state.in_pool for state in waiting.seekers.values())
        assert ann.paired is None and bob.paired is None
        await pairer.pair_round()
        await until(lambda: ann.ended and bob.ended, "both seeks to end")
        await asyncio.gather(*following)
        check_paired([ann, bob], await looker.snapshot())
        await first_move_seen_by_the_other(ann, bob)
