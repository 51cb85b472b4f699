"""Ratings on the server: a rated game between two people, on two replicas, counts once in
both players' Glicko-2 ratings however it ends, and whatever retries, whichever timer
worker; the ratings show in GetMe, on the next table's seats, in the lobby and in the PDN;
the computer and pass-and-play never change one; the leaderboards.

A rated table is made here as the pairing of a rated seek makes one: a table whose record
has ``rated`` set before its second player is seated (the record is rewritten in Redis
between CreateTable and JoinTable).  The expected ratings come from
:func:`goti.ratings.both_after_game`, itself checked against Glickman's worked example in
``tests/ratings``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Final

import grpc
import pytest
from redis.asyncio import Redis

from goti import serving
from goti.api.v1 import (
    game_pb2,
    matchmaking_pb2,
    matchmaking_pb2_grpc,
    players_pb2,
    referee_pb2,
    tables_pb2,
)
from goti.ratings import Rating, both_after_game
from goti.settings import Settings
from goti.tables import events, keys
from goti.tables.commands import Ruling
from goti.tables.committing import Committer, RateGame
from goti.tables.loading import LoadedTable
from goti.tables.options import TablesOptions
from goti.tables.peers import Referee
from goti.tables.rated_games import StoredRating, rating_field, rating_message
from goti.tables.recent import RecentTables
from goti.tables.runtime import clock_ms

from .conftest import StartReplica, TablesReplica
from .table_calls import (
    CALL_TIMEOUT,
    Guest,
    eventually,
    first_legal,
    kinds,
    new_guest,
    new_request_id,
    refusal,
    until_read,
    watching,
)
from .test_tables_endings import ENDINGS, Game

ANN_BEFORE: Final = StoredRating(Rating(1580.0, 90.0, 0.06), 20)
"""Ann's rating before the game: settled (below the provisional deviation)."""
BOB_BEFORE: Final = StoredRating(Rating(1642.5, 95.0, 0.059), 41)
"""Bob's: settled, stronger, a little less certain."""
RATED_ENDINGS: Final = {
    "a win": "no pieces",
    "a resignation": "resignation",
    "an agreed draw": "an agreed draw",
}
"""Each way asked for, and the scripted game of ``test_tables_endings`` that ends so."""


async def _give_rating(redis: Redis, guest: Guest, stored: StoredRating) -> None:
    await redis.hset(
        keys.player(guest.player_id), rating_field(game_pb2.VARIANT_ENGLISH), stored.encode()
    )


async def _stored(redis: Redis, guest: Guest) -> bytes | None:
    value = await redis.hget(keys.player(guest.player_id), rating_field(game_pb2.VARIANT_ENGLISH))
    return value.encode() if isinstance(value, str) else value


async def _mark_rated(replica: TablesReplica, table_id: str) -> None:
    """Set ``rated`` on a waiting table's record, as the pairing of a rated seek does."""
    stored = await replica.runtime.store.load(table_id)
    record = tables_pb2.Table.FromString(stored.fields["table"])
    record.rated = True
    await replica.runtime.store.redis.hset(
        replica.runtime.store.keys.table(table_id).state, "table", record.SerializeToString()
    )


async def _rated_game(ann: Guest, bob: Guest, replica: TablesReplica) -> Game:
    """Ann (Black, moving first, on one replica) and Bob (White, on the other) at a rated
    table."""
    created = await ann.create(starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1)
    assert created.table.black.rating == rating_message(game_pb2.VARIANT_ENGLISH, ANN_BEFORE)
    await _mark_rated(replica, created.table.table_id)
    joined = await bob.join(created.table.code)
    assert joined.table.rated
    return Game(joined.table, {game_pb2.COLOR_BLACK: ann, game_pb2.COLOR_WHITE: bob})


@pytest.fixture
def replicas_options(options: TablesOptions) -> TablesOptions:
    """A short timer lease, so that a game left uncounted is taken up again soon."""
    return dataclasses.replace(options, timer_lease_seconds=1.0)


