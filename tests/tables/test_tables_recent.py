"""A replica keeps the tables it committed last, so a player's next command reads nothing
from Redis; a copy another replica has overtaken never decides a command."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
from redis.asyncio import Redis

from goti.api.v1 import game_pb2, tables_pb2
from goti.tables import keys
from goti.tables.background import cancel_and_wait
from goti.tables.recent import RecentTables

from .conftest import StartReplica, TablesReplica
from .table_calls import (
    Guest,
    eventually,
    first_legal,
    new_guest,
    new_request_id,
    refusal,
    watching,
)


class _Copy:
    def __init__(self, seq: int) -> None:
        self.seq = seq


def test_a_copy_is_only_given_for_the_seq_it_was_committed_at() -> None:
    recent: RecentTables[_Copy] = RecentTables(size=2)
    recent.remember("a", _Copy(3))
    assert recent.at("a", 3) is not None
    assert recent.at("a", 2) is None
    assert recent.at("a", 4) is None
    recent.remember("b", _Copy(1))
    recent.at("a", 3)  # "a" used last: "b" is the one to give way
    recent.remember("c", _Copy(1))
    assert recent.at("b", 1) is None
    assert recent.at("a", 3) is not None and recent.at("c", 1) is not None
    recent.forget("a")
    assert recent.at("a", 3) is None
    assert len(recent) == 1


def test_a_replica_told_to_keep_nothing_keeps_nothing() -> None:
    recent: RecentTables[_Copy] = RecentTables(size=0)
    recent.remember("a", _Copy(1))
    assert recent.at("a", 1) is None


class _TableReads:
    """Every HGETALL of one table's state that reaches Redis while watched (by MONITOR, so
    what other tests' leftover work reads elsewhere does not count)."""

    def __init__(self, table_id: str) -> None:
        self.key = keys.table_state(table_id)
        self.commands: list[str] = []

    @property
    def count(self) -> int:
        return sum(
            command.upper().startswith("HGETALL") and self.key in command
            for command in self.commands
        )


@contextlib.asynccontextmanager
async def _reads_of(redis: Redis, table_id: str) -> AsyncIterator[_TableReads]:
    reads = _TableReads(table_id)
    marker = f"end-of-watch-{new_request_id()}"
    async with redis.monitor() as monitor:

        async def listen() -> None:
            async for command in monitor.listen():
                reads.commands.append(command["command"])

        listener = asyncio.ensure_future(listen())
        try:
            yield reads
            # Commands reach MONITOR in order: once the marker is seen, so is all before it.
            await redis.echo(marker)
            await eventually(lambda: any(marker in command for command in reads.commands))
        finally:
            # A MONITOR read: a single cancel can be swallowed there (goti.tables.background).
            await cancel_and_wait([listener])


@dataclass
class _Opened:
    """Ann's and Bob's game, its guests calling the first of two replicas, Ann's opening
    move played there."""

    second: TablesReplica
    ann: Guest
    bob: Guest
    table: tables_pb2.Table
    opening: list[tables_pb2.TableEvent]

    @property
    def seq(self) -> int:
        return self.opening[-1].seq

    @property
    def white_turn(self) -> game_pb2.Turn:
        return self.opening[-1].move_played.next


async def _opened_on_two_replicas(start_replica: StartReplica) -> _Opened:
    first, second = await start_replica(), await start_replica()
    ann = await new_guest(first.channel, "Ann")
    bob = await new_guest(first.channel, "Bob")
    created = await ann.create(starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1)
    table = (await bob.join(created.table.code)).table
    opening = await ann.play(table.table_id, first_legal(table.game.turn), table.seq)
    return _Opened(second, ann, bob, table, list(opening.events))


async def test_a_players_next_move_on_the_same_replica_reads_nothing(
    start_replica: StartReplica, redis: Redis
) -> None:
    game = await _opened_on_two_replicas(start_replica)
    table_id = game.table.table_id
    async with _reads_of(redis, table_id) as reads:
        answered = await game.bob.play(table_id, first_legal(game.white_turn), game.seq)
    assert reads.count == 0
    assert answered.events[-1].seq == game.seq + 1
    stored = await game.bob.get(table_id)
    assert stored.table.seq == game.seq + 1
    assert list(stored.table.game.moves) == [
        game.opening[0].move_played.record.move.notation,
        answered.events[0].move_played.record.move.notation,
    ]


async def test_an_overtaken_copy_answers_stale_seq_and_changes_nothing(
    start_replica: StartReplica, redis: Redis
) -> None:
    game = await _opened_on_two_replicas(start_replica)
    table_id = game.table.table_id
    # Bob answers on the second replica, so the first one's copy is a move behind.
    answered = await game.bob.on(game.second.channel).play(
        table_id, first_legal(game.white_turn), game.seq
    )
    now = answered.events[-1].seq
    black_turn = answered.events[-1].move_played.next
    before = await redis.hgetall(keys.table_state(table_id))

    # Bob again, as if he had not seen his own move: legal on the old copy, stale in Redis.
    again = await refusal(game.bob.play(table_id, first_legal(game.white_turn), game.seq))
    assert (again.code.name, again.reason) == ("ABORTED", "STALE_SEQ")
    assert again.metadata["currentSeq"] == str(now)
    # Ann, a move behind: on the old copy it was not her turn, but the table has moved on.
    behind = await refusal(game.ann.play(table_id, first_legal(black_turn), game.seq))
    assert (behind.code.name, behind.reason) == ("ABORTED", "STALE_SEQ")
    assert await redis.hgetall(keys.table_state(table_id)) == before

    # Named at the seq the table is at, her move lands on the first replica as usual.
    landed = await game.ann.play(table_id, first_legal(black_turn), now)
    assert landed.events[-1].seq == now + 1


async def test_a_retry_on_a_replica_holding_the_old_copy_is_not_applied_again(
    start_replica: StartReplica,
) -> None:
    game = await _opened_on_two_replicas(start_replica)
    table_id = game.table.table_id
    move = first_legal(game.white_turn)
    request_id = new_request_id()
    answered = await game.bob.on(game.second.channel).play(
        table_id, move, game.seq, request_id=request_id
    )
    # The answer was lost; Bob retries on the first replica, whose copy is at his seq still.
    retried = await game.bob.play(table_id, move, game.seq, request_id=request_id)
    assert list(retried.events) == list(answered.events)
    stored = await game.ann.get(table_id)
    assert stored.table.seq == answered.events[-1].seq
    assert len(stored.table.game.moves) == 2
    assert stored.table.game.turn.side == game_pb2.COLOR_BLACK


async def test_the_computers_reply_starts_from_the_players_move_without_a_read(
    channel: grpc.aio.Channel, redis: Redis
) -> None:
    ann = await new_guest(channel, "Ann")
    created = await ann.create(
        opponent=tables_pb2.OPPONENT_COMPUTER_EASY,
        starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1,
    )
    table = created.table
    async with watching(channel, table.table_id, after_seq=table.seq) as watch:
        await eventually(lambda: bool(watch.messages))  # the snapshot has been read
        async with _reads_of(redis, table.table_id) as reads:
            played = await ann.play(table.table_id, first_legal(table.game.turn), table.seq)
            await watch.until_seq(played.events[-1].seq + 1, timeout=60)
        assert reads.count == 0
    reply = watch.events[-1].move_played
    assert reply.source == tables_pb2.MOVE_SOURCE_COMPUTER
    assert reply.next.side == game_pb2.COLOR_BLACK
    stored = await ann.get(table.table_id)
    assert stored.table.seq == played.events[-1].seq + 1
    assert len(stored.table.game.moves) == 2
