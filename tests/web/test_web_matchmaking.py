"""Play online now over Connect and gRPC-Web, from the tables runtime's own matchmaking
servicer: two seeks from the web port meet at one table that both then play, a closed seek
stream leaves its pool at once (and another seek is then refused no longer), and a rated game
paired there reaches the leaderboard, which is read like any other call, as a GET too."""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.parse
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any, Final

import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from redis.asyncio import Redis

from goti.api.v1 import game_pb2, matchmaking_pb2, players_pb2, tables_pb2
from goti.ratings import Rating
from goti.tables import keys
from goti.tables.rated_games import StoredRating, rating_field

from .conftest import WebBackend
from .test_web_api import PROTOCOLS, BrowserCalls, browser_calls, reason_of, request_id
from .test_web_page import fetch

WAIT_SECONDS = 60.0
"""The longest a condition is waited for: generous, for a busy machine."""
ENGLISH_CASUAL_30S = keys.seek_pool(
    game_pb2.VARIANT_ENGLISH, matchmaking_pb2.SEEK_TIMER_30_SECONDS, False
)
SETTLED: Final = StoredRating(Rating(1580.0, 90.0, 0.06), 20)
"""A rating that is no longer provisional (deviation under 110), close enough to a new
player's 1500 to be paired with one at once."""
SEAT_OF: Final[dict[int, tables_pb2.Role.ValueType]] = {
    game_pb2.COLOR_BLACK: tables_pb2.ROLE_BLACK,
    game_pb2.COLOR_WHITE: tables_pb2.ROLE_WHITE,
}


Browser = tuple[BrowserCalls, players_pb2.Player]
"""A browser's calls to the web port and the guest it signed in as."""


@contextlib.asynccontextmanager
async def ann_and_bob(
    backend: WebBackend, protocol: ProtocolType = ProtocolType.CONNECT
) -> AsyncIterator[tuple[Browser, Browser]]:
    """Two browsers, each signed in as a new guest."""
    async with (
        browser_calls(backend, protocol) as ann,
        browser_calls(backend, protocol) as bob,
    ):
        yield (ann, await ann.sign_in()), (bob, await bob.sign_in())


def seek_request(*, rated: bool = False) -> matchmaking_pb2.SeekRequest:
    return matchmaking_pb2.SeekRequest(
        request_id=request_id(),
        variant=game_pb2.VARIANT_ENGLISH,
        timer=matchmaking_pb2.SEEK_TIMER_30_SECONDS,
        rated=rated,
    )


async def paired_from(
    stream: AsyncGenerator[Any, None],
) -> tuple[list[matchmaking_pb2.SeekWaiting], matchmaking_pb2.SeekPaired]:
    """The waiting messages a seek stream sends from now on, and the pairing that ends it;
    the stream is closed after."""
    waiting: list[matchmaking_pb2.SeekWaiting] = []
    async with contextlib.aclosing(stream):
        async for response in stream:
            if response.HasField("paired"):
                paired: matchmaking_pb2.SeekPaired = response.paired
                return waiting, paired
            waiting.append(response.waiting)
    raise AssertionError(f"the seek ended unpaired after {len(waiting)} waiting messages")


async def seek_until_paired(
    calls: BrowserCalls, request: matchmaking_pb2.SeekRequest
) -> tuple[list[matchmaking_pb2.SeekWaiting], matchmaking_pb2.SeekPaired]:
    """The waiting messages of a seek, and the pairing that ended it."""
    return await paired_from(calls.seek(request))


async def both_paired(
    first: tuple[BrowserCalls, matchmaking_pb2.SeekRequest],
    second: tuple[BrowserCalls, matchmaking_pb2.SeekRequest],
) -> tuple[matchmaking_pb2.SeekPaired, matchmaking_pb2.SeekPaired]:
    (_, one), (_, other) = await asyncio.wait_for(
        asyncio.gather(seek_until_paired(*first), seek_until_paired(*second)), WAIT_SECONDS
    )
    assert one.table.table_id == other.table.table_id
    assert {one.your_role, other.your_role} == {tables_pb2.ROLE_BLACK, tables_pb2.ROLE_WHITE}
    return one, other


async def until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Wait until ``check()`` holds, within :data:`WAIT_SECONDS`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_SECONDS
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        await asyncio.sleep(0.05)


