"""Past a game's end, for every way a game ends: a watcher resuming from any seq gets exactly
the events it missed, the last move and the GameOver included; every command of the game,
retried with its request_id, gets its first answer (or, once its events have left the log,
STALE_SEQ, never a second application); then the players ask for a rematch and the first
move at the new table reaches the other player.

The games are scripted move lists of English draughts, found with the rules library and
checked by hand: each ends the way its name says at its last move.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

import grpc
import pytest
from redis.asyncio import Redis

from goti.api.v1 import game_pb2, tables_pb2
from goti.tables.options import TablesOptions
from goti.tables.store import DEFAULT_REQUEST_MEMORY

from .conftest import StartReplica
from .table_calls import (
    CALL_TIMEOUT,
    Guest,
    eventually,
    first_legal,
    kinds,
    new_guest,
    new_request_id,
    refusal,
    watching,
)


def _moves(text: str) -> list[str]:
    return text.split()


# Black (the player who creates the table and moves first) takes White's last man with a
# forced capture: White has no pieces.
NO_PIECES: Final = _moves(
    "9-14 21-17 14x21 24-19 10-15 19x10 6x15 22-18 15x22 26x17 11-15 30-26 21x30 23-18 "
    "30x23x14x21 29-25 21x30 31-26 30x23 27x18x11 8x15 28-24 5-9 24-19 15x24 32-27 24x31"
)
# Black's forced last capture leaves White's men blocked: White has no move.
NO_MOVES: Final = _moves(
    "10-14 23-18 14x23 26x19 12-16 19x12 9-14 22-18 14x23 27x18 11-16 24-19 16x23 30-26 "
    "23x30 21-17 30x21x14x23 31-26 23x30 29-25 30x21 32-27 21-17 28-24 17-14 27-23 7-10 "
    "23-18 14x23 24-19 23x16"
)
# Both sides crown a king (White on 1, Black on 32), then shuttle them 1-5 and 32-27.
_TO_KINGS: Final = _moves(
    "10-14 22-17 14-18 23x14 9x18 24-20 11-16 20x11 8x15 27-23 18x27 31x24 6-10 17-14 "
    "10x17 21x14 15-19 24x15 7-11 15x8 4x11 25-22 2-7 14-10 7x14 22-18 14x23 26x19 5-9 "
    "29-25 3-8 28-24 1-5 30-26 9-14 26-22 11-16 24-20 16x23 32-28 14-18 22x15 5-9 15-10 "
    "8-11 20-16 11x20 25-22 23-27 10-6 9-13 6-1 27-32"
)
THREEFOLD: Final = [*_TO_KINGS, *_moves("1-5 32-27 5-1 27-32 1-5 32-27 5-1 27-32")]
# After the kings are crowned, forty moves each of king moves alone, no position thrice.
MOVE_LIMIT: Final = [
    *_TO_KINGS,
    *_moves(
        "1-5 32-27 5-9 27-31 9-6 31-27 6-2 27-31 2-7 31-27 7-11 27-23 11-8 23-19 8-4 19-16 "
        "4-8 16-19 8-11 19-23 11-7 23-27 7-11 27-31 11-15 31-27 15-18 27-31 18-15 31-27 "
        "15-10 27-32 10-6 32-27 6-2 27-23 2-7 23-19 7-10 19-23 10-6 23-19 6-9 19-16 9-5 "
        "16-11 5-9 11-15 9-14 15-11 14-17 11-16 17-14 16-11 14-18 11-7 18-23 7-10 23-18 "
        "10-6 18-23 6-10 23-27 10-15 27-31 15-10 31-27 10-7 27-31 7-2 31-27 2-7 27-31 7-3 "
        "31-26 3-8 26-23 8-4 23-26 4-8"
    ),
]
_OPENING: Final = _moves("11-15 23-19 8-11 22-17")

TURN_TIMER_SECONDS: Final = 6
"""Long enough for the scripted moves before the last to come in time, as a rule; a move
that comes late anyway (a busy machine) makes the test start a new game."""
TIMED_GAME_TRIES: Final = 5


@dataclass
class Answered:
    """A command as it was sent, and the events its first answer carried."""

    guest: Guest
    method: str
    request: Any
    events: list[tables_pb2.TableEvent]

    async def retry(self) -> list[tables_pb2.TableEvent]:
        call = getattr(self.guest.tables, self.method)
        response = await call(self.request, metadata=self.guest.metadata, timeout=CALL_TIMEOUT)
        return list(response.events)


@dataclass
class Game:
    """Two guests at one table, every command they sent, and every event it appended."""

    table: tables_pb2.Table
    seats: dict[int, Guest]
    answered: list[Answered] = dataclasses.field(default_factory=list)
    appended: list[tables_pb2.TableEvent] = dataclasses.field(default_factory=list)

    @property
    def seq(self) -> int:
        return self.appended[-1].seq if self.appended else self.table.seq

    async def send(self, guest: Guest, method: str, request: Any) -> list[tables_pb2.TableEvent]:
        request.table_id = self.table.table_id
        request.request_id = new_request_id()
        request.expected_seq = self.seq
        call = getattr(guest.tables, method)
        response = await call(request, metadata=guest.metadata, timeout=CALL_TIMEOUT)
        events = list(response.events)
        self.answered.append(Answered(guest, method, request, events))
        self.appended += events
        return events

    async def play(self, notation: str) -> None:
        moves = [event.move_played for event in self.appended if event.HasField("move_played")]
        turn = moves[-1].next if moves else self.table.game.turn
        guest = self.seats[turn.side]
        await self.send(guest, "Play", tables_pb2.PlayRequest(notation=notation))


async def _seated(channel: grpc.aio.Channel, *, turn_timer_seconds: int = 0) -> Game:
    ann = await new_guest(channel, "Ann")
    bob = await new_guest(channel, "Bob")
    created = await ann.create(
        starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1, turn_timer_seconds=turn_timer_seconds
    )
    joined = await bob.join(created.table.code)
    assert created.your_role == tables_pb2.ROLE_BLACK
    return Game(joined.table, {game_pb2.COLOR_BLACK: ann, game_pb2.COLOR_WHITE: bob})


async def _scripted(game: Game, moves: list[str]) -> None:
    for notation in moves:
        await game.play(notation)


async def _timed_game_before_the_last_move(channel: grpc.aio.Channel, moves: list[str]) -> Game:
    """A game with a turn timer, played to the last of ``moves``, which the players leave to
    the timer. Where a move of theirs came too late (the timer had played one), the game has
    left the script: it is abandoned and a new one played."""
    for _ in range(TIMED_GAME_TRIES):
        game = await _seated(channel, turn_timer_seconds=TURN_TIMER_SECONDS)
        try:
            await _scripted(game, moves[:-1])
        except grpc.aio.AioRpcError as error:
            if error.code() is not grpc.StatusCode.ABORTED:
                raise
            continue  # STALE_SEQ: the timer played first
        return game
    raise AssertionError(f"the timer beat a scripted move in each of {TIMED_GAME_TRIES} games")


async def _resigned(game: Game) -> None:
    await _scripted(game, _OPENING)
    await game.send(game.seats[game_pb2.COLOR_BLACK], "Resign", tables_pb2.ResignRequest())


async def _agreed(game: Game) -> None:
    ann, bob = game.seats[game_pb2.COLOR_BLACK], game.seats[game_pb2.COLOR_WHITE]
    await _scripted(game, _OPENING)
    # Offered before moving; the opponent answers on their own turn, after the move.
    await game.send(ann, "OfferDraw", tables_pb2.OfferDrawRequest())
    await game.play("9-13")
    await game.send(bob, "AnswerDraw", tables_pb2.AnswerDrawRequest(accept=True))


ENDINGS: Final[dict[str, tuple[Callable[[Game], Awaitable[None]], int, int]]] = {
    "no pieces": (
        lambda game: _scripted(game, NO_PIECES),
        game_pb2.TERMINATION_NO_PIECES,
        game_pb2.COLOR_BLACK,
    ),
    "no moves": (
        lambda game: _scripted(game, NO_MOVES),
        game_pb2.TERMINATION_NO_MOVES,
        game_pb2.COLOR_BLACK,
    ),
    "threefold repetition": (
        lambda game: _scripted(game, THREEFOLD),
        game_pb2.TERMINATION_THREEFOLD_REPETITION,
        game_pb2.COLOR_UNSPECIFIED,
    ),
    "the 40-move rule": (
        lambda game: _scripted(game, MOVE_LIMIT),
        game_pb2.TERMINATION_MOVE_LIMIT,
        game_pb2.COLOR_UNSPECIFIED,
    ),
    "resignation": (_resigned, game_pb2.TERMINATION_RESIGNATION, game_pb2.COLOR_WHITE),
    "an agreed draw": (_agreed, game_pb2.TERMINATION_AGREEMENT, game_pb2.COLOR_UNSPECIFIED),
}


async def _check_resuming(channel: grpc.aio.Channel, game: Game, window: int) -> None:
    """From every seq, a watcher gets exactly what it missed, then the finished table."""
    last = game.seq
    for after in range(last + 1):
        async with watching(channel, game.table.table_id, after_seq=after) as watch:
            await watch.until_seq(last)
        assert watch.error is None, watch.error
        if after == 0 or after < last - window:
            snapshot = watch.messages[0].snapshot
            assert snapshot.table.seq == last
            assert snapshot.table.status == tables_pb2.TABLE_STATUS_FINISHED
            assert snapshot.table.game.outcome == game.appended[-1].game_over.outcome
            assert watch.events == []
        else:
            assert not any(message.HasField("snapshot") for message in watch.messages)
            missed = [event for event in game.appended if event.seq > after]
            assert watch.events == missed, f"after_seq {after}"


async def _check_retries(game: Game, window: int) -> None:
    """Every command retried: its first answer while the log and the table's memory of
    requests hold it, else STALE_SEQ; never applied twice."""
    last = game.seq
    remembered = game.answered[-DEFAULT_REQUEST_MEMORY:]
    for command in game.answered:
        kept = any(command is recent for recent in remembered) and all(
            event.seq > last - window for event in command.events
        )
        if kept:
            assert await command.retry() == command.events, command.method
        else:
            status = await refusal(command.retry())
            assert (status.code, status.reason) == (grpc.StatusCode.ABORTED, "STALE_SEQ")
    assert (await game.seats[game_pb2.COLOR_BLACK].get(game.table.table_id)).table.seq == last


async def _check_rematch(channel: grpc.aio.Channel, game: Game) -> None:
    """Both ask for a rematch; at the new table, colours swapped, the first move reaches the
    other player's watch."""
    ann, bob = game.seats[game_pb2.COLOR_BLACK], game.seats[game_pb2.COLOR_WHITE]
    await game.send(ann, "Rematch", tables_pb2.RematchRequest())
    request = tables_pb2.RematchRequest(
        table_id=game.table.table_id, request_id=new_request_id(), expected_seq=game.seq
    )
    started = await bob.tables.Rematch(request, metadata=bob.metadata, timeout=CALL_TIMEOUT)
    assert kinds(started.events) == ["rematch_started"]
    rematch = started.rematch_table
    assert rematch.black.player.player_id == bob.player_id  # colours swapped
    async with watching(channel, rematch.table_id, metadata=ann.metadata) as watch:
        await eventually(lambda: bool(watch.messages))
        played = await bob.play(rematch.table_id, first_legal(rematch.game.turn), rematch.seq)
        await watch.until_seq(played.events[-1].seq)
    assert watch.events[-1] == played.events[-1]
    assert watch.events[-1].move_played.next.side == game_pb2.COLOR_WHITE


