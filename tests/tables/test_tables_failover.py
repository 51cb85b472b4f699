"""Redis failing over under a game: the sentinels promote the replica when the primary dies,
and the game goes on; with ``GOTI_REDIS_WAIT_REPLICAS`` a move is answered only once the
replica holds it, so none the players were told of is lost.  Without it, a failover can lose
the last moves (the asynchronous window): the players and watchers are then told where the
table is, and never shown a different game."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import grpc
import pytest
from redis.asyncio import Redis
from redis_topologies import LocalSentinels, RedisProcess

from goti.api.v1 import game_pb2, tables_pb2
from goti.tables import keys
from goti.tables.durability import ReplicaWait
from goti.tables.options import TablesOptions
from goti.tables.runtime import open_redis

from .conftest import StartReplica, TablesReplica
from .table_calls import (
    Guest,
    Watch,
    eventually,
    first_legal,
    new_guest,
    new_request_id,
    refusal,
    resuming,
    watching,
)

T = TypeVar("T")
FAILOVER_SECONDS = 90.0
"""How long a call may go on being retried while the sentinels promote the replica."""


async def _answered(call: Callable[[], Awaitable[T]], timeout: float = FAILOVER_SECONDS) -> T:
    """A call's answer, asked again (the same request) while it is UNAVAILABLE, as an app
    would."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            return await call()
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE or loop.time() > deadline:
                raise
        await asyncio.sleep(0.1)


@dataclass
class _Game:
    """Two people online, each playing the first legal move when it is their turn."""

    table_id: str
    players: dict[game_pb2.Color.ValueType, Guest]
    seq: int
    turn: game_pb2.Turn
    acknowledged: list[tables_pb2.TableEvent] = field(default_factory=list)
    """Every event a player was answered with, in order."""

    @classmethod
    async def start(cls, replica: TablesReplica) -> _Game:
        ann = await new_guest(replica.channel, "Ann")
        bob = await new_guest(replica.channel, "Bob")
        created = await ann.create(starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1)
        joined = await bob.join(created.table.code)
        players = {game_pb2.COLOR_BLACK: ann, game_pb2.COLOR_WHITE: bob}
        return cls(created.table.table_id, players, joined.table.seq, joined.table.game.turn)

    @property
    def moves(self) -> list[str]:
        """The moves the players were told were played."""
        return [
            event.move_played.record.move.notation
            for event in self.acknowledged
            if event.HasField("move_played")
        ]

    async def move(self) -> None:
        player, path, request_id = (
            self.players[self.turn.side],
            first_legal(self.turn),
            new_request_id(),
        )
        response = await _answered(
            lambda: player.play(self.table_id, path, self.seq, request_id=request_id)
        )
        self.acknowledged.extend(response.events)
        self.seq, self.turn = response.events[-1].seq, response.events[0].move_played.next


@contextlib.asynccontextmanager
async def playing_through(game: _Game) -> AsyncIterator[asyncio.Event]:
    """The game's moves go on, one after another, while the block kills a primary; each
    waits out the failover.  Set the event once a new primary is up: one more move is
    played on it, and the block ends when that move is answered."""
    promoted = asyncio.Event()

    async def keep_playing() -> None:
        while not promoted.is_set():
            await game.move()
        await game.move()

    playing = asyncio.ensure_future(keep_playing())
    try:
        yield promoted
        promoted.set()
        await asyncio.wait_for(asyncio.shield(playing), FAILOVER_SECONDS)
    finally:
        promoted.set()
        await playing


def _moves_by_seq(events: list[tables_pb2.TableEvent]) -> dict[int, str]:
    return {
        event.seq: event.move_played.record.move.notation
        for event in events
        if event.HasField("move_played")
    }


