"""Garbage collection in a long-lived server: the survivors of full collections frozen."""

from __future__ import annotations

import asyncio
import gc
from typing import Final

SURVIVORS_KEPT_FROZEN_SECONDS: Final = 600.0
"""How long the survivors of full collections stay out of the collector's reach before they
are all handed back to it, so that reference cycles among them that have since become
garbage are freed."""


class SurvivorFreezer:
    """Keeps a server's full garbage collections short.

    A full collection walks every object the collector tracks, and a tables replica holds a
    great many of them for as long as their watch streams last: at a thousand tables a walk
    paused the service for 150 ms.  What a full collection leaves alive is long-lived, so
    right after one (on the event loop, not inside the collector) it is frozen, and the next
    full collection walks only what came since.  Frozen objects are never collected, so every
    ``thaw_seconds`` they are all handed back (one long walk then, not one every few seconds).

    Python's own thresholds stay: every gRPC call leaves a few objects in a reference cycle
    (made inside grpc's handler lookup), and frequent small young collections keep each pause
    short, where a young threshold of 5,000 rather than 700 paused the tables service 15 ms at
    a time.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        thaw_seconds: float = SURVIVORS_KEPT_FROZEN_SECONDS,
    ) -> None:
        self._loop = loop
        self._thaw_seconds = thaw_seconds
        self._thaw: asyncio.TimerHandle | None = None
        self.thaws = 0

    def start(self) -> int:
        """Freeze what start-up built and follow full collections from now on; returns how
        many objects are frozen."""
        gc.collect()
        gc.freeze()
        gc.callbacks.append(self._after_collection)
        self._thaw = self._loop.call_later(self._thaw_seconds, self._hand_back)
        return gc.get_freeze_count()

    def stop(self) -> None:
        """Stop following collections (what is frozen stays frozen)."""
        if self._after_collection in gc.callbacks:
            gc.callbacks.remove(self._after_collection)
        if self._thaw is not None:
            self._thaw.cancel()
            self._thaw = None

    def _after_collection(self, phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2 and not self._loop.is_closed():
            # Collections may run in any thread; the freeze waits for the loop's own.
            self._loop.call_soon_threadsafe(gc.freeze)

    def _hand_back(self) -> None:
        gc.unfreeze()
        self.thaws += 1
        self._thaw = self._loop.call_later(self._thaw_seconds, self._hand_back)
