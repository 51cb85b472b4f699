"""Play online now through the SDK against real tables replicas, referee and Redis: two seeks
meet at one table and play it; a closed seek leaves its pool; one seek at a time; a player
with a paired game to finish is sent back to it; a seek whose replica stops keeps its place;
a rated game moves both players on the leaderboard; bad input is refused naming the field."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable

import grpc
import pytest
from redis.asyncio import Redis

from goti.api.v1 import game_pb2, matchmaking_pb2
from goti.ratings import Rating as GlickoRating
from goti.rules import ENGLISH, RUSSIAN, Color
from goti.tables import keys
from goti.tables.options import TablesOptions
from goti.tables.rated_games import StoredRating, rating_field
from goti_client import (
    ActionRefusedError,
    AlreadyAtTableError,
    GotiClient,
    GotiError,
    InvalidRequestError,
    MovePlayed,
    Reason,
    Role,
    Seek,
    SeekPaired,
    SeekWaiting,
    Snapshot,
    TableStatus,
)

from .conftest import Clients, StartReplica

WAIT_SECONDS = 30.0
"""Generous: the machine running the tests may be busy."""
DRAIN_SECONDS = 5.0
"""The grace a stopping replica gives its calls, as in a deploy."""
CASUAL_POOL = keys.seek_pool(game_pb2.VARIANT_ENGLISH, matchmaking_pb2.SEEK_TIMER_NONE, False)


@pytest.fixture
def options(options: TablesOptions) -> TablesOptions:
    """A resume window long enough for a replica to stop and start again on a busy machine."""
    return dataclasses.replace(options, seek_resume_seconds=30)


class Seeking:
    """Follows a seek in the background: its progress, its pairing, its failure."""

    def __init__(self, seek: Seek) -> None:
        self.seek = seek
        self.waiting: list[SeekWaiting] = []
        self.paired: SeekPaired | None = None
        self.error: GotiError | None = None
        self.ended = False
        self._task = asyncio.create_task(self._follow())

    async def _follow(self) -> None:
        try:
            async for progress in self.seek:
                if isinstance(progress, SeekWaiting):
                    self.waiting.append(progress)
                else:
                    self.paired = progress
        except GotiError as error:
            self.error = error
        finally:
            self.ended = True

    async def until(self, check: Callable[[], bool], what: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT_SECONDS
        while not check():
            if loop.time() > deadline:
                raise AssertionError(f"timed out waiting for {what}: {self.error!r}")
            await asyncio.sleep(0.02)

    async def first_waiting(self) -> SeekWaiting:
        await self.until(lambda: bool(self.waiting) or self.ended, "a waiting message")
        assert self.waiting, f"the seek ended first: {self.error!r}"
        return self.waiting[0]

    async def until_paired(self) -> SeekPaired:
        await self.until(lambda: self.ended, "the pairing")
        assert self.paired is not None, f"not paired: {self.error!r}"
        assert self.seek.paired == self.paired
        return self.paired

    async def close(self) -> None:
        await self.seek.aclose()
        await asyncio.wait_for(self._task, WAIT_SECONDS)


@contextlib.asynccontextmanager
async def seeking(seek: Seek) -> AsyncIterator[Seeking]:
    """``seek`` followed in the background while in the block, and closed at its end."""
    following = Seeking(seek)
    try:
        yield following
    finally:
        await following.close()


async def both_paired(ann: Seeking, bob: Seeking) -> tuple[SeekPaired, SeekPaired]:
    """Ann's and Bob's pairings, at one table."""
    ann_paired = await ann.until_paired()
    bob_paired = await bob.until_paired()
    assert ann_paired.table.table_id == bob_paired.table.table_id
    return ann_paired, bob_paired


async def until_left_pool(redis: Redis, player: GotiClient) -> None:
    """Wait until the player is no longer in the casual English pool."""
    assert player.player is not None
    player_id = player.player.player_id
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_SECONDS
    while await redis.zscore(CASUAL_POOL, player_id) is not None:
        assert loop.time() < deadline, "timed out waiting for the seek to leave its pool"
        await asyncio.sleep(0.05)


async def pair(
    ann: GotiClient, bob: GotiClient, *, rated: bool = False
) -> tuple[SeekPaired, SeekPaired]:
    """Ann and Bob seek in one pool (English, no timer) until both are paired."""
    async with (
        seeking(ann.seek(ENGLISH, rated=rated)) as ann_seeking,
        seeking(bob.seek(ENGLISH, rated=rated)) as bob_seeking,
    ):
        return await both_paired(ann_seeking, bob_seeking)


async def first_move_reaches_the_other(
    ann: tuple[GotiClient, SeekPaired], bob: tuple[GotiClient, SeekPaired]
) -> None:
    """The player to move plays; the other sees that move on a watch of the new table."""
    table = ann[1].table
    turn = table.game.turn
    assert turn is not None and table.status is TableStatus.PLAYING
    ann_moves = table.role.holds(turn.side)
    (mover, _), (other, other_paired) = (ann, bob) if ann_moves else (bob, ann)
    watch = other.watch(table.table_id, after_seq=other_paired.table.seq)
    try:
        played = await mover.play(table.table_id, turn.legal_moves[0])
        assert isinstance(played[0], MovePlayed)
        notation = played[0].record.notation

        async def seen() -> None:
            # A new table's seq may be 0, and a watch from 0 starts with a snapshot, which
            # already holds a move played before the watch opened.
            async for update in watch:
                if isinstance(update, Snapshot) and notation in update.table.game.moves:
                    return
                if isinstance(update, MovePlayed):
                    assert update.move == turn.legal_moves[0] and update.record.side is turn.side
                    return
            raise AssertionError("the watch ended")

        await asyncio.wait_for(seen(), WAIT_SECONDS)
    finally:
        await watch.aclose()


async def test_two_seekers_meet_at_one_table_and_the_first_move_reaches_the_other(
    clients: Clients,
) -> None:
    ann = await clients.open(display_name="Ann")
    bob = await clients.open(display_name="Bob")
    async with seeking(ann.seek(ENGLISH, turn_timer=30, rated=False)) as ann_seeking:
        waiting = await ann_seeking.first_waiting()
        # Alone in the pool, a new player's rating, a hundred points either side at first.
        assert waiting.seekers_in_pool == 1 and waiting.waited_seconds >= 0
        assert waiting.rating.rating == 1500 and waiting.rating.provisional
        assert str(waiting.rating) == "1500?" and waiting.rating.variant == ENGLISH
        assert (waiting.min_rating, waiting.max_rating) == (1400, 1600)
        assert not waiting.accepts_any_rating
        assert ann_seeking.seek.waiting == waiting

        async with seeking(bob.seek(ENGLISH, turn_timer=30, rated=False)) as bob_seeking:
            ann_paired, bob_paired = await both_paired(ann_seeking, bob_seeking)

    table = ann_paired.table
    assert {ann_paired.table.role, bob_paired.table.role} == {Role.WHITE, Role.BLACK}
    assert table.turn_timer_seconds == 30 and not table.rated
    assert table.white.player is not None and table.black.player is not None
    assert ann_paired.opponent.display_name == "Bob" and bob_paired.opponent.display_name == "Ann"
    assert ann_paired.opponent_rating is not None and str(ann_paired.opponent_rating) == "1500?"
    bob_color = Color(bob_paired.table.role.value)
    assert table.seat(bob_color).rating == ann_paired.opponent_rating
    # The client knows the new table's seq, as after a join: its next command needs no read.
    assert ann.last_seq(table.table_id) == table.seq

    await first_move_reaches_the_other((ann, ann_paired), (bob, bob_paired))


async def test_a_closed_seek_leaves_the_pool_and_a_new_seek_pairs(
    clients: Clients, redis: Redis
) -> None:
    ann = await clients.open(display_name="Ann")
    bob = await clients.open(display_name="Bob")
    assert ann.player is not None
    async with ann.seek() as seek:
        async for progress in seek:
            assert isinstance(progress, SeekWaiting)
            break
        assert await redis.zscore(CASUAL_POOL, ann.player.player_id) is not None
    # Leaving the block closed the stream: the server takes Ann out of the pool at once.
    await until_left_pool(redis, ann)

    async with seeking(bob.seek()) as bob_seeking:
        assert (await bob_seeking.first_waiting()).seekers_in_pool == 1
        async with seeking(ann.seek()) as ann_seeking:
            ann_paired, bob_paired = await both_paired(ann_seeking, bob_seeking)
    await first_move_reaches_the_other((ann, ann_paired), (bob, bob_paired))


async def test_a_cancelled_seek_is_out_of_the_pool_when_cancel_returns_and_the_next_pairs(
    clients: Clients, redis: Redis
) -> None:
    """``cancel()`` returns once the seek is out of its pool (no waiting for it): the next two
    seekers pair with each other; cancelled again, the same answer; the player's next seek
    pairs and its first move is seen.  A cancel after the pairing hands over the table."""
    ann = await clients.open(display_name="Ann")
    bob = await clients.open(display_name="Bob")
    cat = await clients.open(display_name="Cat")
    assert ann.player is not None
    async with seeking(ann.seek()) as ann_seeking:
        await ann_seeking.first_waiting()
        assert await ann_seeking.seek.cancel() is None
        assert await redis.zscore(CASUAL_POOL, ann.player.player_id) is None
        await ann_seeking.until(lambda: ann_seeking.ended, "the cancelled seek to end")
        assert ann_seeking.error is None and ann_seeking.paired is None
        async with seeking(bob.seek()) as bob_seeking, seeking(cat.seek()) as cat_seeking:
            bob_paired, _ = await both_paired(bob_seeking, cat_seeking)
        assert bob_paired.opponent.display_name == "Cat"
        assert await ann_seeking.seek.cancel() is None

    # Bob is at his table with Cat now: Ann's next opponent is Dan.
    dan = await clients.open(display_name="Dan")
    async with seeking(ann.seek()) as ann_seeking, seeking(dan.seek()) as dan_seeking:
        ann_paired, dan_paired = await both_paired(ann_seeking, dan_seeking)
        late = await ann_seeking.seek.cancel()
    assert late is not None and late.table.table_id == ann_paired.table.table_id
    assert late.table.role == ann_paired.table.role and late.opponent.display_name == "Dan"
    await first_move_reaches_the_other((ann, late), (dan, dan_paired))


async def test_a_second_seek_is_refused_while_the_first_waits(
    clients: Clients, redis: Redis
) -> None:
    ann = await clients.open(display_name="Ann")
    async with seeking(ann.seek()) as first:
        await first.first_waiting()
        # Another pool, another request id: still one seek at a time.
        with pytest.raises(ActionRefusedError) as refused:
            async for _ in ann.seek(RUSSIAN, turn_timer=120):
                pass
        assert refused.value.reason is Reason.SEEK_IN_PROGRESS
        assert refused.value.code is grpc.StatusCode.FAILED_PRECONDITION
        assert not first.ended
        # Closed from another task while this one reads it, the first seek simply ends.
        await first.seek.aclose()
        await first.until(lambda: first.ended, "the closed seek to end")
        assert first.error is None and first.paired is None and first.seek.closed
    await until_left_pool(redis, ann)

    async with seeking(ann.seek(RUSSIAN, turn_timer=120)) as again:
        waiting = await again.first_waiting()
    assert waiting.seekers_in_pool == 1 and waiting.rating.variant == RUSSIAN


async def test_a_player_with_a_paired_game_to_finish_is_sent_back_to_it(
    clients: Clients,
) -> None:
    ann = await clients.open(display_name="Ann")
    bob = await clients.open(display_name="Bob")
    ann_paired, _ = await pair(ann, bob)
    table_id = ann_paired.table.table_id

    for player in (ann, bob):
        with pytest.raises(AlreadyAtTableError) as refused:
            async for _ in player.seek(ENGLISH, turn_timer=30):
                pass
        assert refused.value.reason is Reason.ALREADY_AT_TABLE
        assert refused.value.table_id == table_id

    # The one to move resigns; with the game over, both may seek again, and meet again.
    turn = ann_paired.table.game.turn
    assert turn is not None
    loser = ann if ann_paired.table.role.holds(turn.side) else bob
    await loser.resign(table_id)
    assert (await ann.get_table(table_id)).status is TableStatus.FINISHED
    again_ann, again_bob = await pair(ann, bob)
    assert again_ann.table.table_id != table_id
    await first_move_reaches_the_other((ann, again_ann), (bob, again_bob))


async def test_a_seek_whose_replica_is_stopped_in_a_deploy_keeps_its_place_and_pairs(
    start_replica: StartReplica, clients: Clients
) -> None:
    seeking_replica, other = await start_replica(), await start_replica()
    ann = await clients.open(target=seeking_replica.target, display_name="Ann")
    bob = await clients.open(target=other.target, display_name="Bob")
    async with seeking(ann.seek()) as ann_seeking:
        first = await ann_seeking.first_waiting()
        loop = asyncio.get_running_loop()
        first_seen = loop.time()

        # Stopped as a deploy stops it: the seek's stream is sent away, and the seek leaves
        # the pool, its place kept for the resume.
        await seeking_replica.server.stop(DRAIN_SECONDS)
        await seeking_replica.stop()
        # The seek tries again, and fails, while the replica is away.
        await ann_seeking.until(lambda: ann_seeking.seek.reconnects >= 2, "reconnects")
        await start_replica(port=seeking_replica.port)
        seen_before = len(ann_seeking.waiting)
        await ann_seeking.until(lambda: len(ann_seeking.waiting) > seen_before, "a resumed wait")
        resumed = ann_seeking.waiting[seen_before]
        # The same seek, resumed: its wait counts from when it began, not from the restart.
        assert resumed.waited_seconds >= first.waited_seconds + (loop.time() - first_seen) - 0.5
        assert ann_seeking.seek.request_id

        async with seeking(bob.seek()) as bob_seeking:
            ann_paired, bob_paired = await both_paired(ann_seeking, bob_seeking)
    await first_move_reaches_the_other((ann, ann_paired), (bob, bob_paired))


async def test_a_seek_resumed_on_another_connection_goes_on_there_and_pairs(
    clients: Clients,
) -> None:
    """The same player's seek taken up by its request id elsewhere (another device, a new
    connection): the first stream ends with SEEK_IN_PROGRESS, never retried, and the seek
    pairs in the second with the time it had waited."""
    ann = await clients.open(display_name="Ann")
    bob = await clients.open(display_name="Bob")
    assert ann.identity is not None
    elsewhere = await clients.open(token=ann.identity.token)
    async with seeking(ann.seek()) as first:
        waited = (await first.first_waiting()).waited_seconds
        async with seeking(elsewhere.seek(request_id=first.seek.request_id)) as second:
            resumed = await second.first_waiting()
            await first.until(lambda: first.ended, "the first stream to end")
            assert isinstance(first.error, ActionRefusedError)
            assert first.error.reason is Reason.SEEK_IN_PROGRESS and first.paired is None
            assert resumed.waited_seconds >= waited and resumed.seekers_in_pool == 1

            async with seeking(bob.seek()) as bob_seeking:
                ann_paired, bob_paired = await both_paired(second, bob_seeking)
    await first_move_reaches_the_other((elsewhere, ann_paired), (bob, bob_paired))


async def _settle(redis: Redis, player: GotiClient, rating: GlickoRating, games: int) -> None:
    """Give the player a rating that is no longer provisional, as earlier rated games would."""
    assert player.player is not None
    await redis.hset(
        keys.player(player.player.player_id),
        rating_field(game_pb2.VARIANT_ENGLISH),
        StoredRating(rating, games).encode(),
    )


async def test_a_rated_game_moves_both_players_on_the_leaderboard(
    clients: Clients, redis: Redis
) -> None:
    ann = await clients.open(display_name="Ann")
    bob = await clients.open(display_name="Bob")
    await _settle(redis, ann, GlickoRating(1580.0, 90.0, 0.06), 20)
    await _settle(redis, bob, GlickoRating(1642.5, 95.0, 0.059), 41)
    assert (await ann.leaderboard()).entries == ()
    before = {player: await player.me() for player in (ann, bob)}
    assert [str(me.rating(ENGLISH)) for me in before.values()] == ["1580", "1642"]

    ann_paired, bob_paired = await pair(ann, bob, rated=True)
    table = ann_paired.table
    assert table.rated
    assert ann_paired.opponent_rating == before[bob].rating(ENGLISH)
    assert bob_paired.opponent_rating == before[ann].rating(ENGLISH)
    turn = table.game.turn
    assert turn is not None
    ann_moves_first = ann_paired.table.role.holds(turn.side)
    loser, winner = (ann, bob) if ann_moves_first else (bob, ann)
    loser_name, winner_name = ("Ann", "Bob") if ann_moves_first else ("Bob", "Ann")
    await loser.resign(table.table_id)

    board = await loser.leaderboard(ENGLISH)
    ranked = {entry.player.display_name: entry for entry in board.entries}
    assert set(ranked) == {"Ann", "Bob"} and [e.rank for e in board.entries] == [1, 2]
    assert board.entries[0].rating.rating >= board.entries[1].rating.rating
    for player, name in ((ann, "Ann"), (bob, "Bob")):
        entry = ranked[name]
        old = before[player].rating(ENGLISH)
        assert old is not None and entry.rating.games == old.games + 1
        if player is winner:
            assert entry.rating.rating > old.rating
        else:
            assert entry.rating.rating < old.rating
        assert (await player.me()).rating(ENGLISH) == entry.rating
    assert board.you == ranked[loser_name]

    # The next seek shows the new rating.
    async with seeking(winner.seek(ENGLISH, rated=True)) as winner_seeking:
        waiting = await winner_seeking.first_waiting()
    assert waiting.rating == ranked[winner_name].rating


async def test_bad_input_is_an_invalid_request_naming_the_field(clients: Clients) -> None:
    ann = await clients.open(display_name="Ann")
    unknown = dataclasses.replace(ENGLISH, name="frisian")
    with pytest.raises(InvalidRequestError) as refused_variant:
        ann.seek(unknown)
    with pytest.raises(InvalidRequestError) as refused_timer:
        ann.seek(ENGLISH, turn_timer=45)
    with pytest.raises(InvalidRequestError) as refused_board:
        await ann.leaderboard(unknown)
    # A request id the server refuses: its refusal comes up from the stream.
    with pytest.raises(InvalidRequestError) as refused_id:
        async for _ in ann.seek(ENGLISH, request_id="not an id!"):
            pass

    fields = [
        (error.value.field, error.value.code, error.value.reason)
        for error in (refused_variant, refused_timer, refused_board, refused_id)
    ]
    invalid = (grpc.StatusCode.INVALID_ARGUMENT, Reason.INVALID_REQUEST)
    assert fields == [
        ("variant", *invalid),
        ("turn_timer", *invalid),
        ("variant", *invalid),
        ("request_id", *invalid),
    ]
    # Nothing was entered: a good seek waits alone.
    async with seeking(ann.seek()) as alone:
        assert (await alone.first_waiting()).seekers_in_pool == 1
