"""The tables service put together: its Redis, its channels to the referee and the AI, the
path of a command (reader, commit, follow-ups, opener, runner), the watch streams and the
timer worker — opened, bound to a server, drained and
closed in that order.

    async with TablesRuntime.open(settings) as runtime:
        await serving.serve("tables", runtime.bind, settings, drain=runtime.drain)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final

import grpc
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool
from redis.backoff import ExponentialWithJitterBackoff

from goti import serving
from goti.api.v1 import ai_pb2
from goti.redis_urls import cluster_url, sentinel_url
from goti.settings import Settings
from goti.tables.committing import Committer
from goti.tables.durability import ReplicaWait
from goti.tables.fanout import Fanout
from goti.tables.followups import FollowUps
from goti.tables.keys import KeySpace
from goti.tables.leaderboard import Leaderboard
from goti.tables.loading import LoadedTable, TableReader
from goti.tables.matchmaking_servicer import MatchmakingServicer, bind_matchmaking
from goti.tables.opening import TableOpener
from goti.tables.options import TablesOptions
from goti.tables.peers import ComputerPlayer, Referee
from goti.tables.player_store import PlayerStore
from goti.tables.players import GuestPolicy, Players
from goti.tables.playing import CommandRunner
from goti.tables.pool_store import PoolStore
from goti.tables.recent import RecentTables
from goti.tables.redis_calls import RedisClient
from goti.tables.redis_packing import pack_in_c
from goti.tables.restoring import Restorer
from goti.tables.seeking import PairingWorker, Seeking
from goti.tables.servicer import PlayersServicer, TablesServicer, bind_services
from goti.tables.store import TableStore
from goti.tables.timers import TimerWorker
from goti.tables.watching import Watching

log = logging.getLogger(__name__)


def clock_ms() -> int:
    """The time now, in milliseconds since the epoch: every table's clock."""
    return int(time.time() * 1000)


REDIS_CONNECTIONS: Final = 64
"""Connections to Redis per process: a burst of watchers queues for them rather than opening
thousands."""
REDIS_CONNECT_TIMEOUT_SECONDS: Final = 1.0
REDIS_COMMAND_TIMEOUT_SECONDS: Final = 3.0
REDIS_POOL_WAIT_SECONDS: Final = 5.0
_BACKGROUND_FINISH_SECONDS: Final = 3.0


class SentinelBlockingConnectionPool(SentinelConnectionPool, BlockingConnectionPool):
    """Connections to the primary that the sentinels name, asked again for every new
    connection, and bounded as for one Redis: a burst waits for a connection."""

    async def aclose(self) -> None:
        """Close the connections, then those to the sentinels, which only this pool uses."""
        await super().aclose()
        await self.sentinel_manager.aclose()


def open_redis_client(url: str) -> RedisClient:
    """The client for any URL ``GOTI_REDIS_URL`` may hold: a Redis Cluster's
    (:func:`open_cluster`) for a ``redis+cluster://`` URL, else :func:`open_redis`'s."""
    nodes = cluster_url(url)
    if nodes is not None:
        return open_cluster(nodes.nodes, username=nodes.username, password=nodes.password)
    return open_redis(url)


def open_redis(url: str) -> Redis:
    """A Redis client for the tables service: a bounded pool, short timeouts and a couple of
    quick retries, so that an unreachable Redis is reported within a few seconds.

    For a ``redis+sentinel://`` URL, the client of the primary those sentinels name: after a
    failover its new connections, pub/sub's included, go to the new primary, and one still
    open to a primary demoted to replica is closed at its first write."""
    timeouts = {
        "socket_connect_timeout": REDIS_CONNECT_TIMEOUT_SECONDS,
        "socket_timeout": REDIS_COMMAND_TIMEOUT_SECONDS,
    }
    pooled: dict[str, Any] = {
        "max_connections": REDIS_CONNECTIONS,
        "timeout": REDIS_POOL_WAIT_SECONDS,
        "retry": Retry(ExponentialWithJitterBackoff(base=0.05, cap=0.5), 2),
        "decode_responses": False,
        **timeouts,
    }
    if cluster_url(url) is not None:
        raise ValueError("a Redis Cluster's client is open_cluster's")
    named = sentinel_url(url)
    if named is None:
        return Redis(connection_pool=pack_in_c(BlockingConnectionPool.from_url(url, **pooled)))
    sentinels = Sentinel(
        named.sentinels, sentinel_kwargs={**timeouts, "password": named.sentinel_password}
    )
    primary: Redis = sentinels.master_for(
        named.service,
        connection_pool_class=SentinelBlockingConnectionPool,
        db=named.db,
        username=named.username,
        password=named.password,
        **pooled,
    )
    pack_in_c(primary.connection_pool)
    return primary