async def test_a_failover_mid_game_loses_no_move_a_player_was_told_of(
    start_replica: StartReplica, private_redis_sentinels: LocalSentinels, options: TablesOptions
) -> None:
    sentinels = private_redis_sentinels
    waiting = dataclasses.replace(options, redis_wait_replicas=1, redis_wait_timeout_seconds=0.5)
    replica = await start_replica(redis_url=sentinels.url, options=waiting)
    game = await _Game.start(replica)
    async with (
        resuming(game.table_id, [replica.channel]) as ann_sees,
        resuming(game.table_id, [replica.channel]) as bob_sees,
    ):
        for _ in range(4):
            await game.move()
        old = sentinels.primary()
        async with playing_through(game) as promoted:
            await eventually(lambda: game.seq >= 8)
            old.kill()
            # A watcher will resume from a little before the primary died.
            resumed_from = game.seq - 2
            new = await asyncio.to_thread(sentinels.promoted_after, old)
            promoted.set()
        assert new is not old
        # The old primary returns as a replica of the new one, and the game goes on.
        await asyncio.to_thread(sentinels.restart, old)
        for _ in range(4):
            await game.move()
        await eventually(
            lambda: min(ann_sees.last_seq, bob_sees.last_seq) >= game.seq, FAILOVER_SECONDS
        )

    # Every move a player was told of is in the game, in its place, and nothing else is.
    table = (await game.players[game_pb2.COLOR_BLACK].get(game.table_id)).table
    lost = [move for move, kept in zip(game.moves, table.game.moves, strict=False) if move != kept]
    assert not lost and list(table.game.moves) == game.moves, lost
    assert table.seq == game.seq
    told = _moves_by_seq(game.acknowledged)
    for sees in (ann_sees, bob_sees):
        sees.check_unbroken(first_seq=sees.snapshots[0].table.seq + 1)
        seen = _moves_by_seq(sees.events)
        assert {seq: move for seq, move in told.items() if seq in seen} == seen
        assert max(seen) == game.seq
    # A watcher resuming from before the failover gets every move since, once.
    async with watching(replica.channel, game.table_id, after_seq=resumed_from) as watch:
        await watch.until_seq(game.seq)
    assert [event.seq for event in watch.events] == list(range(resumed_from + 1, game.seq + 1))
    assert _moves_by_seq(watch.events) == {
        seq: told[seq] for seq in range(resumed_from + 1, game.seq + 1)
    }


def _standby(sentinels: LocalSentinels) -> RedisProcess:
    primary = sentinels.primary()
    (standby,) = [node for node in sentinels.data_nodes if node is not primary and node.running]
    return standby


async def _pass_and_play(replica: TablesReplica) -> tuple[Guest, tables_pb2.Table]:
    ann = await new_guest(replica.channel, "Ann")
    return ann, (await ann.create(opponent=tables_pb2.OPPONENT_PASS_AND_PLAY)).table


async def test_with_the_wait_on_a_move_is_answered_once_the_replica_holds_it(
    start_replica: StartReplica, redis_sentinels: LocalSentinels, options: TablesOptions
) -> None:
    waiting = dataclasses.replace(options, redis_wait_replicas=1, redis_wait_timeout_seconds=30)
    replica = await start_replica(redis_url=redis_sentinels.url, options=waiting)
    ann, table = await _pass_and_play(replica)
    standby = _standby(redis_sentinels)
    state = keys.table_state(table.table_id)
    standby.freeze()
    try:
        move = asyncio.ensure_future(ann.play(table.table_id, first_legal(table.game.turn), 0))
        # Not while the replica stands still (a short look: the sentinels must not notice).
        done, _ = await asyncio.wait({move}, timeout=0.3)
        assert not done
    finally:
        standby.thaw()
    played = await move
    assert played.events[0].seq == 1
    # Answered: so the replica has it, at once.
    assert standby.ask("HGET", state, "seq") == "1"


async def test_the_wait_loads_its_script_where_the_primary_lacks_it(
    redis_sentinels: LocalSentinels,
) -> None:
    primary = open_redis(redis_sentinels.url)
    try:
        script = primary.register_script("redis.call('SET', KEYS[1], ARGV[1]) return 'set'")
        # A primary new since the last call (a failover's, a restart's) knows no script yet.
        await primary.script_flush()
        waited = ReplicaWait(primary, replicas=1, timeout_seconds=30)
        reply = await waited.run(script, keys=["goti:durability"], args=["held"])
        assert reply == b"set"
        assert _standby(redis_sentinels).ask("GET", "goti:durability") == "held"
    finally:
        await primary.delete("goti:durability")
        await primary.aclose()


async def test_when_the_replicas_are_not_there_in_time_the_move_stands_and_is_answered(
    start_replica: StartReplica,
    redis_sentinels: LocalSentinels,
    options: TablesOptions,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Two replicas asked for, one there: every WAIT runs out.
    waiting = dataclasses.replace(options, redis_wait_replicas=2, redis_wait_timeout_seconds=0.2)
    replica = await start_replica(redis_url=redis_sentinels.url, options=waiting)
    ann, table = await _pass_and_play(replica)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="goti.tables.durability"):
        played = await ann.play(table.table_id, first_legal(table.game.turn), 0)
    assert time.monotonic() - started >= 0.2
    assert played.events[0].seq == 1
    assert (await ann.get(table.table_id)).table.seq == 1
    (warning,) = [record for record in caplog.records if record.name == "goti.tables.durability"]
    assert "before 2 replica(s) held them" in warning.getMessage()
    # The game goes on: the next move lands on the one before.
    follow = await ann.play(table.table_id, first_legal(played.events[0].move_played.next), 1)
    assert follow.events[0].seq == 2


