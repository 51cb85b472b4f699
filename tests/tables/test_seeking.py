"""Play online now through real tables replicas on one real Redis: seeks entered, paired
across replicas, cancelled, resumed and refused; the pairing lease passing on when its
replica stops."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import cast

import grpc
import pytest
from redis.asyncio import Redis

from goti.api.error_status import ErrorStatus
from goti.api.v1 import game_pb2, matchmaking_pb2, matchmaking_pb2_grpc, tables_pb2
from goti.benchmarking import redis_command_counts
from goti.ratings import Rating
from goti.tables import keys, pairing
from goti.tables.background import cancel_and_wait
from goti.tables.keys import KeySpace
from goti.tables.options import TablesOptions
from goti.tables.rated_games import StoredRating, rating_field
from goti.tables.seeking import ALL_POOLS

from .conftest import StartReplica, TablesReplica
from .table_calls import (
    Guest,
    eventually,
    first_legal,
    new_guest,
    new_request_id,
    until_read,
    watching,
)

ENGLISH_UNTIMED = keys.seek_pool(game_pb2.VARIANT_ENGLISH, matchmaking_pb2.SEEK_TIMER_NONE, False)


@dataclass
class Seek:
    """One seek stream, read in the background."""

    guest: Guest
    request_id: str
    waiting: list[matchmaking_pb2.SeekWaiting] = field(default_factory=list)
    paired: matchmaking_pb2.SeekPaired | None = None
    error: grpc.aio.AioRpcError | None = None
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    entered_ms: float = 0.0
    """When the seek began on the servers' clock (this machine's): the arrival of its first
    waiting message less the wait it reports; a little late, by the message's transit."""

    @property
    def status(self) -> ErrorStatus:
        assert self.error is not None, "the seek did not fail"
        status = ErrorStatus.from_rpc_error(self.error)
        assert status is not None, self.error.details()
        return status


@contextlib.asynccontextmanager
async def seeking(
    guest: Guest,
    channel: grpc.aio.Channel,
    *,
    request_id: str | None = None,
    variant: game_pb2.Variant.ValueType = game_pb2.VARIANT_ENGLISH,
    timer: int = matchmaking_pb2.SEEK_TIMER_NONE,
    rated: bool = False,
) -> AsyncIterator[Seek]:
    """Seek while the block runs; the stream is cancelled on the way out."""
    stub = matchmaking_pb2_grpc.MatchmakingServiceStub(channel)
    seek = Seek(guest, request_id or new_request_id())
    call = stub.Seek(
        matchmaking_pb2.SeekRequest(
            request_id=seek.request_id,
            variant=variant,
            timer=timer,  # type: ignore[arg-type]
            rated=rated,
        ),
        metadata=guest.metadata,
    )

    async def read() -> None:
        try:
            async for message in call:
                if message.HasField("waiting"):
                    if not seek.waiting:
                        waited = message.waiting.waited.ToMilliseconds()
                        seek.entered_ms = time.time() * 1000 - waited
                    seek.waiting.append(message.waiting)
                else:
                    seek.paired = message.paired
        except grpc.aio.AioRpcError as error:
            if error.code() is not grpc.StatusCode.CANCELLED:
                seek.error = error
        finally:
            seek.ended.set()

    reader = asyncio.ensure_future(read())
    try:
        yield seek
    finally:
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader


async def until_waiting(seek: Seek) -> None:
    await eventually(lambda: bool(seek.waiting) or seek.ended.is_set())
    assert seek.waiting, f"the seek ended first: {seek.error}"


async def until_paired(*seeks: Seek, timeout: float = 30.0) -> None:
    await eventually(lambda: all(seek.ended.is_set() for seek in seeks), timeout)
    for seek in seeks:
        assert seek.paired is not None, f"not paired: {seek.error}"


async def paired_within_a_second(a: Seek, b: Seek) -> None:
    """Wait until both seeks wait, then until both are paired: within a second of that."""
    await until_waiting(a)
    await until_waiting(b)
    loop = asyncio.get_running_loop()
    both_waiting = loop.time()
    await until_paired(a, b)
    took = loop.time() - both_waiting
    assert took < 1.0, f"paired after {took:.2f} s"