@pytest.mark.parametrize("ending", sorted(ENDINGS))
async def test_after_the_game_ends_watchers_resume_and_retries_get_their_first_answers(
    channel: grpc.aio.Channel, options: TablesOptions, ending: str
) -> None:
    play, termination, winner = ENDINGS[ending]
    game = await _seated(channel)
    joined = await game.seats[game_pb2.COLOR_BLACK].get(game.table.table_id)
    async with watching(channel, game.table.table_id, after_seq=joined.table.seq) as live:
        await play(game)
        assert game.appended[-1].HasField("game_over")
        await live.until_seq(game.seq)
    outcome = game.appended[-1].game_over.outcome
    assert (outcome.termination, outcome.winner) == (termination, winner)
    assert live.events == game.appended
    await _check_resuming(channel, game, options.table_log_events)
    await _check_retries(game, options.table_log_events)
    await _check_rematch(channel, game)


async def test_a_turn_timer_move_that_ends_the_game_is_resumed_past_too(
    start_replica: StartReplica, options: TablesOptions, redis: object
) -> None:
    replica = await start_replica(options=options)
    game = await _timed_game_before_the_last_move(replica.channel, NO_PIECES)
    ann = game.seats[game_pb2.COLOR_BLACK]
    before = game.seq
    async with watching(replica.channel, game.table.table_id, after_seq=before) as watch:
        await watch.until_seq(before + 2, timeout=TURN_TIMER_SECONDS + 60)
    timer_move, over = watch.events
    assert timer_move.move_played.source == tables_pb2.MOVE_SOURCE_TIMER
    assert timer_move.move_played.record.move.notation == NO_PIECES[-1]
    assert over.game_over.outcome.termination == game_pb2.TERMINATION_NO_PIECES
    finished = (await ann.get(game.table.table_id)).table
    assert finished.status == tables_pb2.TABLE_STATUS_FINISHED and finished.seq == before + 2
    ended = [*game.appended, timer_move, over]
    for after in range(before - 3, before + 3):
        async with watching(replica.channel, game.table.table_id, after_seq=after) as resumed:
            await resumed.until_seq(before + 2)
        assert resumed.error is None, resumed.error
        assert resumed.events == [event for event in ended if event.seq > after]
    # The player's last command before the timer, retried, still gets its first answer.
    assert await game.answered[-1].retry() == game.answered[-1].events