async def next_event(stream: Any, skipped: list[str] | None = None) -> tables_pb2.TableEvent:
    """The next event of a watch, past its heartbeats (and snapshots); what it passed is added
    to ``skipped``: each message's kind and seq."""
    async for response in stream:
        if response.HasField("event"):
            event: tables_pb2.TableEvent = response.event
            return event
        if skipped is not None:
            kind = response.WhichOneof("message")
            seq = response.snapshot.table.seq if kind == "snapshot" else response.heartbeat.seq
            skipped.append(f"{kind} at seq {seq}")
    raise AssertionError("the watch ended")


async def play_one_seen_by_the_other(
    mover: BrowserCalls, watcher: BrowserCalls, table_id: str
) -> str:
    """The player to move plays their first legal move; the other player's watch (over the web
    port too) receives it. Returns the move's notation."""
    now = (await mover.call("GetTable", tables_pb2.GetTableRequest(table_id=table_id))).table
    move = now.game.turn.legal_moves[0]
    skipped: list[str] = []
    async with contextlib.aclosing(watcher.watch_table(table_id, after_seq=now.seq)) as watch:
        if now.seq == 0:
            # A watch from seq 0 opens with a snapshot of the table as the server finds it: a
            # move that lands first is folded into it. The move waits for that snapshot, so
            # that it comes as an event (a real client's next message either way).
            opening = await asyncio.wait_for(anext(watch), WAIT_SECONDS)
            assert opening.WhichOneof("message") == "snapshot", opening
            assert opening.snapshot.table.seq == 0, opening.snapshot.table
        seen = asyncio.ensure_future(next_event(watch, skipped))
        await mover.call(
            "Play",
            tables_pb2.PlayRequest(
                table_id=table_id,
                request_id=request_id(),
                expected_seq=now.seq,
                notation=move.notation,
            ),
        )
        event = await asyncio.wait_for(seen, WAIT_SECONDS)
    # A watch from the seq the mover saw, once it has opened, sends that move as an event,
    # never folded into a snapshot; what it sent before the event is named if it did not.
    assert event.move_played.record.move.notation == move.notation, (
        f"watch from seq {now.seq}: first event seq {event.seq} "
        f"{event.move_played.record.move.notation!r} after {skipped}, not {move.notation!r}"
    )
    notation: str = move.notation
    return notation


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=["connect", "grpc-web"])
async def test_two_seeks_meet_at_one_table_and_each_sees_the_others_move(
    web_backend: WebBackend, protocol: ProtocolType
) -> None:
    async with ann_and_bob(web_backend, protocol) as ((ann, ann_player), (bob, bob_player)):
        # Ann waits first: her stream says so, alone in the pool, at a new player's rating.
        ann_stream = ann.seek(seek_request())
        first = (await asyncio.wait_for(anext(ann_stream), WAIT_SECONDS)).waiting
        ann_seek = asyncio.ensure_future(paired_from(ann_stream))
        bob_waiting, bob_paired = await asyncio.wait_for(
            seek_until_paired(bob, seek_request()), WAIT_SECONDS
        )
        _, ann_paired = await asyncio.wait_for(ann_seek, WAIT_SECONDS)
        assert first.seekers_in_pool == 1
        assert (first.rating.rating, first.rating.provisional) == (1500, True)
        assert first.min_rating <= 1500 <= first.max_rating
        assert all(waiting.seekers_in_pool in (1, 2) for waiting in bob_waiting)

        table = ann_paired.table
        assert bob_paired.table.table_id == table.table_id
        assert {ann_paired.your_role, bob_paired.your_role} == {
            tables_pb2.ROLE_BLACK,
            tables_pb2.ROLE_WHITE,
        }
        assert ann_paired.opponent.player_id == bob_player.player_id
        assert bob_paired.opponent.player_id == ann_player.player_id
        assert ann_paired.opponent_rating.rating == 1500
        assert table.status == tables_pb2.TABLE_STATUS_PLAYING
        assert table.turn_timer_seconds == 30 and not table.rated
        assert table.black.rating.provisional and table.white.rating.provisional

        # The next thing each does: the player to move plays, the other sees it and replies.
        roles = {ann_paired.your_role: ann, bob_paired.your_role: bob}
        mover = roles[SEAT_OF[table.game.turn.side]]
        other = bob if mover is ann else ann
        first_move = await play_one_seen_by_the_other(mover, other, table.table_id)
        reply = await play_one_seen_by_the_other(other, mover, table.table_id)
        read = await ann.call("GetTable", tables_pb2.GetTableRequest(table_id=table.table_id))
        assert list(read.table.game.moves) == [first_move, reply]


async def _in_pool(backend: WebBackend, player_id: str) -> bool:
    redis = backend.runtime.store.redis
    return await redis.zscore(ENGLISH_CASUAL_30S, player_id) is not None


