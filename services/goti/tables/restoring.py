"""Events read back from a table's log, in the full form they were first sent in.

The log keeps events lean (their boards as positions, not as whole game views); the watch
streams catching a watcher up and a retried command answering as it did the first time both
restore them here, through the referee's descriptions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Final

from goti.api.v1 import tables_pb2
from goti.tables import events
from goti.tables.loading import TableReader
from goti.tables.store import Committed, TableStore

_VARIANTS_KEPT: Final = 100_000


class Restorer:
    """Restores logged events; remembers each table's variant, which never changes."""

    def __init__(self, store: TableStore, reader: TableReader) -> None:
        self._store = store
        self._reader = reader
        self._variants: dict[str, int] = {}

    async def variant_of(self, table_id: str) -> int:
        """A table's variant."""
        variant = self._variants.get(table_id)
        if variant is None:
            variant = (await self._reader.load(table_id)).record.variant
            if len(self._variants) > _VARIANTS_KEPT:
                self._variants.clear()
            self._variants[table_id] = variant
        return variant

    async def restore(
        self, variant: int, lean_events: Sequence[bytes]
    ) -> list[tables_pb2.TableEvent]:
        """Events from the log in their full form (the referee describes their boards)."""
        parsed = [tables_pb2.TableEvent.FromString(event) for event in lean_events]
        needed = [
            (event, events.position_state(variant, board, events.ending_of(parsed, index)))
            for index, event in enumerate(parsed)
            if (board := events.board_of(event)) is not None
        ]
        if needed:
            views = await asyncio.gather(*(self._reader.view(state) for _, state in needed))
            for (event, _), view in zip(needed, views, strict=True):
                events.restore(event, view)
        return parsed

    async def committed_events(
        self, table_id: str, variant: int, committed: Committed
    ) -> list[tables_pb2.TableEvent]:
        """The events an earlier commit appended, as that command answered them."""
        stored = await self._store.events_between(table_id, committed.first_seq, committed.last_seq)
        return [] if stored is None else await self.restore(variant, stored)
