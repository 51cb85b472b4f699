"""Play online now and ratings on a Redis Cluster, where a pairing, a seek entering or
leaving its pool and a rated game's count are steps of one slot each: the suite's seek and
rating tests, run here as on one Redis, and the pairings a pairer left half-done (stopped
between its steps), settled by the seekers' own streams: both paired, or both let go.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from redis.asyncio.cluster import RedisCluster

from goti.api.v1 import tables_pb2
from goti.tables import keys, seating
from goti.tables.keys import KeySpace
from goti.tables.options import TablesOptions
from goti.tables.pool_steps import HOLD_MS
from goti.tables.redis_calls import lua_script
from goti.tables.runtime import clock_ms

from .conftest import StartReplica, TablesReplica
from .on_cluster import cluster_client, options, redis_url
from .table_calls import Guest, eventually, new_guest, until_read

# The suite's own tests, collected again in this module (so run with its fixtures).
from .test_ratings import (
    replicas_options,
    test_a_rated_game_counts_once_in_both_ratings_and_shows_everywhere,
    test_a_rated_game_puts_settled_players_on_the_board_and_keeps_provisional_off,
    test_a_replica_that_stops_at_the_games_end_leaves_it_to_the_timers_once,
)
from .test_seeking import (
    ENGLISH_UNTIMED,
    cancel_seek,
    first_move_reaches_the_other,
    seeking,
    test_a_cancel_that_comes_after_the_pairing_answers_with_the_table,
    test_a_cancelled_seek_is_out_when_the_cancel_answers_and_the_next_seek_pairs,
    test_a_cancelled_seek_leaves_the_pool_and_resumes_with_its_wait,
    test_a_player_at_an_unfinished_paired_table_is_told_so,
    test_a_second_seek_is_refused_while_the_first_waits,
    test_a_seek_resumed_while_its_old_stream_is_open_goes_on_in_the_new_one,
    test_two_seekers_on_two_replicas_are_paired_within_a_second_and_play,
    until_paired,
    until_waiting,
)

__all__ = [
    "cluster_client",
    "options",
    "redis_url",
    "replicas_options",
    "test_a_cancel_that_comes_after_the_pairing_answers_with_the_table",
    "test_a_cancelled_seek_is_out_when_the_cancel_answers_and_the_next_seek_pairs",
    "test_a_cancelled_seek_leaves_the_pool_and_resumes_with_its_wait",
    "test_a_player_at_an_unfinished_paired_table_is_told_so",
    "test_a_rated_game_counts_once_in_both_ratings_and_shows_everywhere",
    "test_a_rated_game_puts_settled_players_on_the_board_and_keeps_provisional_off",
    "test_a_replica_that_stops_at_the_games_end_leaves_it_to_the_timers_once",
    "test_a_second_seek_is_refused_while_the_first_waits",
    "test_a_seek_resumed_while_its_old_stream_is_open_goes_on_in_the_new_one",
    "test_two_seekers_on_two_replicas_are_paired_within_a_second_and_play",
]

STOPPED_PAIRER = "stopped-pairer"
KEPT_MS = 10_000


class StoppedPairer:
    """The steps of a pairing as a pairer that stops midway leaves them, taken by hand."""

    def __init__(self, redis: RedisCluster, keyspace: KeySpace) -> None:
        self.keys = keyspace
        self._reserve = redis.register_script(lua_script("reserve"))
        self._pair_table = redis.register_script(lua_script("pair_table", using=["new_table"]))

    async def hold(self, player_id: str, opponent: str, table_id: str, *, until_ms: int) -> None:
        """Step 1 for one seeker, held until ``until_ms``."""
        reply = await self._reserve(
            keys=[keys.seeker(player_id)],
            args=[
                self.keys.pool(ENGLISH_UNTIMED),
                clock_ms(),
                table_id,
                until_ms,
                opponent,
                10_000,
            ],
        )
        assert reply[0] == b"ok", reply

    async def hold_both(self, first: str, second: str, table_id: str) -> None:
        """Step 1 for both seekers, held for a fifth of a pairing's usual hold."""
        until_ms = clock_ms() + HOLD_MS // 5
        await self.hold(first, second, table_id, until_ms=until_ms)
        await self.hold(second, first, table_id, until_ms=until_ms)

    async def write_table(self, table_id: str, seated: tuple[str, str], game: bytes) -> bytes:
        """Step 2: the table, Black and White seated, as the pairing writes it."""
        record = tables_pb2.Table(status=tables_pb2.TABLE_STATUS_PLAYING)
        record.code = self.keys.code_for(table_id, seating.new_code)
        for seat, color, player_id in zip(
            (record.black, record.white), seating.COLORS[::-1], seated, strict=True
        ):
            seat.color = color
            seat.player.player_id = player_id
        kept = self.keys.table(table_id)
        outcome = await self._pair_table(
            keys=[
                kept.state,
                self.keys.code(record.code),
                kept.log,
                kept.requests,
                kept.shard.timers,
                kept.void,
            ],
            args=[table_id, 3600, "", "table", record.SerializeToString(), "game", game],
        )
        return bytes(outcome)


async def _a_new_game(replica: TablesReplica) -> bytes:
    """A new English game's state, as a table keeps it."""
    guest = await new_guest(replica.channel)
    created = await guest.create(opponent=tables_pb2.OPPONENT_PASS_AND_PLAY)
    return (await replica.runtime.store.load(created.table.table_id)).fields["game"]


@dataclass(frozen=True)
class StoppedPairing:
    """A replica that pairs only when told, two seekers for it, a pairer to stop midway, and
    the game their table would start with."""

    replica: TablesReplica
    seekers: tuple[Guest, Guest]
    pairer: StoppedPairer
    game: bytes