@pytest.mark.parametrize("ending", sorted(RATED_ENDINGS))
async def test_a_rated_game_counts_once_in_both_ratings_and_shows_everywhere(
    start_replica: StartReplica, redis: Redis, ending: str
) -> None:
    first, second = await start_replica(), await start_replica()
    ann = await new_guest(first.channel, "Ann")
    bob = (await new_guest(first.channel, "Bob")).on(second.channel)
    await _give_rating(redis, ann, ANN_BEFORE)
    await _give_rating(redis, bob, BOB_BEFORE)
    game = await _rated_game(ann, bob, first)
    assert game.table.white.rating == rating_message(game_pb2.VARIANT_ENGLISH, BOB_BEFORE)

    play_to_the_end, _, winner = ENDINGS[RATED_ENDINGS[ending]]
    await play_to_the_end(game)
    assert kinds(game.appended[-1:]) == ["game_over"]
    scores: dict[int, float] = {game_pb2.COLOR_WHITE: 1.0, game_pb2.COLOR_BLACK: 0.0}
    white_score = scores.get(winner, 0.5)
    bob_after, ann_after = both_after_game(BOB_BEFORE.rating, ANN_BEFORE.rating, white_score)
    expected_ann = ANN_BEFORE.after(ann_after)
    expected_bob = BOB_BEFORE.after(bob_after)
    # The ending command's own replica counts the game before it answers.
    assert await _stored(redis, ann) == expected_ann.encode()
    assert await _stored(redis, bob) == expected_bob.encode()
    assert ann_after.deviation < ANN_BEFORE.rating.deviation
    assert bob_after.deviation < BOB_BEFORE.rating.deviation
    if winner == game_pb2.COLOR_BLACK:
        assert ann_after.rating > ANN_BEFORE.rating.rating
    table_id = game.table.table_id
    timers = first.runtime.store.keys.table(table_id).shard.timers
    assert await redis.zscore(timers, table_id) is None

    # Retried, the ending command gets its first answer and counts nothing again; the
    # game's timer entry, due again, handled on both replicas at once, neither.
    assert await game.answered[-1].retry() == game.answered[-1].events
    await asyncio.gather(
        first.runtime.follow_ups.handle_due(table_id, 1),
        second.runtime.follow_ups.handle_due(table_id, 1),
    )
    await redis.zadd(timers, {table_id: 0})
    await _until_timer_gone(redis, timers, table_id)
    assert await _stored(redis, ann) == expected_ann.encode()
    assert await _stored(redis, bob) == expected_bob.encode()

    shown_ann = rating_message(game_pb2.VARIANT_ENGLISH, expected_ann)
    shown_bob = rating_message(game_pb2.VARIANT_ENGLISH, expected_bob)
    assert list((await ann.me()).ratings) == [shown_ann]
    assert list((await bob.me()).ratings) == [shown_bob]
    assert shown_ann.games == ANN_BEFORE.games + 1 and not shown_ann.provisional

    record = await ann.tables.GetRecord(
        tables_pb2.GetRecordRequest(table_id=table_id), timeout=CALL_TIMEOUT
    )
    assert f'[WhiteRating "{game.table.white.rating.rating}"]' in record.pdn
    assert f'[BlackRating "{game.table.black.rating.rating}"]' in record.pdn

    await _check_rated_rematch(game, second, shown_ann, shown_bob)
    await _check_lobby_shows(ann, shown_ann)


async def _until_timer_gone(
    redis: Redis, timers: str, table_id: str, timeout: float = 15.0
) -> None:
    """Wait until a timer worker has handled the table's entry (in ``timers``) and dropped
    it."""
    await until_read(
        lambda: redis.zscore(timers, table_id),
        lambda score: score is None,
        timeout=timeout,
        what="the table's timer entry was never handled",
    )


async def _check_rated_rematch(
    game: Game,
    watched_on: TablesReplica,
    shown_ann: players_pb2.Rating,
    shown_bob: players_pb2.Rating,
) -> None:
    """Both ask for a rematch: it is rated too, its seats show the new ratings, and its first
    move reaches the other player."""
    ann, bob = game.seats[game_pb2.COLOR_BLACK], game.seats[game_pb2.COLOR_WHITE]
    await game.send(ann, "Rematch", tables_pb2.RematchRequest())
    request = tables_pb2.RematchRequest(
        table_id=game.table.table_id, request_id=new_request_id(), expected_seq=game.seq
    )
    started = await bob.tables.Rematch(request, metadata=bob.metadata, timeout=CALL_TIMEOUT)
    rematch = started.rematch_table
    assert rematch.rated
    assert rematch.black.player.player_id == bob.player_id
    assert (rematch.black.rating, rematch.white.rating) == (shown_bob, shown_ann)
    async with watching(watched_on.channel, rematch.table_id, metadata=ann.metadata) as watch:
        await eventually(lambda: bool(watch.messages))
        played = await bob.play(rematch.table_id, first_legal(rematch.game.turn), rematch.seq)
        await watch.until_seq(played.events[-1].seq)
    assert watch.events[-1] == played.events[-1]