async def test_a_closed_seek_stream_leaves_the_pool_at_once_and_the_next_seek_pairs(
    web_backend: WebBackend,
) -> None:
    async with ann_and_bob(web_backend) as ((ann, ann_player), (bob, bob_player)):
        stream = ann.seek(seek_request())
        first = await asyncio.wait_for(anext(stream), WAIT_SECONDS)
        assert first.waiting.seekers_in_pool == 1
        assert await _in_pool(web_backend, ann_player.player_id)
        # One seek at a time: a second, while the first is open, is refused with its reason.
        with pytest.raises(ConnectError) as refused:
            await anext(ann.seek(seek_request()))
        assert refused.value.code is Code.FAILED_PRECONDITION
        assert reason_of(refused.value)[0] == "SEEK_IN_PROGRESS"

        # The browser goes away: its seek leaves the pool with its stream, not seconds later
        # when a pairing finds it stale (nobody else is in the pool to pair it with).
        await stream.aclose()
        await until(
            lambda: _not(_in_pool(web_backend, ann_player.player_id)),
            "Ann's closed seek leaves its pool",
        )

        # Bob now waits alone; Ann's new seek is no longer refused, and they meet.
        bob_stream = bob.seek(seek_request())
        alone = await asyncio.wait_for(anext(bob_stream), WAIT_SECONDS)
        assert alone.waiting.seekers_in_pool == 1
        # His page closes that stream too; the server learns of it a moment later.
        await bob_stream.aclose()
        await until(
            lambda: _not(_in_pool(web_backend, bob_player.player_id)),
            "Bob's closed seek leaves its pool",
        )
        await both_paired((ann, seek_request()), (bob, seek_request()))


async def _not(check: Awaitable[bool]) -> bool:
    return not await check


async def _leaderboard_by_get(backend: WebBackend, token: str) -> dict[str, Any]:
    """GetLeaderboard as a Connect GET in JSON, as curl would send it (a reading call)."""
    query = urllib.parse.urlencode({"encoding": "json", "message": "{}"})
    answer = await fetch(
        f"{backend.url}goti.api.v1.MatchmakingService/GetLeaderboard?{query}",
        headers={"authorization": f"Bearer {token}"},
    )
    assert answer.status == 200, answer.body
    board: dict[str, Any] = json.loads(answer.body)
    return board


async def test_a_rated_game_paired_on_the_web_port_reaches_the_leaderboard(
    web_backend: WebBackend, redis: Redis
) -> None:
    async with ann_and_bob(web_backend) as ((ann, ann_player), (bob, _)):
        # Ann has played rated games before: her rating is settled. Bob is new.
        await redis.hset(
            keys.player(ann_player.player_id),
            rating_field(game_pb2.VARIANT_ENGLISH),
            SETTLED.encode(),
        )
        empty = await ann.call("GetLeaderboard", matchmaking_pb2.GetLeaderboardRequest())
        assert list(empty.entries) == [] and not empty.HasField("you")

        ann_paired, bob_paired = await both_paired(
            (ann, seek_request(rated=True)), (bob, seek_request(rated=True))
        )
        table = ann_paired.table
        assert table.rated
        assert ann_paired.opponent_rating.provisional
        assert (bob_paired.opponent_rating.rating, bob_paired.opponent_rating.provisional) == (
            1580,
            False,
        )
        # The player to move resigns: the game counts, once, in both ratings.
        roles = {ann_paired.your_role: ann, bob_paired.your_role: bob}
        loser = roles[SEAT_OF[table.game.turn.side]]
        await loser.call(
            "Resign",
            tables_pb2.ResignRequest(
                table_id=table.table_id, request_id=request_id(), expected_seq=table.seq
            ),
        )
        board = await bob.call("GetLeaderboard", matchmaking_pb2.GetLeaderboardRequest())
        assert [entry.player.player_id for entry in board.entries] == [ann_player.player_id]
        assert not board.entries[0].rating.provisional
        assert board.entries[0].rating.games == SETTLED.games + 1
        assert not board.HasField("you")  # Bob's rating is still provisional
        assert (board.entries[0].rating.rating > 1580) is (loser is bob)

        got = await _leaderboard_by_get(web_backend, ann.token)
        assert got["you"]["rank"] == 1
        assert got["you"]["player"]["playerId"] == ann_player.player_id
        me = await bob.call("GetMe", players_pb2.GetMeRequest())
        assert [(rating.games, rating.provisional) for rating in me.ratings] == [(1, True)]
