"""Against the computer through the SDK: its replies arrive on the watch, a move can be taken
back, and a rematch starts at once with colours swapped."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from in_process_backend import computer_player

from goti.rules import Color, Termination
from goti.settings import Settings
from goti_client import (
    GameOver,
    GotiClient,
    Level,
    MovePlayed,
    MoveSource,
    MovesTakenBack,
    Opponent,
    RematchStarted,
    Role,
    Snapshot,
    StartingPlayer,
    TableStatus,
    TableUpdate,
    TableWatch,
)

from .conftest import Clients

WAIT_SECONDS = 60.0


@pytest_asyncio.fixture
async def ai_target(settings: Settings) -> AsyncIterator[str]:
    """The real computer player for this module's tables."""
    async with computer_player(settings) as target:
        yield target


async def next_move(watch: TableWatch, seen: list[TableUpdate]) -> MovePlayed:
    """The next move the watch yields, keeping everything it yields in ``seen``."""

    async def wait() -> MovePlayed:
        async for update in watch:
            seen.append(update)
            if isinstance(update, MovePlayed):
                return update
        raise AssertionError("the watch ended")

    return await asyncio.wait_for(wait(), WAIT_SECONDS)


@pytest.mark.parametrize(
    ("opponent", "level"),
    [(Opponent.COMPUTER_EASY, Level.EASY), (Opponent.COMPUTER_MASTER, Level.MASTER)],
)
async def test_the_computer_answers_takes_back_and_grants_a_rematch(
    clients: Clients, opponent: Opponent, level: Level
) -> None:
    player: GotiClient = await clients.open(display_name="Ana")
    table = await player.create_table(opponent=opponent, starting_player=StartingPlayer.PLAYER_1)
    assert table.opponent is opponent and opponent.is_computer
    assert table.status is TableStatus.PLAYING and table.role is Role.BLACK
    assert table.white.is_computer and table.white.computer_level is level
    watch = player.watch(table.table_id)
    seen: list[TableUpdate] = []
    rng = random.Random(3)
    try:
        # The watch opens on its first read: take its snapshot before anything moves.
        seen.append(await asyncio.wait_for(anext(watch), WAIT_SECONDS))
        turn = table.game.turn
        for _ in range(2):
            assert turn is not None and turn.side is Color.BLACK
            (mine,) = await player.play(table.table_id, rng.choice(turn.legal_moves))
            assert isinstance(mine, MovePlayed)
            assert (await next_move(watch, seen)).seq == mine.seq
            reply = await next_move(watch, seen)
            assert reply.source is MoveSource.COMPUTER and reply.record.side is Color.WHITE
            turn = reply.next

        (taken,) = await player.take_back(table.table_id)
        assert isinstance(taken, MovesTakenBack)
        assert taken.by is Color.BLACK and len(taken.moves) == 2
        assert len(taken.game.moves) == 2 and taken.game.turn is not None
        assert taken.game.turn.side is Color.BLACK

        over = (await player.resign(table.table_id))[-1]
        assert isinstance(over, GameOver)
        assert over.outcome.termination is Termination.RESIGNATION
        assert over.outcome.winner is Color.WHITE
        assert (await player.me()).win_streak == 0

        rematch = await player.rematch(table.table_id)
        assert isinstance(rematch.events[-1], RematchStarted)
        assert rematch.table is not None and rematch.table.role is Role.WHITE
        assert rematch.events[-1].table_id == rematch.table.table_id
        # The watch of the old table ends with the rematch: its last event.
        async for update in watch:
            seen.append(update)
        assert isinstance(seen[-1], RematchStarted)
    finally:
        await watch.aclose()

    assert isinstance(seen[0], Snapshot)
    seqs = [update.seq for update in seen[1:]]
    assert seqs == list(range(seen[0].seq + 1, seen[0].seq + 1 + len(seqs)))
