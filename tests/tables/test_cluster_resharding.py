"""Slots moved between a Redis Cluster's primaries (``redis-cli --cluster reshard``) while
games are played on them: redis-py follows the slots (ASK while one moves, MOVED once it
has), the moved tables' channels follow them to their new node, nothing is lost, and no
error reaches the players but the UNAVAILABLE they retry with the same request id."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import subprocess

from redis.asyncio.cluster import RedisCluster
from redis_topologies import START_SECONDS, LocalCluster, RedisProcess, redis_cli_beside

from goti.api.v1 import game_pb2
from goti.tables.options import TablesOptions

from .conftest import StartReplica
from .on_cluster import SHARDS, cluster_url
from .table_calls import ResumingWatch, eventually, resuming
from .test_tables_failover import FAILOVER_SECONDS, _Game, _moves_by_seq

MOVED_SLOTS = 2000
"""Slots moved: the first of the first primary's range, which holds the first shards."""
GAMES_MOVED = 3
GAMES_STAYING = 2


def _node_id(cluster: LocalCluster, node: RedisProcess) -> str:
    return next(view.node_id for view in cluster.views(node) if "myself" in view.flags)


def _reshard(cluster: LocalCluster, source: RedisProcess, target: RedisProcess) -> str:
    """Move the first :data:`MOVED_SLOTS` slots of ``source`` to ``target``, keys and all, as
    an operator would; redis-cli's output."""
    done = subprocess.run(
        [
            os.fspath(redis_cli_beside(cluster.binary)),
            "--cluster",
            "reshard",
            source.name,
            "--cluster-from",
            _node_id(cluster, source),
            "--cluster-to",
            _node_id(cluster, target),
            "--cluster-slots",
            str(MOVED_SLOTS),
            "--cluster-yes",
        ],
        capture_output=True,
        text=True,
        timeout=START_SECONDS * 4,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-1500:]
    return done.stdout


def _slot_range_start(cluster: LocalCluster, node: RedisProcess) -> int:
    (view,) = [view for view in cluster.views(node) if "myself" in view.flags]
    return min(int(part.split("-")[0]) for part in view.slot_ranges if part[0].isdigit())


async def test_slots_moved_while_games_are_played_lose_nothing(
    start_replica: StartReplica, private_redis_cluster: LocalCluster, options: TablesOptions
) -> None:
    cluster = private_redis_cluster
    url = cluster_url(cluster)
    tuned = dataclasses.replace(options, redis_shards=SHARDS, redis_wait_replicas=1)
    playing_on = await start_replica(redis_url=url, options=tuned)
    watched_on = await start_replica(redis_url=url, options=tuned)
    client = playing_on.runtime.store.redis
    assert isinstance(client, RedisCluster)
    keyspace = playing_on.runtime.store.keys
    source = min(cluster.primaries(), key=lambda node: _slot_range_start(cluster, node))
    target = next(node for node in cluster.primaries() if node is not source)
    first = _slot_range_start(cluster, source)
    moved = range(first, first + MOVED_SLOTS)

    def _port_of(game: _Game) -> int:
        node = client.get_node_from_key(keyspace.table(game.table_id).state)
        assert node is not None
        return int(node.port)

    async def new_game(moving: bool) -> _Game:
        """A game whose table is in the slots that move (or in those that stay)."""
        while True:
            game = await _Game.start(playing_on)
            if (client.keyslot(keyspace.table(game.table_id).state) in moved) is moving:
                return game

    lanes = [True] * GAMES_MOVED + [False] * GAMES_STAYING
    channels = [watched_on.channel, playing_on.channel]
    played: list[tuple[_Game, int, ResumingWatch]] = []
    async with contextlib.AsyncExitStack() as stack:

        async def start(moving: bool) -> _Game:
            game = await new_game(moving)
            sees = await stack.enter_async_context(resuming(game.table_id, channels))
            played.append((game, target.port if moving else _port_of(game), sees))
            return game

        current = [await start(moving) for moving in lanes]
        resharded = asyncio.ensure_future(asyncio.to_thread(_reshard, cluster, source, target))
        rounds_after = rounds_during = 0
        # The games go on while the slots move, and a little after; a game that ends is
        # followed by a new one in the same slots (created while they move).
        while not resharded.done() or rounds_after < 2:
            for lane, game in enumerate(current):
                if game.turn.side == game_pb2.COLOR_UNSPECIFIED:
                    current[lane] = game = await start(lanes[lane])
                await game.move()
            if resharded.done():
                rounds_after += 1
            else:
                rounds_during += 1
        await resharded
        assert rounds_during >= 1, "the games were played while the slots moved"
        await eventually(
            lambda: all(sees.last_seq >= game.seq for game, _, sees in played),
            FAILOVER_SECONDS,
        )

    for game, port, sees in played:
        assert _port_of(game) == port, "a table moves with its slot, and only then"
        table = (await game.players[game_pb2.COLOR_BLACK].get(game.table_id)).table
        assert list(table.game.moves) == game.moves
        assert table.seq == game.seq
        _check_watched(sees, game)


def _check_watched(sees: ResumingWatch, game: _Game) -> None:
    """The watcher was sent the game's events in order, each once and each as played, up to
    its last; where it fell further behind than the table's log (a move a few dozen plies a
    second, while its channel followed the slot), a snapshot brought it across."""
    seqs = [event.seq for event in sees.events]
    assert seqs == sorted(set(seqs))
    told = _moves_by_seq(game.acknowledged)
    assert _moves_by_seq(sees.events).items() <= told.items()
    snapshots = {snapshot.table.seq for snapshot in sees.snapshots}
    first = sees.snapshots[0].table.seq
    for before, after in zip([first, *seqs], seqs, strict=False):
        if after != before + 1:
            assert any(before <= seq < after for seq in snapshots), (before, after)
    assert sees.last_seq == game.seq