async def refused(guest: Guest, channel: grpc.aio.Channel, **fields: object) -> ErrorStatus:
    """The status a seek fails with before it waits."""
    async with seeking(guest, channel, **fields) as seek:  # type: ignore[arg-type]
        await eventually(seek.ended.is_set)
    assert not seek.waiting and seek.paired is None
    assert seek.error is not None and seek.error.code() is not grpc.StatusCode.INTERNAL
    return seek.status


async def test_two_seekers_on_two_replicas_are_paired_within_a_second_and_play(
    start_replica: StartReplica, redis: Redis
) -> None:
    first_replica, second_replica = await start_replica(), await start_replica()
    ann = await new_guest(first_replica.channel, "Ann")
    bob = await new_guest(second_replica.channel, "Bob")
    async with (
        seeking(ann, first_replica.channel, timer=matchmaking_pb2.SEEK_TIMER_30_SECONDS) as a,
        seeking(bob, second_replica.channel, timer=matchmaking_pb2.SEEK_TIMER_30_SECONDS) as b,
    ):
        await paired_within_a_second(a, b)
    assert a.paired is not None and b.paired is not None
    table = a.paired.table
    assert b.paired.table.table_id == table.table_id
    assert table.status == tables_pb2.TABLE_STATUS_PLAYING
    assert table.turn_timer_seconds == 30 and not table.rated
    assert {a.paired.your_role, b.paired.your_role} == {
        tables_pb2.ROLE_WHITE,
        tables_pb2.ROLE_BLACK,
    }
    assert a.paired.opponent.player_id == bob.player_id
    assert b.paired.opponent.player_id == ann.player_id
    assert a.paired.opponent_rating.rating == 1500 and a.paired.opponent_rating.provisional
    # Each seat shows its player's rating in the table's variant, a new player's here.
    for seat in (table.white, table.black):
        assert seat.rating.variant == game_pb2.VARIANT_ENGLISH
        assert (seat.rating.rating, seat.rating.deviation) == (1500, 350)
    timed = keys.seek_pool(game_pb2.VARIANT_ENGLISH, matchmaking_pb2.SEEK_TIMER_30_SECONDS, False)
    assert await redis.zcard(timed) == 0
    # Past the pairing: the player to move plays; the other sees it on the other replica.
    await first_move_reaches_the_other(
        a.paired, (ann, first_replica.channel), (bob, second_replica.channel)
    )


async def zcard_calls(redis: Redis) -> int:
    """ZCARDs Redis has run since it started (the pairing rounds read the pools' sizes so)."""
    return (await redis_command_counts(redis)).get("zcard", 0)


async def until_zcard_calls(redis: Redis, at_least: int) -> int:
    """Wait until Redis has run ``at_least`` ZCARDs; how many it has then."""
    return await until_read(lambda: zcard_calls(redis), lambda calls: calls >= at_least)


async def test_idle_replicas_leave_the_pools_alone_until_a_seek_wakes_them_to_pair(
    start_replica: StartReplica, redis: Redis, options: TablesOptions
) -> None:
    """With every pool empty a replica does not poll them (here: not for an hour); a seek
    entering through it starts its pairing at once, and the pair plays."""
    idle = replace(options, pairing_idle_poll_seconds=3600.0)
    before = await zcard_calls(redis)
    first_replica = await start_replica(options=idle)
    second_replica = await start_replica(options=idle)
    # Each replica's first round reads the twelve pools' sizes, and finds them empty.
    quiet_from = await until_zcard_calls(redis, before + 2 * len(ALL_POOLS))
    # A window to observe an absence: at the busy poll (0.2 s) both replicas would read the
    # pools some ten times in it.
    await asyncio.sleep(1.0)
    assert await zcard_calls(redis) == quiet_from
    ann = await new_guest(first_replica.channel, "Ann")
    bob = await new_guest(second_replica.channel, "Bob")
    async with seeking(ann, first_replica.channel) as a, seeking(bob, second_replica.channel) as b:
        await paired_within_a_second(a, b)
    assert a.paired is not None and b.paired is not None
    assert a.paired.table.table_id == b.paired.table.table_id
    assert a.paired.opponent.player_id == bob.player_id
    await first_move_reaches_the_other(
        a.paired, (ann, first_replica.channel), (bob, second_replica.channel)
    )