async def _check_lobby_shows(ann: Guest, shown_ann: players_pb2.Rating) -> None:
    created = await ann.create(visibility=tables_pb2.VISIBILITY_PUBLIC)
    assert shown_ann in (created.table.black.rating, created.table.white.rating)
    listed = await ann.tables.ListTables(tables_pb2.ListTablesRequest(), timeout=CALL_TIMEOUT)
    (listing,) = [table for table in listed.tables if table.table_id == created.table.table_id]
    assert listing.host_rating == shown_ann


async def test_a_replica_that_stops_at_the_games_end_leaves_it_to_the_timers_once(
    start_replica: StartReplica,
    redis: Redis,
    replicas_options: TablesOptions,
    settings: Settings,
    referee_target: str,
) -> None:
    """The resignation is committed as a replica commits it, and that replica stops before
    the rating follow-up runs: both replicas' timer workers find the game, and it counts
    once."""
    first = await start_replica(options=replicas_options)
    second = await start_replica(options=replicas_options)
    ann = await new_guest(first.channel, "Ann")
    bob = (await new_guest(first.channel, "Bob")).on(second.channel)
    await _give_rating(redis, ann, ANN_BEFORE)
    await _give_rating(redis, bob, BOB_BEFORE)
    game = await _rated_game(ann, bob, first)
    table_id = game.table.table_id

    channel = serving.open_channel(referee_target, settings)
    try:
        referee = Referee(channel, deadline_seconds=5.0)
        committer = Committer(
            first.runtime.store,
            referee,
            RecentTables(4),
            replicas_options,
            first.runtime.fanout,
            clock_ms=clock_ms,
        )
        loaded = LoadedTable.of(table_id, await first.runtime.store.load(table_id))
        response = await referee.apply(
            loaded.state,
            referee_pb2.ApplyRequest(
                side=game_pb2.COLOR_BLACK, game_action=referee_pb2.GAME_ACTION_RESIGN
            ),
        )
        settled = await committer.commit(
            loaded, Ruling(events.resigned(game_pb2.COLOR_BLACK, response), response)
        )
        await referee.close()
    finally:
        await channel.close()
    # The follow-up the commit called for is dropped, as by a replica killed at this point.
    assert isinstance(settled.follow_up, RateGame)
    assert await _stored(redis, ann) == ANN_BEFORE.encode()
    timers = first.runtime.store.keys.table(table_id).shard.timers
    assert await redis.zscore(timers, table_id) is not None

    bob_after, ann_after = both_after_game(BOB_BEFORE.rating, ANN_BEFORE.rating, 1.0)
    await _until_timer_gone(redis, timers, table_id)
    assert await _stored(redis, ann) == ANN_BEFORE.after(ann_after).encode()
    assert await _stored(redis, bob) == BOB_BEFORE.after(bob_after).encode()
    # Due once more and handled by both at once: still counted once.
    await asyncio.gather(
        first.runtime.follow_ups.handle_due(table_id, 1),
        second.runtime.follow_ups.handle_due(table_id, 1),
    )
    assert await _stored(redis, ann) == ANN_BEFORE.after(ann_after).encode()


@pytest.mark.parametrize(
    "opponent", [tables_pb2.OPPONENT_COMPUTER_EASY, tables_pb2.OPPONENT_PASS_AND_PLAY]
)
async def test_games_against_the_computer_or_on_one_device_never_change_a_rating(
    start_replica: StartReplica, redis: Redis, opponent: tables_pb2.Opponent.ValueType
) -> None:
    first, second = await start_replica(), await start_replica()
    ann = await new_guest(first.channel, "Ann")
    await _give_rating(redis, ann, ANN_BEFORE)
    created = await ann.create(
        opponent=opponent, starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1
    )
    table = created.table
    # No rating on either seat: neither could count.
    assert not table.black.HasField("rating") and not table.white.HasField("rating")
    await _mark_rated(first, table.table_id)
    # Resigned through the other replica, which reads the record marked rated.
    resigned = await ann.on(second.channel).resign(table.table_id, table.seq)
    assert kinds(resigned.events) == ["resigned", "game_over"]
    assert (await ann.get(table.table_id)).table.rated
    await second.runtime.follow_ups.handle_due(table.table_id, 1)
    assert await _stored(redis, ann) == ANN_BEFORE.encode()
    assert list((await ann.me()).ratings) == [rating_message(game_pb2.VARIANT_ENGLISH, ANN_BEFORE)]
    assert await redis.zcard(keys.leaderboard("english")) == 0


