"""Live streams that survive the network: a table's events and the lobby's changes.

A watch is an async iterator that never shows its reconnects.  When the stream breaks (the
server restarts, a replica goes away in a deploy, the phone changes networks) it waits a
jittered, growing delay and opens a new one; a table watch resumes from the last seq it
yielded, drops any event it already yielded, and reconnects at once if the server's
heartbeat says it missed one.  So the caller sees every event exactly once, in seq order.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

import grpc

from goti.api.v1 import tables_pb2
from goti.rules import Variant
from goti_client import wire
from goti_client.connection import Backoff
from goti_client.errors import UnavailableError, error_from_rpc
from goti_client.events import (
    LobbySnapshot,
    LobbyUpdate,
    RematchStarted,
    Snapshot,
    TableClosed,
    TableOpened,
    TableUpdate,
)
from goti_client.tables import LobbyTable, Table

if TYPE_CHECKING:
    from goti.api.v1 import tables_pb2_grpc

RECONNECT_CODES: Final = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.ABORTED,
        # A server swamped by a reconnecting crowd refuses part of it; come back later.
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
)
"""Stream failures that a new stream may not meet; the others are the caller's to handle."""


class _Reconnects:
    """Counts a stream's failures in a row and waits before each new try."""

    def __init__(self, backoff: Backoff, give_up_after: float | None) -> None:
        self._backoff = backoff
        self._give_up_after = give_up_after
        self._failures = 0
        self._failing_since: float | None = None
        self.total = 0

    def succeeded(self) -> None:
        self._failures = 0
        self._failing_since = None

    async def wait(self, why: str) -> None:
        now = time.monotonic()
        if self._failing_since is None:
            self._failing_since = now
        elif self._give_up_after is not None and now - self._failing_since > self._give_up_after:
            raise UnavailableError(
                f"gave up after {now - self._failing_since:.1f} s without a working stream: {why}",
                code=grpc.StatusCode.UNAVAILABLE,
            )
        delay = self._backoff.delay(self._failures)
        self._failures += 1
        self.total += 1
        await asyncio.sleep(delay)


class TableWatch:
    """A table, live: ``async for update in watch`` yields a :class:`Snapshot` (when the
    watch starts from seq 0, or has fallen too far behind) and every :class:`TableEvent`
    after it, in seq order, each exactly once.

    It ends after a :class:`RematchStarted` (the table's last event), or when ``aclose()`` is
    called; it raises a :class:`~goti_client.GotiError` when the server refuses the watch
    itself (no such table) or, with ``give_up_after``, when no stream has worked for that
    many seconds.
    """

    def __init__(
        self,
        stub: tables_pb2_grpc.TablesServiceAsyncStub,
        table_id: str,
        *,
        after_seq: int,
        metadata: tuple[tuple[str, str], ...],
        variant_of: Callable[[str], Awaitable[Variant]],
        on_table: Callable[[Table], object],
        on_seq: Callable[[str, int], None],
        backoff: Backoff,
        give_up_after: float | None,
    ) -> None:
        self.table_id = table_id
        self._stub = stub
        self._last_seq = after_seq
        self._metadata = metadata
        self._variant_of = variant_of
        self._on_table = on_table
        self._on_seq = on_seq
        self._reconnects = _Reconnects(backoff, give_up_after)
        self._updates = self._stream()

    @property
    def last_seq(self) -> int:
        """The seq of the last snapshot or event yielded: where a new watch would resume."""
        return self._last_seq

    @property
    def reconnects(self) -> int:
        """How many times the watch has opened a new stream after one broke."""
        return self._reconnects.total

    def __aiter__(self) -> AsyncIterator[TableUpdate]:
        return self

    async def __anext__(self) -> TableUpdate:
        return await self._updates.__anext__()

    async def aclose(self) -> None:
        """Stop watching and close the stream."""
        await self._updates.aclose()

    async def _stream(self) -> AsyncGenerator[TableUpdate, None]:
        while True:
            call = self._stub.WatchTable(
                tables_pb2.WatchTableRequest(table_id=self.table_id, after_seq=self._last_seq),
                metadata=self._metadata,
            )
            why = "the server ended the stream"
            try:
                async for response in call:
                    kind = response.WhichOneof("message")
                    if kind == "event":
                        seq = response.event.seq
                        if seq <= self._last_seq:
                            continue
                        if seq != self._last_seq + 1:
                            why = f"event {seq} came after {self._last_seq}"
                            break
                        variant = await self._variant_of(self.table_id)
                        event = wire.event_from_proto(response.event, variant)
                        self._last_seq = seq
                        self._on_seq(self.table_id, seq)
                        self._reconnects.succeeded()
                        yield event
                        if isinstance(event, RematchStarted):
                            return
                    elif kind == "snapshot":
                        snapshot = response.snapshot
                        table = wire.table_from_proto(snapshot.table, snapshot.your_role)
                        self._last_seq = table.seq
                        self._on_table(table)
                        self._reconnects.succeeded()
                        yield Snapshot(table)
                    elif kind == "heartbeat" and response.heartbeat.seq > self._last_seq:
                        why = f"the table is at {response.heartbeat.seq}, past {self._last_seq}"
                        break
            except grpc.aio.AioRpcError as error:
                if error.code() not in RECONNECT_CODES:
                    raise error_from_rpc(error) from None
                why = f"{error.code().name}: {error.details()}"
            finally:
                call.cancel()
            await self._reconnects.wait(why)


