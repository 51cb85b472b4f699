"""A server keeps what outlives a full garbage collection out of the next ones, and hands it
back to the collector now and then."""

from __future__ import annotations

import asyncio
import gc

from goti.serving import SurvivorFreezer


async def _loop_turns() -> None:
    # The freeze is queued from the collector to the loop: let the loop run it.
    for _ in range(3):
        await asyncio.sleep(0)


async def test_what_outlives_a_full_collection_is_frozen_until_handed_back() -> None:
    freezer = SurvivorFreezer(asyncio.get_running_loop(), thaw_seconds=5.0)
    try:
        assert freezer.start() > 1_000  # start-up's objects
        gc.unfreeze()
        survivors = [[index] for index in range(5_000)]
        gc.collect(0)
        await _loop_turns()
        assert gc.get_freeze_count() == 0, "a young collection freezes nothing"
        gc.collect()
        await _loop_turns()
        assert gc.get_freeze_count() >= len(survivors)
        while not freezer.thaws:
            await asyncio.sleep(0.05)
        assert gc.get_freeze_count() < len(survivors)
    finally:
        freezer.stop()
        gc.unfreeze()


async def test_a_stopped_freezer_leaves_collections_alone() -> None:
    freezer = SurvivorFreezer(asyncio.get_running_loop(), thaw_seconds=60)
    freezer.start()
    freezer.stop()
    gc.unfreeze()
    try:
        gc.collect()
        await _loop_turns()
        assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()