async def test_the_leaderboard_orders_players_leaves_out_the_provisional_and_the_gone(
    replica: TablesReplica, redis: Redis
) -> None:
    stub = matchmaking_pb2_grpc.MatchmakingServiceStub(replica.channel)
    guests = [await new_guest(replica.channel, name) for name in ("Ann", "Bob", "Cat", "Dan")]
    ann, bob, cat, dan = guests
    for guest, rating in ((ann, 1700.0), (bob, 1820.0), (dan, 1610.0)):
        stored = StoredRating(Rating(rating, 70.0, 0.06), 30)
        await _give_rating(redis, guest, stored)
        await redis.zadd(keys.leaderboard("english"), {guest.player_id: rating})
    # Cat's rating is provisional: a rated game leaves her off the board.
    await _give_rating(redis, cat, StoredRating(Rating(1900.0, 200.0, 0.06), 2))
    board = await stub.GetLeaderboard(
        matchmaking_pb2.GetLeaderboardRequest(), metadata=ann.metadata, timeout=CALL_TIMEOUT
    )
    assert [(entry.rank, entry.player.display_name) for entry in board.entries] == [
        (1, "Bob"),
        (2, "Ann"),
        (3, "Dan"),
    ]
    assert board.entries[0].rating.rating == 1820 and not board.entries[0].rating.provisional
    assert (board.you.rank, board.you.player.player_id) == (2, ann.player_id)
    provisional = await stub.GetLeaderboard(
        matchmaking_pb2.GetLeaderboardRequest(variant=game_pb2.VARIANT_ENGLISH),
        metadata=cat.metadata,
        timeout=CALL_TIMEOUT,
    )
    assert not provisional.HasField("you")
    # Bob's guest is removed (as after its idle days): his place goes, Ann moves up.
    await redis.delete(keys.player(bob.player_id))
    after = await stub.GetLeaderboard(
        matchmaking_pb2.GetLeaderboardRequest(), metadata=ann.metadata, timeout=CALL_TIMEOUT
    )
    assert [entry.player.display_name for entry in after.entries] == ["Ann", "Dan"]
    assert after.you.rank == 1
    assert await redis.zscore(keys.leaderboard("english"), bob.player_id) is None
    anonymous = await stub.GetLeaderboard(
        matchmaking_pb2.GetLeaderboardRequest(variant=game_pb2.VARIANT_RUSSIAN),
        timeout=CALL_TIMEOUT,
    )
    assert list(anonymous.entries) == [] and not anonymous.HasField("you")


async def test_a_rated_game_puts_settled_players_on_the_board_and_keeps_provisional_off(
    start_replica: StartReplica, redis: Redis
) -> None:
    first, second = await start_replica(), await start_replica()
    ann = await new_guest(first.channel, "Ann")
    bob = (await new_guest(first.channel, "Bob")).on(second.channel)
    await _give_rating(redis, ann, ANN_BEFORE)  # settled; Bob is new, provisional
    created = await ann.create(starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1)
    await _mark_rated(first, created.table.table_id)
    joined = await bob.join(created.table.code)
    assert joined.table.white.rating.provisional and joined.table.white.rating.rating == 1500
    await ann.resign(joined.table.table_id, joined.table.seq)  # Black resigns at once
    stub = matchmaking_pb2_grpc.MatchmakingServiceStub(second.channel)
    board = await stub.GetLeaderboard(
        matchmaking_pb2.GetLeaderboardRequest(), metadata=bob.metadata, timeout=CALL_TIMEOUT
    )
    assert [entry.player.player_id for entry in board.entries] == [ann.player_id]
    assert not board.HasField("you")
    bob_after, ann_after = both_after_game(Rating(), ANN_BEFORE.rating, 1.0)
    assert not ann_after.is_provisional and bob_after.is_provisional
    assert list((await bob.me()).ratings) == [
        rating_message(game_pb2.VARIANT_ENGLISH, StoredRating(bob_after, 1))
    ]


async def test_an_unknown_variant_is_refused_naming_the_field(channel: grpc.aio.Channel) -> None:
    stub = matchmaking_pb2_grpc.MatchmakingServiceStub(channel)
    status = await refusal(
        stub.GetLeaderboard(
            matchmaking_pb2.GetLeaderboardRequest(variant=7),  # type: ignore[arg-type]
            timeout=CALL_TIMEOUT,
        )
    )
    assert (status.code, status.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert status.metadata.get("field") == "variant"
