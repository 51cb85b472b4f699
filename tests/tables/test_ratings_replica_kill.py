"""A rated game's end survives the replica that committed it being killed: the game, paired by
a rated seek, is played to its last move on a tables process that is then killed with
SIGKILL, either the moment its final commit lands in Redis (before it could rate the game) or
right after it answered (having rated it).  Either way the other replica rates the game
exactly once (its timer worker's safety net in the first case), the final move retried there
gets its first answer, both players' GetMe agree with ``goti.ratings``, and the next rated
seek pairs them at a table whose seats show the new ratings and whose first move arrives.

To kill the replica between its commit and its rating follow-up, its Redis connections run
through :class:`HeldRepliesProxy`: once the replica sends a command naming the table's log
(only the final move's commit does), no reply from Redis reaches it again, so it cannot go on
from the commit; the test sees the commit in Redis, then kills it.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

import grpc
import pytest
import pytest_asyncio
from redis.asyncio import Redis
from service_ports import service_ports

from goti import serving
from goti.api.v1 import game_pb2, matchmaking_pb2, tables_pb2
from goti.ratings import both_after_game
from goti.settings import Settings
from goti.tables import keys
from goti.tables.rated_games import StoredRating, rating_field, rating_message

from .conftest import StartReplica, TablesReplica
from .table_calls import (
    CALL_TIMEOUT,
    Guest,
    kinds,
    new_guest,
    new_request_id,
    until_read,
    watching,
)
from .tables_subprocess import replica_environment, tables_process, until_answering
from .test_ratings import ANN_BEFORE, BOB_BEFORE
from .test_seeking import color_of, first_move_reaches_the_other, seeking, until_paired
from .test_tables_endings import NO_PIECES, Game

SAFETY_NET_SECONDS: Final = 90.0
"""How long the other replica may take to rate the game: the killed replica's timer lease
(15 s, its default) and a generous margin for a busy machine."""
_BEFORE: Final = {"Ann": ANN_BEFORE, "Bob": BOB_BEFORE}
"""Each player's rating before the game, by name."""
RETRIED_CODES: Final = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
CHUNK_BYTES: Final = 64 * 1024


