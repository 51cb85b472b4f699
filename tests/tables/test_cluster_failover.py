"""A Redis Cluster failing over under games: a primary killed mid-game, its replica promoted
by the cluster, and the games go on.  With ``GOTI_REDIS_WAIT_REPLICAS=1`` a move is answered
once the replica of its table's primary holds it, so none a player was told of is lost; the
watchers, on another tables replica, resume; a table on a primary that lives plays on."""

from __future__ import annotations

import asyncio
import dataclasses
import logging

import pytest
from redis.asyncio.cluster import RedisCluster
from redis_topologies import LocalCluster, RedisProcess

from goti.api.v1 import game_pb2, tables_pb2
from goti.tables.durability import ReplicaWait
from goti.tables.keys import KeySpace
from goti.tables.options import TablesOptions

from .conftest import StartReplica, TablesReplica
from .on_cluster import SHARDS, cluster_url
from .table_calls import eventually, first_legal, new_guest, resuming, watching
from .test_tables_failover import FAILOVER_SECONDS, _Game, _moves_by_seq, playing_through

# While a node fails over, redis-py's cluster pub/sub may make one node's connection again
# from two tasks at once (the fan-out reading it, and redis-py moving its channels after the
# slots are read again); the socket of the connect that lost the race is dropped unclosed, and
# closed by the garbage collector.  Nothing is lost; the warning is that library's.
pytestmark = pytest.mark.filterwarnings("ignore:unclosed <StreamWriter:ResourceWarning")


def _primary_of(cluster: LocalCluster, client: RedisCluster, key: str) -> RedisProcess:
    node = client.get_node_from_key(key)
    assert node is not None
    return next(each for each in cluster.running_nodes if each.port == node.port)


async def _game_on(
    replica: TablesReplica, keyspace: KeySpace, client: RedisCluster, cluster: LocalCluster
) -> tuple[_Game, RedisProcess]:
    """A game between two people, and the primary that holds its table."""
    game = await _Game.start(replica)
    return game, _primary_of(cluster, client, keyspace.table(game.table_id).state)


@pytest.fixture
def cluster_options(options: TablesOptions) -> TablesOptions:
    """Sixteen shards; every change waits for the replica of its primary."""
    return dataclasses.replace(
        options, redis_shards=SHARDS, redis_wait_replicas=1, redis_wait_timeout_seconds=0.5
    )


async def test_a_primary_killed_mid_game_fails_over_and_no_move_a_player_was_told_of_is_lost(
    start_replica: StartReplica,
    private_redis_cluster: LocalCluster,
    cluster_options: TablesOptions,
) -> None:
    cluster = private_redis_cluster
    url = cluster_url(cluster)
    playing_on = await start_replica(redis_url=url, options=cluster_options)
    watched_on = await start_replica(redis_url=url, options=cluster_options)
    client = playing_on.runtime.store.redis
    assert isinstance(client, RedisCluster)
    keyspace = playing_on.runtime.store.keys
    game, primary = await _game_on(playing_on, keyspace, client, cluster)
    # A second game, on another primary, which goes on as if nothing happened.
    other, other_primary = await _game_on(playing_on, keyspace, client, cluster)
    while other_primary is primary:
        other, other_primary = await _game_on(playing_on, keyspace, client, cluster)
    channels = [watched_on.channel, playing_on.channel]
    async with (
        resuming(game.table_id, channels) as ann_sees,
        resuming(game.table_id, channels[::-1]) as bob_sees,
        resuming(other.table_id, channels) as other_sees,
    ):
        for _ in range(4):
            await game.move()
        async with playing_through(game) as promoted:
            await eventually(lambda: game.seq >= 8)
            resumed_from = game.seq - 2
            failing_over = asyncio.ensure_future(asyncio.to_thread(cluster.kill_primary, primary))
            # Meanwhile the other table, on a primary that lives, is played and watched.
            await other.move()
            await eventually(lambda: other_sees.last_seq >= other.seq, FAILOVER_SECONDS)
            new_primary = await asyncio.wait_for(failing_over, FAILOVER_SECONDS)
            promoted.set()
        assert new_primary is not primary and new_primary.role() == "master"
        assert _primary_of(cluster, client, keyspace.table(game.table_id).state) is new_primary
        for _ in range(4):
            await game.move()
            await other.move()
        await eventually(
            lambda: (
                min(ann_sees.last_seq, bob_sees.last_seq) >= game.seq
                and other_sees.last_seq >= other.seq
            ),
            FAILOVER_SECONDS,
        )

    # Every move a player was told of is in the game, in its place, and nothing else is.
    table = (await game.players[game_pb2.COLOR_BLACK].get(game.table_id)).table
    assert list(table.game.moves) == game.moves
    assert table.seq == game.seq
    told = _moves_by_seq(game.acknowledged)
    for sees in (ann_sees, bob_sees):
        sees.check_unbroken(first_seq=sees.snapshots[0].table.seq + 1)
        seen = _moves_by_seq(sees.events)
        assert {seq: move for seq, move in told.items() if seq in seen} == seen
        assert max(seen) == game.seq
    # The other table's watcher saw every move once too.  (Its stream may have been cut
    # while the cluster, short of the failed primary's slots, refused every command: Redis
    # does until the replica takes over, unless cluster-require-full-coverage is off.)
    other_sees.check_unbroken(first_seq=other_sees.snapshots[0].table.seq + 1)
    assert _moves_by_seq(other_sees.events) == {
        seq: move
        for seq, move in _moves_by_seq(other.acknowledged).items()
        if seq > other_sees.snapshots[0].table.seq
    }
    # A watcher resuming from before the failover gets every move since, once.
    async with watching(watched_on.channel, game.table_id, after_seq=resumed_from) as watch:
        await watch.until_seq(game.seq)
    assert [event.seq for event in watch.events] == list(range(resumed_from + 1, game.seq + 1))


async def test_with_the_wait_a_move_is_answered_once_its_primarys_replica_holds_it(
    start_replica: StartReplica,
    redis_cluster: LocalCluster,
    cluster_options: TablesOptions,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The WAIT goes to the table's own primary, with the move's script: with the replica
    stopped the move is answered only once the wait runs out, and the shortfall is logged."""
    replica = await start_replica(redis_url=cluster_url(redis_cluster), options=cluster_options)
    client = replica.runtime.store.redis
    assert isinstance(client, RedisCluster)
    ann = await new_guest(replica.channel, "Ann")
    table = (await ann.create(opponent=tables_pb2.OPPONENT_PASS_AND_PLAY)).table
    keyspace = replica.runtime.store.keys
    primary = _primary_of(redis_cluster, client, keyspace.table(table.table_id).state)
    (standby,) = redis_cluster.replicas_of(primary)
    first = await ann.play(table.table_id, first_legal(table.game.turn), 0)
    caplog.set_level(logging.WARNING, logger=ReplicaWait.__module__)
    assert "WAIT timed out" not in caplog.text
    standby.freeze()
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        second = await ann.play(
            table.table_id, first_legal(first.events[0].move_played.next), first.events[-1].seq
        )
        took = loop.time() - started
    finally:
        standby.thaw()
    assert took >= cluster_options.redis_wait_timeout_seconds
    assert "WAIT timed out" in caplog.text
    assert second.events[-1].seq == first.events[-1].seq + 1