def open_cluster(
    nodes: Sequence[tuple[str, int]], *, username: str | None, password: str | None
) -> RedisCluster:
    """A Redis Cluster client: redis-py's, which finds every node from those named, sends
    each command to the node of its keys' slot, follows MOVED and ASK redirections, reads the
    slots again after a failover, and retries a command a few times before it fails.

    Connections are bounded per node as for one Redis; the timeouts are the same."""
    return RedisCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in nodes],
        username=username,
        password=password,
        max_connections=REDIS_CONNECTIONS,
        socket_connect_timeout=REDIS_CONNECT_TIMEOUT_SECONDS,
        socket_timeout=REDIS_COMMAND_TIMEOUT_SECONDS,
        # A failover takes a few seconds (cluster-node-timeout, then an election): commands
        # retry for about a second and a half, and then fail as UNAVAILABLE, which clients
        # retry with the same request id.
        retry=Retry(ExponentialWithJitterBackoff(base=0.1, cap=0.5), 4),
        decode_responses=False,
    )


def keyspace_for(redis: RedisClient, options: TablesOptions) -> KeySpace:
    """Where the tables are: one Redis's names, or ``GOTI_REDIS_SHARDS`` shards on a
    cluster."""
    if isinstance(redis, RedisCluster):
        return KeySpace(options.redis_shards, cluster=True)
    return KeySpace()


async def close_redis(redis: RedisClient) -> None:
    """Close a client and its connections."""
    await redis.aclose()
    if isinstance(redis, Redis):
        await redis.connection_pool.disconnect()


