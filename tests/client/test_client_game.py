"""Whole games through the SDK against a real tables service, referee and Redis."""

from __future__ import annotations

import asyncio
import random

from goti.rules import ENGLISH, RUSSIAN, Color, Termination, Variant, read_pdn
from goti_client import (
    GameOver,
    GotiClient,
    MovePlayed,
    MoveSource,
    Opponent,
    Role,
    Snapshot,
    StartingPlayer,
    TableEvent,
    TableStatus,
    TableUpdate,
    Turn,
)

from .conftest import Clients

GAME_SECONDS = 120.0
"""A random game is a few hundred plies at most; generous for a busy machine."""


async def play_side(
    client: GotiClient, table_id: str, sides: frozenset[Color], seed: int
) -> list[TableUpdate]:
    """A bot: follows the table through its own watch and plays a random legal move whenever
    one of ``sides`` is to move, by Move, by path or by notation in turn; returns what it saw.

    It names no seq: the SDK fills in the latest one its watch saw.
    """
    rng = random.Random(seed)
    seen: list[TableUpdate] = []
    async for update in client.watch(table_id):
        seen.append(update)
        turn: Turn | None = None
        if isinstance(update, Snapshot):
            turn = update.table.game.turn
        elif isinstance(update, MovePlayed):
            turn = update.next
        elif isinstance(update, GameOver):
            return seen
        if turn is None or turn.side not in sides:
            continue
        move = rng.choice(turn.legal_moves)
        form = len(seen) % 3
        if form == 0:
            await client.play(table_id, move)
        elif form == 1:
            await client.play(table_id, list(move.path))
        else:
            table = update.table if isinstance(update, Snapshot) else None
            variant = table.variant if table else await _variant(client, table_id)
            await client.play(table_id, move.notation(variant))
    raise AssertionError("the watch ended before the game did")


async def _variant(client: GotiClient, table_id: str) -> Variant:
    return (await client.get_table(table_id)).variant


def events_of(updates: list[TableUpdate]) -> list[TableEvent]:
    return [update for update in updates if isinstance(update, TableEvent)]


def assert_gap_free(updates: list[TableUpdate]) -> None:
    """A snapshot first, then events numbered on from it, each once."""
    assert isinstance(updates[0], Snapshot)
    seqs = [event.seq for event in events_of(updates)]
    first = updates[0].seq + 1
    assert seqs == list(range(first, first + len(seqs)))


async def test_two_people_play_a_whole_game_that_a_spectator_follows(clients: Clients) -> None:
    alice = await clients.open(display_name="Alice")
    bob = await clients.open(display_name="Bob")
    spectator = await clients.open(guest=False)

    created = await alice.create_table(starting_player=StartingPlayer.PLAYER_1)
    assert created.status is TableStatus.WAITING
    assert created.role is Role.BLACK  # English: Black moves first
    assert created.white.is_open and created.black.player == alice.player
    joined = await bob.join_table(f" {created.code[:3].lower()}-{created.code[3:]} ")
    assert joined.table_id == created.table_id
    assert joined.status is TableStatus.PLAYING and joined.role is Role.WHITE
    assert joined.white.player == bob.player

    async def follow() -> list[TableUpdate]:
        seen: list[TableUpdate] = []
        async for update in spectator.watch(created.table_id):
            seen.append(update)
            if isinstance(update, GameOver):
                return seen
        raise AssertionError("the watch ended before the game did")

    watching = asyncio.create_task(follow())
    black, white, seen = await asyncio.wait_for(
        asyncio.gather(
            play_side(alice, created.table_id, frozenset({Color.BLACK}), seed=1),
            play_side(bob, created.table_id, frozenset({Color.WHITE}), seed=2),
            watching,
        ),
        GAME_SECONDS,
    )

    assert_gap_free(seen)
    snapshot = seen[0]
    assert isinstance(snapshot, Snapshot) and snapshot.table.role is Role.SPECTATOR
    played = [event for event in events_of(seen) if isinstance(event, MovePlayed)]
    assert all(event.source is MoveSource.PLAYER for event in played)
    assert [event.record.ply for event in played] == list(range(len(played)))
    over = events_of(seen)[-1]
    assert isinstance(over, GameOver)
    assert played[-1].next is None and played[-1].record.outcome == over.outcome
    # Both players saw the same events as the spectator.
    for updates in (black, white):
        assert [e.seq for e in events_of(updates)][-1] == over.seq

    table = await spectator.get_table(created.table_id)
    assert table.status is TableStatus.FINISHED and table.seq == over.seq
    assert table.game.outcome == over.outcome and table.game.turn is None
    record = await spectator.record(created.table_id)
    assert record.game.moves == tuple(event.notation for event in played)
    assert record.white.player == bob.player and record.black.player == alice.player
    (pdn_game,) = read_pdn(record.pdn)
    assert pdn_game.game.moves == record.game.moves
    assert record.game.replay().position == table.game.position
    assert pdn_game.tags["Result"] == over.result

    me = await alice.me()
    assert me.player == alice.player
    assert (me.win_streak, me.best_streak) == (0, 0)


async def test_pass_and_play_moves_for_both_sides_from_one_client(clients: Clients) -> None:
    host = await clients.open()
    table = await host.create_table(opponent=Opponent.PASS_AND_PLAY, variant=RUSSIAN)
    assert table.role is Role.BOTH and table.status is TableStatus.PLAYING
    assert table.variant is RUSSIAN and table.game.turn is not None
    assert table.game.turn.side is Color.WHITE  # Russian: White moves first

    events = await host.play(table.table_id, "c3-d4")
    events += await host.play(table.table_id, "f6-g5")
    await host.resign(table.table_id)

    assert [e.notation for e in events if isinstance(e, MovePlayed)] == ["c3-d4", "f6-g5"]
    finished = await host.get_table(table.table_id)
    assert finished.game.moves == ("c3-d4", "f6-g5")
    assert finished.game.outcome is not None
    assert finished.game.outcome.termination is Termination.RESIGNATION
    assert finished.game.outcome.winner is Color.BLACK


async def test_a_draw_offered_and_accepted_ends_the_game(clients: Clients) -> None:
    alice = await clients.open()
    bob = await clients.open()
    created = await alice.create_table(starting_player=StartingPlayer.PLAYER_1)
    table_id = (await bob.join_table(created.code)).table_id
    await alice.get_table(table_id)

    await alice.play(table_id, "11-15")
    await bob.get_table(table_id)
    await bob.play(table_id, "23-19")
    await alice.get_table(table_id)
    offered = await alice.offer_draw(table_id)
    await alice.play(table_id, "8-11")
    await bob.get_table(table_id)
    answered = await bob.answer_draw(table_id, True)

    assert [type(e).__name__ for e in offered] == ["DrawOffered"]
    assert [type(e).__name__ for e in answered] == ["DrawAccepted", "GameOver"]
    over = answered[-1]
    assert isinstance(over, GameOver)
    assert over.outcome.termination is Termination.AGREEMENT and over.result == "1/2-1/2"
    assert (await bob.get_table(table_id)).variant is ENGLISH
