"""The timer worker: each replica claims the tables whose timers fell due and acts on them.

A claim holds a table for a lease (see :meth:`TableStore.claim_due`); what
:class:`~goti.tables.followups.FollowUps` does with it goes through the same compare-and-set
as any command, so a late human move, a timer auto-move and a slow computer reply never all
land.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from goti.tables.background import Next, PollingLoop, cancel_and_wait
from goti.tables.followups import FollowUps
from goti.tables.redis_calls import StoreUnavailableError
from goti.tables.store import TableStore


def _now_ms() -> int:
    return int(time.time() * 1000)


class TimerWorker:
    """Polls the timers for due tables and hands each to the follow-ups."""

    def __init__(
        self,
        follow_ups: FollowUps,
        store: TableStore,
        *,
        poll_seconds: float,
        lease_seconds: float,
        batch: int,
        clock_ms: Callable[[], int] = _now_ms,
    ) -> None:
        self._follow_ups = follow_ups
        self._store = store
        self._lease_ms = round(lease_seconds * 1000)
        self._batch = batch
        self._clock_ms = clock_ms
        self._loop = PollingLoop(
            "timers", self._claim, poll_seconds=poll_seconds, transient=(StoreUnavailableError,)
        )
        self._working: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        """Start polling in the background."""
        self._loop.start()

    async def stop(self) -> None:
        """Stop polling and cancel the work in hand (its entries go back after the lease)."""
        await self._loop.stop()
        await cancel_and_wait(list(self._working))

    async def _claim(self) -> Next:
        """Claim what the batch has room for; at once again when it filled the room (more
        may be due)."""
        free = self._batch - len(self._working)
        if free <= 0:
            return Next.POLL
        claim = await self._store.claim_due(self._clock_ms(), self._lease_ms, free)
        for table_id in claim.table_ids:
            task = asyncio.ensure_future(
                self._follow_ups.handle_due(table_id, claim.lease_until_ms)
            )
            self._working.add(task)
            task.add_done_callback(self._working.discard)
        return Next.AT_ONCE if len(claim.table_ids) >= free else Next.POLL