async def test_a_watcher_that_missed_the_last_move_on_pub_sub_catches_up_from_the_log(
    start_replica: StartReplica, redis: Redis
) -> None:
    here, there = await start_replica(), await start_replica()
    game = await _seated(here.channel)
    await _scripted(game, NO_PIECES[:-2])
    # The other replica plays the moves: its own watchers would have them without pub/sub.
    game.seats = {color: guest.on(there.channel) for color, guest in game.seats.items()}
    await game.play(NO_PIECES[-2])
    before = game.seq
    async with watching(here.channel, game.table.table_id, after_seq=before - 1) as watch:
        # The first event comes from the log, so the stream is subscribed by then.
        await watch.until_seq(before)
        # Cut the pub/sub connections and keep them from coming back until the winning move
        # is committed (on connections already open): the move's wake-up is lost, and the
        # stream must find the move and the GameOver in the log.
        async with _pub_sub_cut(redis):
            await game.play(NO_PIECES[-1])
        await watch.until_seq(game.seq)
    assert watch.error is None, watch.error
    assert watch.events == game.appended[-3:]
    assert kinds(watch.events) == ["move_played", "move_played", "game_over"]


async def test_a_watcher_on_the_replica_that_commits_gets_the_move_without_pub_sub(
    start_replica: StartReplica, redis: Redis, options: TablesOptions
) -> None:
    # No heartbeat within the test: only the replica's own hand-off can bring the move.
    quiet = dataclasses.replace(options, heartbeat_seconds=3600)
    here, there = await start_replica(options=quiet), await start_replica(options=quiet)
    game = await _seated(here.channel)
    await _scripted(game, NO_PIECES[:-3])
    before = game.seq
    async with (
        watching(here.channel, game.table.table_id, after_seq=before - 1) as near,
        watching(there.channel, game.table.table_id, after_seq=before - 1) as far,
    ):
        # The first event comes from the log, so each stream is subscribed by then.
        await near.until_seq(before)
        await far.until_seq(before)
        async with _pub_sub_cut(redis):
            await game.play(NO_PIECES[-3])
            await near.until_seq(game.seq)
        # Pub/sub back: the far watcher is told to catch up and reads the move from the log;
        # then both see the next move, once, live.
        await far.until_seq(game.seq)
        await game.play(NO_PIECES[-2])
        await near.until_seq(game.seq)
        await far.until_seq(game.seq)
    for watch in (near, far):
        assert watch.error is None, watch.error
        assert watch.events == game.appended[-3:]


@contextlib.asynccontextmanager
async def _pub_sub_cut(redis: Redis) -> AsyncIterator[None]:
    """Every pub/sub connection closed, and none subscribing again while inside (every other
    command still served)."""
    await redis.acl_setuser("default", enabled=True, commands=["-subscribe", "-psubscribe"])
    try:
        assert await redis.client_kill_filter(_type="pubsub") >= 1
        yield
    finally:
        await redis.acl_setuser("default", enabled=True, categories=["+@all"])