class LobbyWatch:
    """The lobby, live: ``async for update in watch`` yields a :class:`LobbySnapshot` first
    (and again after every reconnect: the lobby keeps no log), then :class:`TableOpened` and
    :class:`TableClosed` changes.  :attr:`tables` is the lobby as of the last update."""

    def __init__(
        self,
        stub: tables_pb2_grpc.TablesServiceAsyncStub,
        request: tables_pb2.WatchLobbyRequest,
        *,
        metadata: tuple[tuple[str, str], ...],
        backoff: Backoff,
        give_up_after: float | None,
    ) -> None:
        self._stub = stub
        self._request = request
        self._metadata = metadata
        self._reconnects = _Reconnects(backoff, give_up_after)
        self._tables: dict[str, LobbyTable] = {}
        self._updates = self._stream()

    @property
    def tables(self) -> Mapping[str, LobbyTable]:
        """The open tables by id, as of the last update yielded."""
        return MappingProxyType(self._tables)

    @property
    def reconnects(self) -> int:
        """How many times the watch has opened a new stream after one broke."""
        return self._reconnects.total

    def __aiter__(self) -> AsyncIterator[LobbyUpdate]:
        return self

    async def __anext__(self) -> LobbyUpdate:
        return await self._updates.__anext__()

    async def aclose(self) -> None:
        """Stop watching and close the stream."""
        await self._updates.aclose()

    def _apply(self, update: LobbyUpdate) -> None:
        if isinstance(update, LobbySnapshot):
            self._tables = {table.table_id: table for table in update.tables}
        elif isinstance(update, TableOpened):
            self._tables[update.table.table_id] = update.table
        elif isinstance(update, TableClosed):
            self._tables.pop(update.table_id, None)

    async def _stream(self) -> AsyncGenerator[LobbyUpdate, None]:
        while True:
            call = self._stub.WatchLobby(self._request, metadata=self._metadata)
            why = "the server ended the stream"
            try:
                async for response in call:
                    update = wire.lobby_update_from_proto(response)
                    if update is None:
                        continue
                    self._apply(update)
                    self._reconnects.succeeded()
                    yield update
            except grpc.aio.AioRpcError as error:
                if error.code() not in RECONNECT_CODES:
                    raise error_from_rpc(error) from None
                why = f"{error.code().name}: {error.details()}"
            finally:
                call.cancel()
            await self._reconnects.wait(why)
