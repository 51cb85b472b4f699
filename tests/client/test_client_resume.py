"""A watch outlives its server: when the tables replica it streams from stops, it reconnects
by itself and resumes from the last seq it yielded, with no gap and no duplicate."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import goti_client
from goti.rules import RUSSIAN, parse_square
from goti_client import MovePlayed, Snapshot, TableEvent, TableUpdate

from .conftest import Clients, SeatedGame, StartReplica, seat_game

WAIT_SECONDS = 30.0


class Follower:
    """Collects a watch's updates in the background."""

    def __init__(self, watch: goti_client.TableWatch) -> None:
        self.watch = watch
        self.updates: list[TableUpdate] = []
        self._changed = asyncio.Condition()
        self._task = asyncio.create_task(self._follow())

    async def _follow(self) -> None:
        async for update in self.watch:
            async with self._changed:
                self.updates.append(update)
                self._changed.notify_all()

    async def reach(self, seq: int) -> None:
        async with self._changed:
            await asyncio.wait_for(
                self._changed.wait_for(lambda: self.watch.last_seq >= seq), WAIT_SECONDS
            )

    async def close(self) -> None:
        await self.watch.aclose()
        await asyncio.wait_for(self._task, WAIT_SECONDS)


async def until(check: Callable[[], bool]) -> None:
    """Wait until ``check()`` holds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_SECONDS
    while not check():
        assert loop.time() < deadline, "timed out waiting"
        await asyncio.sleep(0.02)


async def play_plies(game: SeatedGame, count: int, rng: random.Random) -> int:
    """Play ``count`` random plies, each side through its own client; the seq after."""
    table = await game.alice.get_table(game.table_id)
    seq = table.seq
    turn = table.game.turn
    for _ in range(count):
        assert turn is not None, "the game ended early"
        player = game.alice if table.role.holds(turn.side) else game.bob
        events = await player.play(game.table_id, rng.choice(turn.legal_moves), expected_seq=seq)
        played = events[0]
        assert isinstance(played, MovePlayed)
        seq = events[-1].seq
        turn = played.next
    return seq


def assert_each_event_once(updates: list[TableUpdate], last_seq: int) -> None:
    assert isinstance(updates[0], Snapshot)
    assert [u for u in updates if isinstance(u, Snapshot)] == [updates[0]]
    seqs = [u.seq for u in updates if isinstance(u, TableEvent)]
    assert seqs == list(range(updates[0].seq + 1, last_seq + 1))


async def test_a_watch_resumes_on_the_restarted_replica_with_every_event_once(
    start_replica: StartReplica, clients: Clients
) -> None:
    streaming = await start_replica()
    game = await seat_game(clients)  # the players use the other replica throughout
    spectator = await clients.open(target=streaming.target, guest=False)
    follower = Follower(spectator.watch(game.table_id))
    rng = random.Random(5)
    try:
        await follower.reach(game.table.seq)
        seq = await play_plies(game, 3, rng)
        await follower.reach(seq)

        await streaming.stop()
        seq = await play_plies(game, 4, rng)  # while the replica is away
        # The watch tries, and fails, to reconnect meanwhile: its first reconnect found
        # nobody, so it is on its second.
        await until(lambda: follower.watch.reconnects >= 2)
        restarted = await start_replica(port=streaming.port)
        seq = await play_plies(game, 3, rng)
        await follower.reach(seq)
    finally:
        await follower.close()

    assert restarted.port == streaming.port
    assert follower.watch.reconnects >= 1
    assert_each_event_once(follower.updates, seq)


async def test_a_watch_moves_to_another_replica_behind_one_address(
    start_replica: StartReplica, clients: Clients
) -> None:
    """Two replicas listed under one dns-style target: when the one serving the stream goes
    away, the watch resumes on the other."""
    first, second = await start_replica(), await start_replica()
    game = await seat_game(clients)
    target = f"ipv4:127.0.0.1:{first.port},127.0.0.1:{second.port}"
    spectator = await clients.open(target=target, guest=False)
    follower = Follower(spectator.watch(game.table_id))
    rng = random.Random(11)
    try:
        seq = await play_plies(game, 2, rng)
        await follower.reach(seq)
        await first.stop()
        await second.stop()
        seq = await play_plies(game, 2, rng)
        third = await start_replica(port=second.port)
        seq = await play_plies(game, 2, rng)
        await follower.reach(seq)
    finally:
        await follower.close()

    assert third.port == second.port
    assert follower.watch.reconnects >= 1
    assert_each_event_once(follower.updates, seq)


async def test_a_watch_from_a_kept_seq_gets_only_the_later_events(clients: Clients) -> None:
    """An app restarted with the last seq it kept resumes from there, on a client that has
    never seen the table (a Russian one: its boards read with the right squares)."""
    host = await clients.open()
    table = await host.create_table(opponent=goti_client.Opponent.PASS_AND_PLAY, variant=RUSSIAN)
    for notation in ("c3-d4", "f6-g5", "d4-e5"):
        await host.play(table.table_id, notation)
    restarted = await clients.open(guest=False)
    follower = Follower(restarted.watch(table.table_id, after_seq=2))
    try:
        await host.play(table.table_id, "d6:f4")
        await follower.reach(4)
    finally:
        await follower.close()

    moves = [update for update in follower.updates if isinstance(update, MovePlayed)]
    assert [(move.seq, move.notation) for move in moves] == [(3, "d4-e5"), (4, "d6:f4")]
    assert moves[-1].position.variant is RUSSIAN
    assert moves[-1].record.captured == (parse_square("e5"),)
