"""The background loop's waits: the poll, the idle wait, and the wake that cuts them short."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from goti.tables.background import Next, PollingLoop

from .table_calls import eventually


class Rounds:
    """A round that counts itself and answers what the test says; it can be held open."""

    def __init__(self, after: Next) -> None:
        self.after = after
        self.count = 0
        self.release = asyncio.Event()
        self.release.set()

    async def __call__(self) -> Next:
        self.count += 1
        # A real round waits on Redis; this one lets the test run in between too.
        await asyncio.sleep(0)
        await self.release.wait()
        return self.after


@contextlib.asynccontextmanager
async def running(
    rounds: Rounds, *, poll_seconds: float = 0.01, idle_seconds: float = 3600.0
) -> AsyncIterator[PollingLoop]:
    """A loop running ``rounds`` while the block runs (by default polling every 10 ms and
    idle for an hour); its first round done."""
    loop = PollingLoop(
        "test", rounds, poll_seconds=poll_seconds, idle_seconds=idle_seconds, transient=()
    )
    loop.start()
    try:
        await eventually(lambda: rounds.count >= 1)
        yield loop
    finally:
        await loop.stop()


async def test_a_woken_idle_loop_runs_its_next_round_at_once() -> None:
    rounds = Rounds(Next.IDLE)
    async with running(rounds) as loop:
        assert rounds.count == 1
        for woken in range(2, 5):
            loop.wake()
            await eventually(lambda: rounds.count == woken)  # noqa: B023


async def test_a_wake_during_a_round_is_kept_for_after_it() -> None:
    rounds = Rounds(Next.IDLE)
    async with running(rounds) as loop:
        rounds.release.clear()
        loop.wake()
        await eventually(lambda: rounds.count == 2)
        # Woken while the second round is under way: a third follows it.
        loop.wake()
        rounds.release.set()
        await eventually(lambda: rounds.count == 3)


async def test_a_busy_loop_is_not_hurried_by_wakes() -> None:
    """While its rounds poll, a wake adds no round: the poll comes soon anyway (here: not
    for an hour)."""
    rounds = Rounds(Next.POLL)
    async with running(rounds, poll_seconds=3600.0, idle_seconds=0.01) as loop:
        assert rounds.count == 1
        loop.wake()
        # A window to observe an absence: a woken loop would run its round at once.
        await asyncio.sleep(0.2)
        assert rounds.count == 1


async def test_a_busy_loop_polls_and_a_full_round_goes_again_at_once() -> None:
    rounds = Rounds(Next.POLL)
    async with running(rounds) as loop:
        # Polls every 10 ms, nobody waking it.
        await eventually(lambda: rounds.count >= 5)
        rounds.after = Next.IDLE
        settled = rounds.count + 1
        await eventually(lambda: rounds.count >= settled)
        rounds.after = Next.AT_ONCE
        loop.wake()
        await eventually(lambda: rounds.count >= settled + 50)