async def _a_stopped_pairing(
    start_replica: StartReplica, options: TablesOptions, redis: RedisCluster, keyspace: KeySpace
) -> StoppedPairing:
    # No pairing runs by itself while the stopped pairer's work sits in the seekers' records.
    quiet = await start_replica(options=options)
    await quiet.runtime.pairing.stop()
    seekers = (await new_guest(quiet.channel, "Ann"), await new_guest(quiet.channel, "Bob"))
    game = await _a_new_game(quiet)
    return StoppedPairing(quiet, seekers, StoppedPairer(redis, keyspace), game)


@pytest.mark.parametrize("table_written", [True, False], ids=["table-written", "table-not-written"])
async def test_a_pairing_stopped_between_its_steps_is_settled_by_the_seekers_streams(
    start_replica: StartReplica,
    options: TablesOptions,
    redis: RedisCluster,
    keyspace: KeySpace,
    table_written: bool,
) -> None:
    """A pairer held both seekers (and wrote their table, or not) and stopped.  Once the
    hold's time is past, the seekers' own streams settle it: both are paired at the table
    and play it, or both are let go, the table id made void, and they pair again."""
    table_id = f"{STOPPED_PAIRER}-{int(table_written)}"
    stopped = await _a_stopped_pairing(start_replica, options, redis, keyspace)
    quiet, pairer, game, (ann, bob) = stopped.replica, stopped.pairer, stopped.game, stopped.seekers
    async with seeking(ann, quiet.channel) as a, seeking(bob, quiet.channel) as b:
        await until_waiting(a)
        await until_waiting(b)
        await pairer.hold_both(ann.player_id, bob.player_id, table_id)
        if not table_written:
            # Let go: both wait on, held by nobody, and the late pairer cannot write the
            # table any more; a pairing that runs now pairs them elsewhere.
            for seeker in (ann, bob):
                await _until_let_go(redis, seeker.player_id)
            written = await pairer.write_table(table_id, (ann.player_id, bob.player_id), game)
            assert written == b"exists"
            assert not a.ended.is_set() and not b.ended.is_set()
            await quiet.runtime.pairing.pair_round()
        else:
            written = await pairer.write_table(table_id, (ann.player_id, bob.player_id), game)
            assert written == b"ok"
        await until_paired(a, b)
    assert a.paired is not None and b.paired is not None
    assert a.paired.table.table_id == b.paired.table.table_id
    assert (a.paired.table.table_id == table_id) is table_written
    assert a.paired.opponent.player_id == bob.player_id
    assert b.paired.opponent.player_id == ann.player_id
    assert await redis.zcard(keyspace.pool(ENGLISH_UNTIMED)) == 0
    await first_move_reaches_the_other(a.paired, (ann, quiet.channel), (bob, quiet.channel))


@pytest.mark.parametrize("table_written", [True, False], ids=["table-written", "table-not-written"])
async def test_a_cancel_during_a_stopped_pairing_answers_once_the_pairing_is_settled(
    start_replica: StartReplica,
    options: TablesOptions,
    redis: RedisCluster,
    keyspace: KeySpace,
    table_written: bool,
) -> None:
    """A pairer held both seekers (and wrote their table, or not) and stopped; the seeker
    cancels meanwhile.  The cancel answers only once the hold is settled: with the table
    (then both play it), or with the seek out of its pool (then the other seeker, let go,
    pairs with the next one and plays)."""
    table_id = f"{STOPPED_PAIRER}-cancel-{int(table_written)}"
    stopped = await _a_stopped_pairing(start_replica, options, redis, keyspace)
    quiet, pairer, game, (ann, bob) = stopped.replica, stopped.pairer, stopped.game, stopped.seekers
    async with seeking(ann, quiet.channel) as a, seeking(bob, quiet.channel) as b:
        await until_waiting(a)
        await until_waiting(b)
        await pairer.hold_both(ann.player_id, bob.player_id, table_id)
        if table_written:
            written = await pairer.write_table(table_id, (ann.player_id, bob.player_id), game)
            assert written == b"ok"
        answer = await cancel_seek(ann, quiet.channel, a.request_id)
        assert await redis.hget(keys.seeker(ann.player_id), "reserved") is None
        if table_written:
            assert answer.paired.table.table_id == table_id
            await until_paired(b)
            assert b.paired is not None and b.paired.table.table_id == table_id
            await first_move_reaches_the_other(
                answer.paired, (ann, quiet.channel), (bob, quiet.channel)
            )
            return
        assert not answer.HasField("paired")
        assert await redis.zscore(keyspace.pool(ENGLISH_UNTIMED), ann.player_id) is None
        await eventually(a.ended.is_set)
        cat = await new_guest(quiet.channel, "Cat")
        async with seeking(cat, quiet.channel) as c:
            await until_waiting(c)
            await _until_let_go(redis, bob.player_id)
            await quiet.runtime.pairing.pair_round()
            await until_paired(b, c)
    assert b.paired is not None and b.paired.opponent.player_id == cat.player_id
    assert a.paired is None and a.status.reason == "SEEK_CANCELLED"
    await first_move_reaches_the_other(b.paired, (bob, quiet.channel), (cat, quiet.channel))


async def _until_let_go(redis: RedisCluster, player_id: str, timeout: float = 30.0) -> None:
    """Wait until no pairing holds the player's seek (its stream settled the hold)."""
    await until_read(
        lambda: redis.hget(keys.seeker(player_id), "reserved"),
        lambda reserved: reserved is None,
        timeout=timeout,
        what="the hold was never settled",
    )