async def test_a_primary_short_of_replicas_refuses_a_move_and_its_retry_lands_later(
    start_replica: StartReplica, redis_sentinels: LocalSentinels
) -> None:
    replica = await start_replica(redis_url=redis_sentinels.url)
    ann, table = await _pass_and_play(replica)
    path, request_id = first_legal(table.game.turn), new_request_id()
    primary = redis_sentinels.primary()
    # Redis's own guard, for operators who would rather take no move than an unreplicated one.
    primary.ask("CONFIG", "SET", "min-replicas-to-write", "2")
    try:
        status = await refusal(ann.play(table.table_id, path, 0, request_id=request_id))
        assert (status.code, status.reason) == (grpc.StatusCode.UNAVAILABLE, "BACKEND_UNAVAILABLE")
        assert (await ann.get(table.table_id)).table.seq == 0
    finally:
        primary.ask("CONFIG", "SET", "min-replicas-to-write", "0")
    played = await ann.play(table.table_id, path, 0, request_id=request_id)
    assert played.events[0].seq == 1


async def _lose_the_fourth_move(
    ann: Guest, table: tables_pb2.Table, redis: Redis, watch: Watch
) -> tuple[tables_pb2.PlayResponse, game_pb2.Turn, str]:
    """Three moves at a pass-and-play table, then a fourth that Redis loses as a failover
    inside the asynchronous window would: answered and watched, then the table's keys put back
    as they were before it.  The fourth move's answer, the turn it was played in (the turn
    again now) and its request id."""
    seq, turn = 0, table.game.turn
    for _ in range(3):
        response = await ann.play(table.table_id, first_legal(turn), seq)
        seq, turn = response.events[-1].seq, response.events[0].move_played.next
    table_keys = [
        keys.table_state(table.table_id),
        keys.table_log(table.table_id),
        keys.table_requests(table.table_id),
    ]
    before = {key: (await redis.dump(key), await redis.pttl(key)) for key in table_keys}
    await watch.until_seq(3)
    request_id = new_request_id()
    lost = await ann.play(table.table_id, first_legal(turn), 3, request_id=request_id)
    await watch.until_seq(4)
    for key, (dumped, ttl) in before.items():
        await redis.delete(key)
        if dumped is not None:
            await redis.restore(key, max(ttl, 0), dumped)
    return lost, turn, request_id


def _shown(watch: Watch) -> list[str]:
    """The moves a watcher of a pass-and-play table was shown: its last snapshot's, and those
    of the events since (event N is the Nth move)."""
    moves: list[str] = []
    for message in watch.messages:
        if message.HasField("snapshot"):
            moves = list(message.snapshot.table.game.moves)
        elif message.event.HasField("move_played"):
            notation = message.event.move_played.record.move.notation
            moves = [*moves[: message.event.seq - 1], notation]
    return moves


async def test_a_table_that_lost_its_last_move_is_sent_again_and_its_player_told(
    replica: TablesReplica, redis: Redis
) -> None:
    ann, table = await _pass_and_play(replica)
    async with watching(replica.channel, table.table_id, metadata=ann.metadata) as watch:
        lost, turn, request_id = await _lose_the_fourth_move(ann, table, redis, watch)
        lost_move = lost.events[0].move_played
        # The watcher is sent the table as it is now, not left believing in the lost move.
        await eventually(lambda: watch.messages[-1].HasField("snapshot"))
        assert watch.messages[-1].snapshot.table.seq == 3
        # The player going on from the lost move is told where the table is.
        status = await refusal(ann.play(table.table_id, first_legal(lost_move.next), 4))
        assert (status.code, status.reason) == (grpc.StatusCode.ABORTED, "STALE_SEQ")
        assert status.metadata["currentSeq"] == "3"
        # The player retrying it has it played, and the watcher sees it again.
        again = await ann.play(table.table_id, first_legal(turn), 3, request_id=request_id)
        assert again.events[0].seq == 4
        assert again.events[0].move_played.record == lost_move.record
        await eventually(lambda: watch.last_seq == 4 and watch.messages[-1].HasField("event"))
    assert _shown(watch) == list((await ann.get(table.table_id)).table.game.moves)


async def test_a_table_played_on_from_before_a_lost_move_is_sent_again(
    replica: TablesReplica, redis: Redis
) -> None:
    ann, table = await _pass_and_play(replica)
    async with watching(replica.channel, table.table_id, metadata=ann.metadata) as watch:
        lost, turn, _ = await _lose_the_fourth_move(ann, table, redis, watch)
        # Another fourth move, before the watcher's next heartbeat could show it anything.
        lost_path = list(lost.events[0].move_played.record.move.path)
        other = next(list(move.path) for move in turn.legal_moves if list(move.path) != lost_path)
        played = await ann.play(table.table_id, other, 3)
        instead = played.events[0].move_played.record.move.notation
        assert instead != lost.events[0].move_played.record.move.notation
        await eventually(lambda: _shown(watch)[3:] == [instead])
    assert _shown(watch) == list((await ann.get(table.table_id)).table.game.moves)
