"""The timer worker: each replica claims the tables whose timers fell due and acts on them.

A claim holds a table for a lease (see :meth:`TableStore.claim_due`); what
:class:`~goti.tables.followups.FollowUps` does with it goes through the same compare-and-set
as any command, so a late human move, a timer auto-move and a slow computer reply never all
land.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Final

from goti.tables.background import cancel_and_wait
from goti.tables.followups import FollowUps
from goti.tables.redis_calls import StoreUnavailableError
from goti.tables.store import TableStore

log = logging.getLogger(__name__)

_MAX_BACKOFF_SECONDS: Final = 5.0


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
        self._poll_seconds = poll_seconds
        self._lease_ms = round(lease_seconds * 1000)
        self._batch = batch
        self._clock_ms = clock_ms
        self._task: asyncio.Task[None] | None = None
        self._working: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        """Start polling in the background."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        """Stop polling and cancel the work in hand (its entries go back after the lease)."""
        if self._task is not None:
            await cancel_and_wait([self._task])
            self._task = None
        await cancel_and_wait(list(self._working))

    async def _run(self) -> None:
        backoff = self._poll_seconds
        while True:
            free = self._batch - len(self._working)
            claimed = 0
            if free > 0:
                try:
                    claim = await self._store.claim_due(self._clock_ms(), self._lease_ms, free)
                except StoreUnavailableError as error:
                    log.warning("timers: %s", error)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, _MAX_BACKOFF_SECONDS)
                    continue
                backoff = self._poll_seconds
                claimed = len(claim.table_ids)
                for table_id in claim.table_ids:
                    task = asyncio.ensure_future(
                        self._follow_ups.handle_due(table_id, claim.lease_until_ms)
                    )
                    self._working.add(task)
                    task.add_done_callback(self._working.discard)
            if claimed < free or free <= 0:
                await asyncio.sleep(self._poll_seconds)