async def test_the_replica_that_just_paired_a_pool_pairs_the_next_comers_at_once(
    start_replica: StartReplica, redis: Redis, options: TablesOptions
) -> None:
    """A replica that paired a pool keeps polling while its lease lasts, though the pool is
    empty, so that the next seekers, who came through another replica, need not wait for
    the lease to run out before anyone may pair them."""
    idle = replace(options, pairing_idle_poll_seconds=3600.0)
    holder = await start_replica(options=idle)
    other = await start_replica(options=idle)
    ann, bob = await new_guest(holder.channel, "Ann"), await new_guest(holder.channel, "Bob")
    async with seeking(ann, holder.channel) as a, seeking(bob, holder.channel) as b:
        await paired_within_a_second(a, b)
    lease = keys.seek_pool_lease(ENGLISH_UNTIMED)
    assert await redis.get(lease) == holder.runtime.pairing.holder.encode()
    # The holder has looked at the pools again and found them empty.
    await until_zcard_calls(redis, await zcard_calls(redis) + len(ALL_POOLS))
    assert await redis.zcard(ENGLISH_UNTIMED) == 0
    cat, dan = await new_guest(other.channel, "Cat"), await new_guest(other.channel, "Dan")
    async with seeking(cat, other.channel) as c, seeking(dan, other.channel) as d:
        await paired_within_a_second(c, d)
    assert c.paired is not None and d.paired is not None
    assert c.paired.opponent.player_id == dan.player_id
    await first_move_reaches_the_other(c.paired, (cat, other.channel), (dan, other.channel))


async def first_move_reaches_the_other(
    paired: matchmaking_pb2.SeekPaired,
    seeker: tuple[Guest, grpc.aio.Channel],
    opponent: tuple[Guest, grpc.aio.Channel],
) -> None:
    """The player to move at the paired table plays, and the other player, watching through
    their own channel, sees the move; ``paired`` is what ``seeker`` heard."""
    table = paired.table
    to_move = table.game.turn.side
    (mover, mover_channel), (_, other_channel) = (
        (seeker, opponent) if to_move == color_of(paired.your_role) else (opponent, seeker)
    )
    async with watching(other_channel, table.table_id, after_seq=table.seq) as watch:
        await eventually(lambda: bool(watch.messages) or watch.ended.is_set())
        played = await mover.on(mover_channel).play(
            table.table_id, first_legal(table.game.turn), table.seq
        )
        await watch.until_seq(played.events[-1].seq)
    assert watch.events[0].HasField("move_played")