class TablesRuntime:
    """Every part of one tables process, wired together."""

    def __init__(
        self,
        store: TableStore,
        tables_servicer: TablesServicer,
        players_servicer: PlayersServicer,
        follow_ups: FollowUps,
        fanout: Fanout,
        worker: TimerWorker,
        matchmaking_servicer: MatchmakingServicer,
        seeking: Seeking,
        pairing: PairingWorker,
        referee: Referee,
    ) -> None:
        self.store = store
        # One pair of servicers for every protocol: gRPC, and Connect and gRPC-Web on the
        # web port.
        self.tables_servicer = tables_servicer
        self.players_servicer = players_servicer
        self.follow_ups = follow_ups
        self.fanout = fanout
        self.worker = worker
        self.matchmaking_servicer = matchmaking_servicer
        self.seeking = seeking
        self.pairing = pairing
        self.referee = referee

    @classmethod
    @contextlib.asynccontextmanager
    async def open(
        cls,
        settings: Settings,
        options: TablesOptions | None = None,
        *,
        redis_url: str | None = None,
    ) -> AsyncIterator[TablesRuntime]:
        """Open the process's connections and start its background work; close them on exit.

        ``options`` default to those of ``settings``; ``redis_url`` to ``GOTI_REDIS_URL``.
        """
        options = TablesOptions.from_settings(settings) if options is None else options
        url = redis_url or settings.redis_url
        if not url:
            raise ValueError("the tables service needs Redis: set GOTI_REDIS_URL")
        redis = open_redis_client(url)
        referee_channel = serving.open_channel(settings.target("referee"), settings)
        ai_channel = serving.open_channel(settings.target("ai"), settings)
        try:
            runtime = cls.assemble(
                redis,
                referee_channel,
                ai_channel,
                options,
                guests=GuestPolicy.from_settings(settings),
            )
            runtime.start()
            try:
                yield runtime
            finally:
                await runtime.close()
        finally:
            await referee_channel.close()
            await ai_channel.close()
            await close_redis(redis)

    @classmethod
    def assemble(
        cls,
        redis: RedisClient,
        referee_channel: grpc.aio.Channel,
        ai_channel: grpc.aio.Channel,
        options: TablesOptions,
        *,
        guests: GuestPolicy | None = None,
    ) -> TablesRuntime:
        """Wire the parts over open connections (nothing starts yet); ``guests`` default to
        Goti's default policy."""
        replica_wait = ReplicaWait(
            redis, options.redis_wait_replicas, options.redis_wait_timeout_seconds
        )
        store = TableStore(
            redis,
            keyspace=keyspace_for(redis, options),
            table_log_events=options.table_log_events,
            replica_wait=replica_wait,
        )
        referee = Referee(referee_channel, deadline_seconds=options.referee_deadline_seconds)
        computer = ComputerPlayer(
            ai_channel,
            deadline_seconds={
                ai_pb2.LEVEL_EASY: options.ai_deadline_seconds,
                ai_pb2.LEVEL_NORMAL: options.ai_deadline_seconds,
                ai_pb2.LEVEL_HARD: options.ai_deadline_seconds,
                ai_pb2.LEVEL_MASTER: options.ai_deadline_seconds,
                ai_pb2.LEVEL_QUICK: options.quick_move_deadline_seconds,
            },
        )
        player_store = PlayerStore(redis, store.keys)
        players = Players(player_store, guests_per_minute=options.guests_per_minute, policy=guests)
        recent: RecentTables[LoadedTable] = RecentTables(options.recent_tables_kept)
        reader = TableReader(store, referee, options)
        restorer = Restorer(store, reader)
        fanout = Fanout(store, queue_size=options.watcher_queue_size)
        committer = Committer(store, referee, recent, options, fanout, clock_ms=clock_ms)
        follow_ups = FollowUps(
            store, player_store, reader, committer, referee, computer, options, clock_ms=clock_ms
        )
        opener = TableOpener(
            store, referee, players, reader, committer, follow_ups, recent, clock_ms=clock_ms
        )
        runner = CommandRunner(
            store, referee, reader, restorer, committer, follow_ups, opener, recent
        )
        watching = Watching(
            store,
            reader,
            restorer,
            fanout,
            heartbeat_seconds=options.heartbeat_seconds,
            lobby_snapshot_size=options.lobby_snapshot_size,
        )
        worker = TimerWorker(
            follow_ups,
            store,
            poll_seconds=options.timer_poll_seconds,
            lease_seconds=options.timer_lease_seconds,
            batch=options.timers_per_claim,
        )
        tables_servicer = TablesServicer(reader, opener, runner, players, watching)
        pools = PoolStore(redis, store.keys, paired_kept_seconds=options.idle_table_seconds)
        pairing = PairingWorker(pools, referee, players, options, clock_ms=clock_ms)
        seeking = Seeking(
            pools, reader, players, fanout, options, clock_ms=clock_ms, entered=pairing.wake
        )
        return cls(
            store,
            tables_servicer,
            PlayersServicer(players),
            follow_ups,
            fanout,
            worker,
            MatchmakingServicer(players, seeking, Leaderboard(player_store)),
            seeking,
            pairing,
            referee,
        )

    def start(self) -> None:
        """Start reading pub/sub and polling the timers."""
        self.fanout.start()
        self.worker.start()
        self.pairing.start()

    def bind(self, server: grpc.aio.Server) -> Sequence[str]:
        """Add the tables, players and matchmaking services to ``server`` (the harness's
        bind)."""
        return [
            *bind_services(server, self.tables_servicer, self.players_servicer),
            bind_matchmaking(server, self.matchmaking_servicer),
        ]

    async def drain(self) -> None:
        """At shutdown: stop claiming timers and end every watch stream with UNAVAILABLE, so
        that clients reconnect to another replica (the harness's drain); stop pairing, the
        pools' leases left to end by themselves."""
        await self.worker.stop()
        await self.pairing.stop()
        await self.fanout.close()

    async def close(self) -> None:
        """Stop the background work; computer turns under way get a moment to finish, and
        what is cut short is left to another replica once its lease ends; then end the
        streams to the referee."""
        await self.worker.stop()
        await self.pairing.stop()
        await self.fanout.close()
        for finishing in (self.seeking.finish(), self.follow_ups.finish()):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(finishing, _BACKGROUND_FINISH_SECONDS)
        await self.follow_ups.stop()
        await self.referee.close()
