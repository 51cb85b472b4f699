"""Play online now and ratings on a Redis Cluster, where a pairing, a seek entering or
leaving its pool and a rated game's count are steps of one slot each: the suite's seek and
rating tests, run here as on one Redis, and the pairings a pairer left half-done (stopped
between its steps), settled by the seekers' own streams: both paired, or both let go.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

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
from .table_calls import new_guest

# The suite's own tests, collected again in this module (so run with its fixtures).
from .test_ratings import (
    replicas_options,
    test_a_rated_game_counts_once_in_both_ratings_and_shows_everywhere,
    test_a_rated_game_puts_settled_players_on_the_board_and_keeps_provisional_off,
    test_a_replica_that_stops_at_the_games_end_leaves_it_to_the_timers_once,
)
from .test_seeking import (
    ENGLISH_UNTIMED,
    first_move_reaches_the_other,
    seeking,
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
    # No pairing runs by itself while the stopped pairer's work sits in the seekers' records.
    quiet = await start_replica(options=replace(options, pairing_poll_seconds=3600.0))
    ann = await new_guest(quiet.channel, "Ann")
    bob = await new_guest(quiet.channel, "Bob")
    game = await _a_new_game(quiet)
    pairer = StoppedPairer(redis, keyspace)
    table_id = f"{STOPPED_PAIRER}-{int(table_written)}"
    async with seeking(ann, quiet.channel) as a, seeking(bob, quiet.channel) as b:
        await until_waiting(a)
        await until_waiting(b)
        until_ms = clock_ms() + HOLD_MS // 5
        await pairer.hold(ann.player_id, bob.player_id, table_id, until_ms=until_ms)
        await pairer.hold(bob.player_id, ann.player_id, table_id, until_ms=until_ms)
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


async def _until_let_go(redis: RedisCluster, player_id: str, timeout: float = 30.0) -> None:
    """Wait until no pairing holds the player's seek (its stream settled the hold)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while await redis.hget(keys.seeker(player_id), "reserved") is not None:
        assert loop.time() < deadline, "the hold was never settled"
        await asyncio.sleep(0.02)