@pytest.mark.parametrize(
    ("seekers", "rating_spread"),
    [
        # Close ratings: most pair at once, a few after a widening or two.
        (40, 60.0),
        # A real spread: the last ones wait for the widening rule's full minute.
        pytest.param(200, 250.0, marks=pytest.mark.slow),
    ],
)
async def test_many_seekers_over_two_replicas_are_each_paired_once_within_the_rule(
    start_replica: StartReplica, redis: Redis, seekers: int, rating_spread: float
) -> None:
    replicas = [await start_replica(), await start_replica()]
    rng = random.Random(15)
    ratings: dict[str, float] = {}
    guests = []
    for index in range(seekers):
        replica = replicas[index % 2]
        guest = await new_guest(replica.channel)
        ratings[guest.player_id] = rng.gauss(1500, rating_spread)
        # Settled ratings, written where rated games leave them: the player's hash.
        stored = StoredRating(Rating(rating=ratings[guest.player_id], deviation=80.0), 30)
        await redis.hset(
            keys.player(guest.player_id), rating_field(game_pb2.VARIANT_ENGLISH), stored.encode()
        )
        guests.append((guest, replica))
    seeks: list[Seek] = []
    overlooked: list[tuple[str, str, float]] = []
    watcher = asyncio.ensure_future(watch_for_overlooked(redis, ratings, overlooked))
    async with contextlib.AsyncExitStack() as stack:
        for guest, replica in rng.sample(guests, len(guests)):
            seeks.append(await stack.enter_async_context(seeking(guest, replica.channel)))
            await asyncio.sleep(rng.uniform(0, 0.03))  # arrivals spread over a few seconds
        await until_paired(*seeks, timeout=150.0)
    # The watcher reads Redis: a single cancel can be swallowed there (goti.tables.background).
    await cancel_and_wait([watcher])
    assert not overlooked, f"left waiting beside a compatible seeker: {overlooked[:5]}"
    by_player = {seek.guest.player_id: seek for seek in seeks}
    tables: dict[str, set[str]] = {}
    for seek in seeks:
        assert seek.paired is not None
        opponent = seek.paired.opponent.player_id
        assert opponent != seek.guest.player_id
        assert by_player[opponent].paired.opponent.player_id == seek.guest.player_id  # type: ignore[union-attr]
        tables.setdefault(seek.paired.table.table_id, set()).add(seek.guest.player_id)
        # The seats, made from what each seek stored, show both players' ratings.
        seats = {
            seat.player.player_id: seat
            for seat in (seek.paired.table.white, seek.paired.table.black)
        }
        for player_id in (opponent, seek.guest.player_id):
            assert seats[player_id].rating.rating == round(ratings[player_id])
        assert seek.paired.opponent_rating == seats[opponent].rating
        # Each is within the other's range at pairing time (the loop's clock is the
        # servers' too; a second's grace for the time between the server and this reader).
        paired_at = seek.paired.table.created_at.ToMilliseconds()
        assert paired_at
        gap = abs(ratings[opponent] - ratings[seek.guest.player_id])
        for side in (seek, by_player[opponent]):
            waited_ms = seek_waited_ms(side, paired_at)
            accepted = pairing.accepted_range(waited_ms + 1000)
            assert accepted is None or gap <= accepted + 1, (gap, waited_ms)
    assert len(tables) == seekers // 2 and all(len(players) == 2 for players in tables.values())
    assert await redis.zcard(ENGLISH_UNTIMED) == 0


