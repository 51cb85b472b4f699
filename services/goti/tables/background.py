"""The tables process's background work: the loop the timer and pairing workers each run,
and stopping their tasks for sure.

Under Python 3.11 a cancellation that lands inside ``asyncio.wait_for`` (which redis-py uses
around its reads) can be swallowed: the task goes on as if nothing happened, and awaiting it
after one ``cancel()`` waits forever.  So a task is cancelled again until it has ended.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final

log = logging.getLogger(__name__)

RECANCEL_SECONDS: Final = 0.5
MAX_BACKOFF_SECONDS: Final = 5.0
"""The longest a loop waits between rounds while Redis or a peer is out of reach."""

Round = Callable[[], Awaitable[bool]]
"""One round of a loop's work; True when it left work for another round at once (a full
batch taken), False to wait the loop's poll first."""


async def cancel_and_wait(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Cancel ``tasks`` and wait until every one has ended, cancelling again as needed."""
    pending = {task for task in tasks if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=RECANCEL_SECONDS)


class PollingLoop:
    """Runs rounds of one kind of work in the background, ``poll_seconds`` apart, until
    stopped.  A round that fails with one of the ``transient`` errors (Redis or a peer out of
    reach) is logged and tried again after a wait that doubles, up to
    :data:`MAX_BACKOFF_SECONDS`, and goes back to ``poll_seconds`` once a round succeeds.

    Whatever the rounds hold in Redis is held under a lease, so a loop stopped (or a replica
    killed) mid-round leaves nothing behind: the leases end by themselves.
    """

    def __init__(
        self,
        name: str,
        work: Round,
        *,
        poll_seconds: float,
        transient: tuple[type[Exception], ...],
    ) -> None:
        self._name = name
        self._work = work
        self._poll_seconds = poll_seconds
        self._transient = transient
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the rounds in the background (once)."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        """Stop the rounds, cancelling the one under way."""
        if self._task is not None:
            await cancel_and_wait([self._task])
            self._task = None

    async def _run(self) -> None:
        backoff = self._poll_seconds
        while True:
            try:
                more = await self._work()
            except self._transient as error:
                log.warning("%s: %s", self._name, error)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
                continue
            backoff = self._poll_seconds
            if not more:
                await asyncio.sleep(self._poll_seconds)
