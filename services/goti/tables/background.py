"""The tables process's background work: the loop the timer and pairing workers each run,
and stopping their tasks for sure.

A loop's round says when the next one should run: at once (it left work), after the loop's
poll, or, when it found nothing to watch, after the longer idle wait.  :meth:`PollingLoop.wake`
cuts the idle wait short, so that work this replica itself creates (a seek entering a pool)
is taken up at once while an idle replica polls Redis seldom.  The poll is not cut short: it
comes soon anyway, and under load a round for every wake would multiply the rounds (with
matchmaking's pairing, a third more Redis commands and CPU per pairing).

Under Python 3.11 a cancellation that lands inside ``asyncio.wait_for`` (which redis-py uses
around its reads) can be swallowed: the task goes on as if nothing happened, and awaiting it
after one ``cancel()`` waits forever.  So a task is cancelled again until it has ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final

log = logging.getLogger(__name__)

RECANCEL_SECONDS: Final = 0.5
MAX_BACKOFF_SECONDS: Final = 5.0
"""The longest a loop waits between rounds while Redis or a peer is out of reach."""


class Next(enum.Enum):
    """When a loop's next round runs, as its last round found."""

    AT_ONCE = enum.auto()
    """The round left work (a full batch taken): the next one starts at once."""
    POLL = enum.auto()
    """After the loop's ``poll_seconds``."""
    IDLE = enum.auto()
    """Nothing to watch: after the loop's ``idle_seconds``, or a wake."""


Round = Callable[[], Awaitable[Next]]
"""One round of a loop's work."""


async def cancel_and_wait(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Cancel ``tasks`` and wait until every one has ended, cancelling again as needed."""
    pending = {task for task in tasks if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=RECANCEL_SECONDS)


class PollingLoop:
    """Runs rounds of one kind of work in the background, ``poll_seconds`` apart (or
    ``idle_seconds`` after a round that found nothing to watch), until stopped.  A round
    that fails with one of the ``transient`` errors (Redis or a peer out of reach) is logged
    and tried again after a wait that doubles, up to :data:`MAX_BACKOFF_SECONDS`, and goes
    back to ``poll_seconds`` once a round succeeds.

    Whatever the rounds hold in Redis is held under a lease, so a loop stopped (or a replica
    killed) mid-round leaves nothing behind: the leases end by themselves.
    """

    def __init__(
        self,
        name: str,
        work: Round,
        *,
        poll_seconds: float,
        idle_seconds: float | None = None,
        transient: tuple[type[Exception], ...],
    ) -> None:
        self._name = name
        self._work = work
        self._poll_seconds = poll_seconds
        self._idle_seconds = poll_seconds if idle_seconds is None else idle_seconds
        self._transient = transient
        self._task: asyncio.Task[None] | None = None
        self._woken = asyncio.Event()

    def start(self) -> None:
        """Start the rounds in the background (once)."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        """Stop the rounds, cancelling the one under way."""
        if self._task is not None:
            await cancel_and_wait([self._task])
            self._task = None

    def wake(self) -> None:
        """End the idle wait now, or skip it after the round under way."""
        self._woken.set()

    async def _run(self) -> None:
        backoff = self._poll_seconds
        while True:
            # Cleared before the round, so that a wake during the round is not lost.
            self._woken.clear()
            try:
                after = await self._work()
            except self._transient as error:
                log.warning("%s: %s", self._name, error)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
                continue
            backoff = self._poll_seconds
            if after is Next.POLL:
                await asyncio.sleep(self._poll_seconds)
            elif after is Next.IDLE:
                await self._idle()

    async def _idle(self) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._idle_seconds):
                await self._woken.wait()
