"""The tables service on a Redis Cluster (``GOTI_REDIS_URL`` a ``redis+cluster://`` URL):
the suite's table tests of creating, joining by code, playing, watching, resuming, retries,
races, timers, computer turns and the lobby, run here as they run on one Redis, on the
shared cluster of three primaries, with the tables spread over sixteen shards placed evenly
over the slots (so over every primary).

The tests are the suite's own, collected again in this module, where the Redis they get is
the cluster's.
"""

from __future__ import annotations

import contextlib

from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot
from redis_topologies import LocalCluster

from goti.api.v1 import tables_pb2, tables_pb2_grpc
from goti.tables.keys import KeySpace

from .conftest import StartReplica, TablesReplica
from .on_cluster import SHARDS, cluster_client, options, redis_url
from .table_calls import CALL_TIMEOUT, eventually, first_legal, new_guest, watching

# The suite's own tests, collected again in this module (so run with its fixtures).
from .test_tables_codes import test_a_spectator_with_only_the_join_link_watches_the_next_move
from .test_tables_commands import (
    test_a_retried_request_is_applied_once,
    test_two_clients_racing_the_same_move_land_it_once,
)
from .test_tables_computer import test_the_computer_moves_first_when_it_starts
from .test_tables_games import test_two_people_play_a_whole_game_online
from .test_tables_lobby import (
    test_open_public_tables_are_listed_newest_first_in_pages,
    test_the_lobby_updates_live,
)
from .test_tables_timers import (
    test_a_table_nobody_joins_is_cleared_away,
    test_a_turn_timer_that_runs_out_plays_a_move,
)
from .test_tables_watch import (
    test_a_move_on_one_replica_reaches_a_watcher_on_another,
    test_a_watcher_resumes_from_every_seq_the_log_holds_with_no_gap_and_no_duplicate,
)

__all__ = [
    "cluster_client",
    "options",
    "redis_url",
    "test_a_move_on_one_replica_reaches_a_watcher_on_another",
    "test_a_retried_request_is_applied_once",
    "test_a_spectator_with_only_the_join_link_watches_the_next_move",
    "test_a_table_nobody_joins_is_cleared_away",
    "test_a_turn_timer_that_runs_out_plays_a_move",
    "test_a_watcher_resumes_from_every_seq_the_log_holds_with_no_gap_and_no_duplicate",
    "test_open_public_tables_are_listed_newest_first_in_pages",
    "test_the_computer_moves_first_when_it_starts",
    "test_the_lobby_updates_live",
    "test_two_clients_racing_the_same_move_land_it_once",
    "test_two_people_play_a_whole_game_online",
]


async def test_tables_spread_over_every_primary_and_each_one_plays(
    replica: TablesReplica,
    start_replica: StartReplica,
    redis: RedisCluster,
    redis_cluster: LocalCluster,
    keyspace: KeySpace,
) -> None:
    """Tables land in every shard's slot, so on every primary; each one is listed in the
    lobby, joined by its code, and its first move reaches a watcher on another replica, whose
    watchers of every table share one pub/sub connection a primary."""
    watcher_replica = await start_replica()
    ann = await new_guest(replica.channel, "Ann")
    bob = await new_guest(replica.channel, "Bob")
    public = tables_pb2.VISIBILITY_PUBLIC
    first = tables_pb2.STARTING_PLAYER_PLAYER_1
    tables = [
        (await ann.create(visibility=public, starting_player=first)).table
        for _ in range(3 * SHARDS)
    ]
    shards = {keyspace.shard_of(table.table_id).index for table in tables}
    assert len(shards) >= SHARDS // 2, "table ids spread over the shards"
    primaries = redis_cluster.primaries()
    serving = {
        node.port
        for table in tables
        if (node := redis.get_node_from_key(keyspace.table(table.table_id).state)) is not None
    }
    assert serving == {primary.port for primary in primaries}
    for table in tables:
        kept = keyspace.table(table.table_id)
        slots = {key_slot(key.encode()) for key in (kept.state, kept.shard.lobby)}
        slots.add(key_slot(keyspace.code(table.code).encode()))
        assert len(slots) == 1, "a table, its code and its shard's indexes share a slot"

    stub = tables_pb2_grpc.TablesServiceStub(replica.channel)
    listed = await stub.ListTables(tables_pb2.ListTablesRequest(), timeout=CALL_TIMEOUT)
    assert [each.table_id for each in listed.tables] == [
        table.table_id for table in reversed(tables)
    ]
    async with contextlib.AsyncExitStack() as stack:
        watches = [
            await stack.enter_async_context(watching(watcher_replica.channel, table.table_id))
            for table in tables
        ]
        await eventually(lambda: all(watch.messages for watch in watches))
        # Sharded pub/sub: the watching replica holds one connection to each primary.
        for primary in primaries:
            subscribers = primary.ask("CLIENT", "LIST", "TYPE", "pubsub")
            assert isinstance(subscribers, str)
            assert len(subscribers.splitlines()) == 1, primary
        for table, watch in zip(tables, watches, strict=True):
            joined = await bob.join(table.code)
            played = await ann.play(table.table_id, first_legal(joined.table.game.turn), 1)
            await watch.until_seq(played.events[-1].seq)
            assert watch.events[-1] == played.events[-1]
    after = await stub.ListTables(tables_pb2.ListTablesRequest(), timeout=CALL_TIMEOUT)
    assert not after.tables
