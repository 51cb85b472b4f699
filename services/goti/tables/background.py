"""Stopping the tables process's background tasks, for sure.

Under Python 3.11 a cancellation that lands inside ``asyncio.wait_for`` (which redis-py uses
around its reads) can be swallowed: the task goes on as if nothing happened, and awaiting it
after one ``cancel()`` waits forever.  So a task is cancelled again until it has ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, Final

RECANCEL_SECONDS: Final = 0.5


async def cancel_and_wait(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Cancel ``tasks`` and wait until every one has ended, cancelling again as needed."""
    pending = {task for task in tasks if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=RECANCEL_SECONDS)
