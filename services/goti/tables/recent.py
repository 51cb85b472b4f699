"""The tables this replica changed last, as it committed them.

A player's next command usually names the seq this replica's own last commit produced, so
the table it needs is already here and the command skips reading it back from Redis.  A copy
is only ever trusted for the seq it was committed at: every change to a table moves its seq
on (the store's compare-and-set), so a table at the same seq is the same table.  Should
another replica have moved it on since, the commit's compare-and-set refuses the change, and
the command is judged again on the table read afresh (:mod:`goti.tables.playing`).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final, Generic, Protocol, TypeVar

DEFAULT_TABLES_KEPT: Final = 20_000
"""Tables remembered per replica: a few kilobytes each, enough for every table a busy
replica serves at once."""


class _Numbered(Protocol):
    @property
    def seq(self) -> int: ...


T = TypeVar("T", bound=_Numbered)


class RecentTables(Generic[T]):
    """The last committed copy of up to ``size`` tables, the least recently used given up
    first."""

    def __init__(self, size: int = DEFAULT_TABLES_KEPT) -> None:
        self._size = size
        self._tables: OrderedDict[str, T] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tables)

    def at(self, table_id: str, seq: int) -> T | None:
        """The table as it was at ``seq``, if that is the copy held here."""
        table = self._tables.get(table_id)
        if table is None or table.seq != seq:
            return None
        self._tables.move_to_end(table_id)
        return table

    def remember(self, table_id: str, table: T) -> None:
        """Hold ``table`` (which the caller no longer changes) as the table's latest copy."""
        if self._size <= 0:
            return
        self._tables[table_id] = table
        self._tables.move_to_end(table_id)
        while len(self._tables) > self._size:
            self._tables.popitem(last=False)

    def forget(self, table_id: str) -> None:
        """Drop the copy of a table that moved on elsewhere or is gone."""
        self._tables.pop(table_id, None)