class HeldRepliesProxy:
    """A TCP proxy in front of Redis for one tables process.  Bytes pass both ways until,
    armed with :meth:`hold_after`, it sees the process send the trigger; from then on the
    process's commands still reach Redis but no reply comes back, on any connection."""

    def __init__(self, redis_url: str) -> None:
        location = urlsplit(redis_url)
        assert location.hostname and location.port, redis_url
        self._upstream = (location.hostname, location.port)
        self._path = location.path
        self._server: asyncio.Server | None = None
        self._trigger = b""
        self.holding = asyncio.Event()
        self._piping: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        """Start listening; returns the Redis URL the process is to use."""
        self._server = await asyncio.start_server(self._pass_on, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"redis://127.0.0.1:{port}{self._path}"

    def hold_after(self, trigger: bytes) -> None:
        """Hold every reply from the first command holding ``trigger`` on."""
        self._trigger = trigger

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._piping):
            task.cancel()
        await asyncio.gather(*self._piping, return_exceptions=True)

    async def _pass_on(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._piping.add(task)
        try:
            redis_reader, redis_writer = await asyncio.open_connection(*self._upstream)
            try:
                await asyncio.gather(
                    self._commands(reader, redis_writer), self._replies(redis_reader, writer)
                )
            finally:
                redis_writer.close()
        except OSError:
            pass
        finally:
            writer.close()
            self._piping.discard(task)

    async def _commands(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen = b""
        while chunk := await reader.read(CHUNK_BYTES):
            # The tail of the previous chunk, in case the trigger straddles two.
            seen = seen[-len(self._trigger) :] + chunk
            if self._trigger and self._trigger in seen:
                self.holding.set()
            writer.write(chunk)
            await writer.drain()

    async def _replies(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while chunk := await reader.read(CHUNK_BYTES):
            if self.holding.is_set():
                continue
            writer.write(chunk)
            await writer.drain()


@dataclass
class DoomedReplica:
    """A tables process whose Redis is behind a :class:`HeldRepliesProxy`."""

    process: subprocess.Popen[bytes]
    channel: grpc.aio.Channel
    proxy: HeldRepliesProxy

    async def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        await asyncio.to_thread(self.process.wait, 30)


@pytest_asyncio.fixture
async def doomed(
    tmp_path: Path,
    redis_url: str,
    redis: Redis,
    referee_target: str,
    ai_target: str,
    settings: Settings,
) -> AsyncIterator[DoomedReplica]:
    """A tables process on the shared Redis (emptied first), through a proxy."""
    proxy = HeldRepliesProxy(redis_url)
    proxied_url = await proxy.start()
    (port,) = service_ports(1)
    try:
        environment = replica_environment(port, proxied_url, referee_target, ai_target)
        with tables_process(tmp_path / "doomed.log", environment) as process:
            async with serving.open_channel(f"127.0.0.1:{port}", settings) as channel:
                await until_answering(channel, process)
                yield DoomedReplica(process, channel, proxy)
    finally:
        await proxy.stop()


async def _stored(redis: Redis, guest: Guest) -> bytes:
    value = await redis.hget(keys.player(guest.player_id), rating_field(game_pb2.VARIANT_ENGLISH))
    assert isinstance(value, bytes), value
    return value


async def _paired_rated(
    ann: tuple[Guest, grpc.aio.Channel], bob: tuple[Guest, grpc.aio.Channel]
) -> tuple[matchmaking_pb2.SeekPaired, matchmaking_pb2.SeekPaired]:
    """Ann and Bob seek a rated English game, each through their own replica, until paired."""
    async with (
        seeking(ann[0], ann[1], rated=True) as ann_seek,
        seeking(bob[0], bob[1], rated=True) as bob_seek,
    ):
        await until_paired(ann_seek, bob_seek)
    assert ann_seek.paired is not None and bob_seek.paired is not None
    assert ann_seek.paired.table.rated
    return ann_seek.paired, bob_seek.paired


def _to_move(game: Game) -> Guest:
    moves = [event.move_played for event in game.appended if event.HasField("move_played")]
    turn = moves[-1].next if moves else game.table.game.turn
    return game.seats[turn.side]


@pytest.mark.parametrize("killed", ["before rating the game", "after rating the game"])
async def test_a_replica_killed_at_a_rated_games_end_leaves_it_rated_once(
    doomed: DoomedReplica, start_replica: StartReplica, redis: Redis, killed: str
) -> None:
    other = await start_replica()
    ann = await new_guest(other.channel, "Ann")
    bob = await new_guest(other.channel, "Bob")
    for guest in (ann, bob):
        before = _BEFORE[guest.player.display_name].encode()
        await redis.hset(
            keys.player(guest.player_id), rating_field(game_pb2.VARIANT_ENGLISH), before
        )
    ann_paired, _ = await _paired_rated((ann, doomed.channel), (bob, other.channel))
    table = ann_paired.table
    ann_color = color_of(ann_paired.your_role)
    on_doomed: dict[int, Guest] = {ann_color: ann.on(doomed.channel)}
    on_doomed[_other_color(ann_color)] = bob.on(doomed.channel)
    game = Game(table, on_doomed)
    for notation in NO_PIECES[:-1]:
        await game.play(notation)

    mover = _to_move(game)
    final, first_answer = await _final_move_then_kill(game, mover, doomed, redis, killed)
    before_final = final.expected_seq

    # The player retries the final move on the other replica: its first answer.
    retried_on = mover.on(other.channel)
    retried = list(
        (await retried_on.tables.Play(final, metadata=mover.metadata, timeout=CALL_TIMEOUT)).events
    )
    assert kinds(retried) == ["move_played", "game_over"]
    assert retried[0].seq == before_final + 1
    if first_answer is not None:
        assert retried == first_answer
    async with watching(other.channel, table.table_id, after_seq=before_final) as logged:
        await logged.until_seq(retried[-1].seq)
    assert logged.events == retried

    # Rated once, by the other replica's timer worker when the commit was all that landed.
    await _until_timer_entry_gone(redis, table.table_id, SAFETY_NET_SECONDS)
    expected = _expected_ratings(ann_color, ann, bob)
    await _check_rated_once(redis, other, table.table_id, expected)
    again = await retried_on.tables.Play(final, metadata=mover.metadata, timeout=CALL_TIMEOUT)
    assert list(again.events) == retried
    await _check_rated_once(redis, other, table.table_id, expected)
    shown = {
        guest.player_id: rating_message(game_pb2.VARIANT_ENGLISH, stored)
        for guest, stored in ((ann, expected[ann.player_id]), (bob, expected[bob.player_id]))
    }
    for guest in (ann, bob):
        assert list((await guest.me()).ratings) == [shown[guest.player_id]]

    # Next: a new rated seek pairs them again, at a table showing the new ratings, and its
    # first move reaches the other player.
    ann_next, bob_next = await _paired_rated((ann, other.channel), (bob, other.channel))
    assert ann_next.table.table_id != table.table_id
    assert ann_next.opponent_rating == shown[bob.player_id]
    assert bob_next.opponent_rating == shown[ann.player_id]
    for seat in (ann_next.table.white, ann_next.table.black):
        assert seat.rating == shown[seat.player.player_id]
    await first_move_reaches_the_other(ann_next, (ann, other.channel), (bob, other.channel))


async def _final_move_then_kill(
    game: Game, mover: Guest, doomed: DoomedReplica, redis: Redis, killed: str
) -> tuple[tables_pb2.PlayRequest, list[tables_pb2.TableEvent] | None]:
    """``mover`` sends the game's last move to the doomed replica, which is killed as
    ``killed`` says: the moment the commit lands (no answer, nothing rated), or once it
    answered (the answer).  Returns the move as sent, to be retried."""
    final = tables_pb2.PlayRequest(
        table_id=game.table.table_id,
        request_id=new_request_id(),
        expected_seq=game.seq,
        notation=NO_PIECES[-1],
    )
    if killed == "after rating the game":
        answered = await mover.tables.Play(final, metadata=mover.metadata, timeout=CALL_TIMEOUT)
        await doomed.kill()
        return final, list(answered.events)
    doomed.proxy.hold_after(keys.table_log(game.table.table_id).encode())
    sent = asyncio.ensure_future(
        mover.tables.Play(final, metadata=mover.metadata, timeout=CALL_TIMEOUT)
    )
    await _until_seq_above(redis, game.table.table_id, final.expected_seq)
    await doomed.kill()
    with pytest.raises(grpc.aio.AioRpcError) as lost:
        await sent
    assert lost.value.code() in RETRIED_CODES, lost.value.details()
    # Killed between its commit and its rating follow-up: nothing is counted yet, and the
    # game's timer entry waits for another replica.
    for guest in game.seats.values():
        assert await _stored(redis, guest) == _BEFORE[guest.player.display_name].encode()
    assert await redis.zscore(keys.TIMERS, game.table.table_id) is not None
    return final, None


def _other_color(color: game_pb2.Color.ValueType) -> game_pb2.Color.ValueType:
    return game_pb2.COLOR_WHITE if color == game_pb2.COLOR_BLACK else game_pb2.COLOR_BLACK


def _expected_ratings(
    ann_color: game_pb2.Color.ValueType, ann: Guest, bob: Guest
) -> dict[str, StoredRating]:
    """Both players' ratings after Black's win (the scripted game's end), by goti.ratings."""
    white, black = (ann, bob) if ann_color == game_pb2.COLOR_WHITE else (bob, ann)
    before = {ann.player_id: ANN_BEFORE, bob.player_id: BOB_BEFORE}
    white_after, black_after = both_after_game(
        before[white.player_id].rating, before[black.player_id].rating, 0.0
    )
    return {
        white.player_id: before[white.player_id].after(white_after),
        black.player_id: before[black.player_id].after(black_after),
    }


async def _check_rated_once(
    redis: Redis, other: TablesReplica, table_id: str, expected: dict[str, StoredRating]
) -> None:
    """The stored ratings are the ones expected, and stay so when the game's timer entry is
    handled again, on two workers at once."""
    for player_id, stored in expected.items():
        value = await redis.hget(keys.player(player_id), rating_field(game_pb2.VARIANT_ENGLISH))
        assert value == stored.encode()
    await asyncio.gather(
        other.runtime.follow_ups.handle_due(table_id, 1),
        other.runtime.follow_ups.handle_due(table_id, 1),
    )
    for player_id, stored in expected.items():
        value = await redis.hget(keys.player(player_id), rating_field(game_pb2.VARIANT_ENGLISH))
        assert value == stored.encode()


async def _until_seq_above(redis: Redis, table_id: str, seq: int) -> None:
    """Wait until the table's seq in Redis has passed ``seq``: a commit landed."""
    await until_read(
        lambda: redis.hget(keys.table_state(table_id), "seq"),
        lambda stored: int(stored or 0) > seq,
        what="the final move's commit never landed",
        every=0.01,
    )


async def _until_timer_entry_gone(redis: Redis, table_id: str, timeout: float) -> None:
    await until_read(
        lambda: redis.zscore(keys.TIMERS, table_id),
        lambda score: score is None,
        timeout=timeout,
        what="the game's timer entry was never handled",
        every=0.05,
    )