def compatible_from_ms(gap: float, first_entered_ms: int, second_entered_ms: int) -> int:
    """When two seekers of this rating gap, waiting since these times, became compatible
    under the widening rule."""
    steps = max(0, -(-(gap - pairing.FIRST_RANGE) // pairing.WIDENING_STEP))
    needed = min(int(steps) * pairing.WIDENING_EVERY_MS, pairing.ANYONE_AFTER_MS)
    return max(first_entered_ms, second_entered_ms) + needed


async def watch_for_overlooked(
    redis: Redis, ratings: dict[str, float], overlooked: list[tuple[str, str, float]]
) -> None:
    """Read the pool over and over; note each couple still waiting there more than a couple
    of seconds after they became compatible (pairing runs five times a second)."""
    while True:
        scored = cast(list[bytes], await redis.zrange(ENGLISH_UNTIMED, 0, -1))
        waits = cast(
            dict[bytes, bytes], await redis.hgetall(keys.seek_pool_seekers(ENGLISH_UNTIMED))
        )
        now_ms = time.time() * 1000
        entered = {
            name.decode(): int(waits[name].split(b" ")[0]) for name in scored if name in waits
        }
        players = sorted(entered, key=lambda player: ratings[player])
        for index, low in enumerate(players):
            for high in players[index + 1 :]:
                gap = ratings[high] - ratings[low]
                since = compatible_from_ms(gap, entered[low], entered[high])
                if now_ms - since > 2000:
                    overlooked.append((low, high, gap))
        await asyncio.sleep(0.1)


def seek_waited_ms(seek: Seek, paired_at_ms: int) -> int:
    """How long a seek had waited when its table was made (a little less, see
    :attr:`Seek.entered_ms`)."""
    return round(paired_at_ms - seek.entered_ms)


def color_of(role: int) -> game_pb2.Color.ValueType:
    return game_pb2.COLOR_WHITE if role == tables_pb2.ROLE_WHITE else game_pb2.COLOR_BLACK


async def until_redis(read: Callable[[], Awaitable[object]], *, present: bool) -> None:
    """Wait until ``read()`` gives something (``present``) or None."""
    await until_read(read, lambda value: (value is not None) == present)


async def test_a_cancelled_seek_leaves_the_pool_and_resumes_with_its_wait(
    replica: TablesReplica, redis: Redis, keyspace: KeySpace
) -> None:
    ann = await new_guest(replica.channel)
    request_id = new_request_id()
    pool = keyspace.pool(ENGLISH_UNTIMED)
    async with seeking(ann, replica.channel, request_id=request_id) as first:
        await until_waiting(first)
        assert await redis.zscore(pool, ann.player_id) is not None
    await until_redis(lambda: redis.zscore(pool, ann.player_id), present=False)
    assert await redis.hget(keys.seeker(ann.player_id), "state") == b"left"
    async with seeking(ann, replica.channel, request_id=request_id) as resumed:
        await until_waiting(resumed)
        assert await redis.zscore(pool, ann.player_id) is not None
    assert resumed.waiting[0].waited.ToMilliseconds() >= first.waiting[0].waited.ToMilliseconds()
    assert abs(resumed.entered_ms - first.entered_ms) < 500
    # A new request id starts a new wait.
    async with seeking(ann, replica.channel) as fresh:
        await until_waiting(fresh)
    assert fresh.entered_ms > first.entered_ms + 1


async def test_a_seek_resumed_while_its_old_stream_is_open_goes_on_in_the_new_one(
    start_replica: StartReplica, redis: Redis, keyspace: KeySpace
) -> None:
    """The app reconnected while a server still held its old stream: the old one ends with
    SEEK_IN_PROGRESS and never pairs; the new one keeps the wait, pairs, and is played."""
    first_replica, second_replica = await start_replica(), await start_replica()
    ann = await new_guest(first_replica.channel)
    bob = await new_guest(second_replica.channel)
    request_id = new_request_id()
    async with seeking(ann, first_replica.channel, request_id=request_id) as old:
        await until_waiting(old)
        async with seeking(ann, second_replica.channel, request_id=request_id) as new:
            await until_waiting(new)
            await eventually(old.ended.is_set)
            assert old.paired is None
            assert old.status.code is grpc.StatusCode.FAILED_PRECONDITION
            assert old.status.reason == "SEEK_IN_PROGRESS"
            assert "request_id" in old.status.message
            # The old stream's end took nothing out of the pool: the seek is the new one's.
            assert await redis.zscore(keyspace.pool(ENGLISH_UNTIMED), ann.player_id) is not None
            assert abs(new.entered_ms - old.entered_ms) < 500
            async with seeking(bob, first_replica.channel) as other:
                await until_paired(new, other)
    assert new.paired is not None and other.paired is not None
    assert new.paired.opponent.player_id == bob.player_id
    assert other.paired.table.table_id == new.paired.table.table_id
    await first_move_reaches_the_other(
        new.paired, (ann, second_replica.channel), (bob, first_replica.channel)
    )


async def test_when_the_replica_holding_a_pool_stops_another_pairs_it(
    start_replica: StartReplica, redis: Redis, options: TablesOptions
) -> None:
    lease = keys.seek_pool_lease(ENGLISH_UNTIMED)
    leaving = await start_replica()
    early = await new_guest(leaving.channel)
    async with seeking(early, leaving.channel) as alone:
        await until_waiting(alone)
        await until_redis(lambda: redis.get(lease), present=True)
        assert await redis.get(lease) == leaving.runtime.pairing.holder.encode()
        staying = await start_replica()
        await leaving.server.stop(1.0)
        await eventually(alone.ended.is_set)
    assert await redis.zscore(ENGLISH_UNTIMED, early.player_id) is None
    ann, bob = await new_guest(staying.channel), await new_guest(staying.channel)
    async with seeking(ann, staying.channel) as a, seeking(bob, staying.channel) as b:
        await until_waiting(a)
        await until_waiting(b)
        # The stopped replica's lease is still there: the pairing waits for it to end.
        assert await redis.get(lease) == leaving.runtime.pairing.holder.encode()
        await until_paired(a, b)
    assert await redis.get(lease) == staying.runtime.pairing.holder.encode()
    assert a.paired is not None and a.paired.opponent.player_id == bob.player_id
    # The table the staying replica made is played.
    await first_move_reaches_the_other(a.paired, (ann, staying.channel), (bob, staying.channel))


async def test_bad_variants_and_timers_are_refused_naming_the_field(replica: TablesReplica) -> None:
    ann = await new_guest(replica.channel)
    for fields, named in (
        ({"variant": 7}, "variant"),
        ({"timer": matchmaking_pb2.SEEK_TIMER_UNSPECIFIED}, "timer"),
        ({"timer": 9}, "timer"),
        ({"request_id": "no spaces allowed"}, "request_id"),
    ):
        status = await refused(ann, replica.channel, **fields)
        assert status.code is grpc.StatusCode.INVALID_ARGUMENT
        assert status.metadata["field"] == named


async def test_a_second_seek_is_refused_while_the_first_waits(replica: TablesReplica) -> None:
    ann = await new_guest(replica.channel)
    async with seeking(ann, replica.channel) as first:
        await until_waiting(first)
        status = await refused(ann, replica.channel, timer=matchmaking_pb2.SEEK_TIMER_2_MINUTES)
        assert status.code is grpc.StatusCode.FAILED_PRECONDITION
        assert status.reason == "SEEK_IN_PROGRESS"
        assert not first.ended.is_set()


async def test_a_player_at_an_unfinished_paired_table_is_told_so(
    replica: TablesReplica, redis: Redis
) -> None:
    ann, bob = await new_guest(replica.channel), await new_guest(replica.channel)
    request_id = new_request_id()
    async with (
        seeking(ann, replica.channel, request_id=request_id) as a,
        seeking(bob, replica.channel) as b,
    ):
        await until_paired(a, b)
    assert a.paired is not None
    table = a.paired.table
    status = await refused(ann, replica.channel)
    assert status.code is grpc.StatusCode.FAILED_PRECONDITION
    assert status.reason == "ALREADY_AT_TABLE"
    assert status.metadata["tableId"] == table.table_id
    # The same seek resumed hears its table again, as a stream dropped before it heard would.
    async with seeking(ann, replica.channel, request_id=request_id) as again:
        await eventually(again.ended.is_set)
    assert again.paired is not None and again.paired.table.table_id == table.table_id
    # Once the game is over, the player may seek again.
    ann_moves = table.game.turn.side == color_of(a.paired.your_role)
    await (ann if ann_moves else bob).resign(table.table_id, table.seq)
    async with seeking(ann, replica.channel) as after:
        await until_waiting(after)


async def test_seeks_are_rate_limited_per_player(
    start_replica: StartReplica, options: TablesOptions
) -> None:
    limited = await start_replica(options=replace(options, seeks_per_minute=2))
    ann = await new_guest(limited.channel)
    for _ in range(2):
        async with seeking(ann, limited.channel) as seek:
            await until_waiting(seek)
    status = await refused(ann, limited.channel)
    assert status.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert status.reason == "RATE_LIMITED"
    assert int(status.metadata["retryAfterMs"]) > 0


async def cancel_seek(
    guest: Guest, channel: grpc.aio.Channel, request_id: str
) -> matchmaking_pb2.CancelSeekResponse:
    stub = matchmaking_pb2_grpc.MatchmakingServiceStub(channel)
    return await stub.CancelSeek(
        matchmaking_pb2.CancelSeekRequest(request_id=request_id),
        metadata=guest.metadata,
        timeout=30,
    )


async def test_a_cancelled_seek_is_out_when_the_cancel_answers_and_the_next_seek_pairs(
    start_replica: StartReplica, redis: Redis, keyspace: KeySpace
) -> None:
    """CancelSeek on another replica than the seek's, its stream still open: once it answers
    the seek is out of the pool, so the next two seekers pair with each other, not with it;
    the stream ends with SEEK_CANCELLED, the request id cannot seek again, and the player's
    next seek pairs and is played."""
    first_replica, second_replica = await start_replica(), await start_replica()
    ann = await new_guest(first_replica.channel, "Ann")
    bob = await new_guest(second_replica.channel, "Bob")
    cat = await new_guest(first_replica.channel, "Cat")
    pool = keyspace.pool(ENGLISH_UNTIMED)
    async with seeking(ann, first_replica.channel) as cancelled:
        await until_waiting(cancelled)
        answer = await cancel_seek(ann, second_replica.channel, cancelled.request_id)
        assert not answer.HasField("paired")
        # Out at once: not "once the stream's end has reached the server".
        assert await redis.zscore(pool, ann.player_id) is None
        assert await redis.hget(keys.seeker(ann.player_id), "state") == b"cancelled"
        async with (
            seeking(bob, second_replica.channel) as b,
            seeking(cat, first_replica.channel) as c,
        ):
            await until_paired(b, c)
        await eventually(cancelled.ended.is_set)
    assert b.paired is not None and b.paired.opponent.player_id == cat.player_id
    assert cancelled.paired is None
    assert cancelled.status.code is grpc.StatusCode.FAILED_PRECONDITION
    assert cancelled.status.reason == "SEEK_CANCELLED"
    # Asked again, the same answer; the cancelled request id cannot seek again.
    again = await cancel_seek(ann, first_replica.channel, cancelled.request_id)
    assert not again.HasField("paired")
    status = await refused(ann, first_replica.channel, request_id=cancelled.request_id)
    assert status.code is grpc.StatusCode.FAILED_PRECONDITION
    assert status.reason == "SEEK_CANCELLED"
    assert await redis.zscore(pool, ann.player_id) is None
    # The player's next seek, with a new request id, pairs and its game is played.
    dan = await new_guest(second_replica.channel, "Dan")
    async with seeking(ann, first_replica.channel) as a, seeking(dan, second_replica.channel) as d:
        await until_paired(a, d)
    assert a.paired is not None and a.paired.opponent.player_id == dan.player_id
    await first_move_reaches_the_other(
        a.paired, (ann, first_replica.channel), (dan, second_replica.channel)
    )


async def test_a_cancel_that_comes_after_the_pairing_answers_with_the_table(
    replica: TablesReplica,
) -> None:
    ann, bob = await new_guest(replica.channel), await new_guest(replica.channel)
    async with seeking(ann, replica.channel) as a, seeking(bob, replica.channel) as b:
        await until_paired(a, b)
    assert a.paired is not None
    answer = await cancel_seek(ann, replica.channel, a.request_id)
    assert answer.HasField("paired")
    assert answer.paired.table.table_id == a.paired.table.table_id
    assert answer.paired.your_role == a.paired.your_role
    assert answer.paired.opponent.player_id == bob.player_id
    assert answer.paired.opponent_rating.rating == 1500
    # The player goes to that table, and its first move reaches both.
    await first_move_reaches_the_other(
        answer.paired, (ann, replica.channel), (bob, replica.channel)
    )


async def test_a_cancel_of_another_request_changes_nothing_and_bad_ones_are_refused(
    replica: TablesReplica, redis: Redis, keyspace: KeySpace
) -> None:
    ann = await new_guest(replica.channel)
    async with seeking(ann, replica.channel) as waiting:
        await until_waiting(waiting)
        answer = await cancel_seek(ann, replica.channel, new_request_id())
        assert not answer.HasField("paired")
        with pytest.raises(grpc.aio.AioRpcError) as malformed:
            await cancel_seek(ann, replica.channel, "no spaces allowed")
        status = ErrorStatus.from_rpc_error(malformed.value)
        assert status is not None and status.code is grpc.StatusCode.INVALID_ARGUMENT
        assert status.metadata["field"] == "request_id"
        stub = matchmaking_pb2_grpc.MatchmakingServiceStub(replica.channel)
        with pytest.raises(grpc.aio.AioRpcError) as anonymous:
            await stub.CancelSeek(
                matchmaking_pb2.CancelSeekRequest(request_id=waiting.request_id), timeout=30
            )
        assert anonymous.value.code() is grpc.StatusCode.UNAUTHENTICATED
        # Still waiting, in its pool, its stream open.
        assert await redis.zscore(keyspace.pool(ENGLISH_UNTIMED), ann.player_id) is not None
        assert await redis.hget(keys.seeker(ann.player_id), "state") == b"waiting"
        count = len(waiting.waiting)
        await eventually(lambda: len(waiting.waiting) > count)
        assert not waiting.ended.is_set()
