"""Live streams that survive the network: a table's events and the lobby's changes.

A watch is an async iterator that never shows its reconnects.  When the stream breaks (the
server restarts, a replica goes away in a deploy, the phone changes networks) it waits a
jittered, growing delay and opens a new one; a table watch resumes from the last seq it
yielded, drops any event it already yielded, and reconnects at once if the server's
heartbeat says it missed one.  So the caller sees every event exactly once, in seq order.

``aclose()`` ends a watch from any task, also while another task waits on it: that task's
``async for`` simply ends.  Closing the client ends every watch it opened.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Generic, TypeVar

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

UpdateT = TypeVar("UpdateT")
ResponseT = TypeVar("ResponseT")

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


class _ReopenStreamError(Exception):
    """The stream must be opened again; the message says why."""


class ReconnectingStream(abc.ABC, Generic[ResponseT, UpdateT]):
    """What every live stream of the SDK does (the watches here, the seek of
    :mod:`goti_client.matchmaking`): open a stream, turn its messages into updates, open a new
    stream with backoff when it breaks, and end cleanly when closed."""

    def __init__(self, backoff: Backoff, give_up_after: float | None) -> None:
        self._backoff = backoff
        self._give_up_after = give_up_after
        self._closing = asyncio.Event()
        self._call: grpc.aio.UnaryStreamCall[object, ResponseT] | None = None
        self._iterating = False
        self._reconnects = 0
        self._updates = self._stream()

    @property
    def reconnects(self) -> int:
        """How many times the watch has opened a new stream after one broke."""
        return self._reconnects

    @property
    def closed(self) -> bool:
        """Whether the watch was closed (by ``aclose()`` or its client)."""
        return self._closing.is_set()

    def __aiter__(self) -> AsyncIterator[UpdateT]:
        return self

    async def __anext__(self) -> UpdateT:
        self._iterating = True
        try:
            return await self._updates.__anext__()
        finally:
            self._iterating = False

    def stop(self) -> None:
        """Close the watch without waiting: whoever iterates it sees it end."""
        self._closing.set()
        if self._call is not None:
            self._call.cancel()

    async def aclose(self) -> None:
        """Close the watch and its stream."""
        self.stop()
        if not self._iterating:
            await self._updates.aclose()

    @abc.abstractmethod
    def _open(self) -> grpc.aio.UnaryStreamCall[object, ResponseT]:
        """Open a new stream from where the watch stands."""

    @abc.abstractmethod
    async def _updates_of(self, response: ResponseT) -> list[UpdateT]:
        """The updates one message makes; raises :class:`_ReopenStreamError` to start afresh."""

    def _is_last(self, update: UpdateT) -> bool:
        """Whether the watch ends after yielding ``update``."""
        return False

    def _reopens_after(self, error: grpc.aio.AioRpcError) -> bool:
        """Whether a stream that failed so is opened again (else the failure is raised)."""
        return error.code() in RECONNECT_CODES

    async def _stream(self) -> AsyncGenerator[UpdateT, None]:
        failures = 0
        failing_since: float | None = None
        while not self._closing.is_set():
            call = self._call = self._open()
            why = "the server ended the stream"
            try:
                async for response in call:
                    for update in await self._updates_of(response):
                        failures, failing_since = 0, None
                        yield update
                        if self._is_last(update):
                            return
            except (_ReopenStreamError, UnavailableError) as reconnect:
                # UnavailableError: a call the watch made to read an event (the table's
                # variant) found Goti away; a new stream will ask again.
                why = str(reconnect)
            except grpc.aio.AioRpcError as error:
                if self._closing.is_set():
                    return
                if not self._reopens_after(error):
                    raise error_from_rpc(error) from None
                why = f"{error.code().name}: {error.details()}"
            except asyncio.CancelledError:
                # A stream cancelled by stop() ends the watch; any other cancellation is the
                # caller's and goes on up.
                if self._closing.is_set():
                    return
                raise
            finally:
                call.cancel()
                self._call = None
            now = time.monotonic()
            failing_since = now if failing_since is None else failing_since
            if self._give_up_after is not None and now - failing_since > self._give_up_after:
                raise UnavailableError(
                    f"gave up after {now - failing_since:.1f} s without a working stream: {why}",
                    code=grpc.StatusCode.UNAVAILABLE,
                )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), self._backoff.delay(failures))
            failures += 1
            self._reconnects += 1


class TableWatch(ReconnectingStream[tables_pb2.WatchTableResponse, TableUpdate]):
    """A table, live: ``async for update in watch`` yields a :class:`Snapshot` (when the
    watch starts from seq 0, or has fallen too far behind) and every :class:`TableEvent`
    after it, in seq order, each exactly once.  The stream opens on the first read: a watch
    started from seq 0 begins with the table as it is then.

    It ends after a :class:`RematchStarted` (the table's last event) or when closed; it
    raises a :class:`~goti_client.GotiError` when the server refuses the watch itself (no
    such table) or, with ``give_up_after``, when no stream has worked for that many seconds.
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
        super().__init__(backoff, give_up_after)

    @property
    def last_seq(self) -> int:
        """The seq of the last snapshot or event yielded: where a new watch would resume."""
        return self._last_seq

    def _open(self) -> grpc.aio.UnaryStreamCall[object, tables_pb2.WatchTableResponse]:
        request = tables_pb2.WatchTableRequest(table_id=self.table_id, after_seq=self._last_seq)
        return self._stub.WatchTable(request, metadata=self._metadata)  # type: ignore[return-value]

    async def _updates_of(self, response: tables_pb2.WatchTableResponse) -> list[TableUpdate]:
        kind = response.WhichOneof("message")
        if kind == "event":
            seq = response.event.seq
            if seq <= self._last_seq:
                return []
            if seq != self._last_seq + 1:
                raise _ReopenStreamError(f"event {seq} came after {self._last_seq}")
            event = wire.event_from_proto(response.event, await self._variant_of(self.table_id))
            self._last_seq = seq
            self._on_seq(self.table_id, seq)
            return [event]
        if kind == "snapshot":
            snapshot = response.snapshot
            table = wire.table_from_proto(snapshot.table, snapshot.your_role)
            self._last_seq = table.seq
            self._on_table(table)
            return [Snapshot(table)]
        if kind == "heartbeat" and response.heartbeat.seq > self._last_seq:
            current = response.heartbeat.seq
            raise _ReopenStreamError(f"the table is at {current}, past {self._last_seq}")
        return []

    def _is_last(self, update: TableUpdate) -> bool:
        return isinstance(update, RematchStarted)


class LobbyWatch(ReconnectingStream[tables_pb2.WatchLobbyResponse, LobbyUpdate]):
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
        self._tables: dict[str, LobbyTable] = {}
        super().__init__(backoff, give_up_after)

    @property
    def tables(self) -> Mapping[str, LobbyTable]:
        """The open tables by id, as of the last update yielded."""
        return MappingProxyType(self._tables)

    def _open(self) -> grpc.aio.UnaryStreamCall[object, tables_pb2.WatchLobbyResponse]:
        return self._stub.WatchLobby(self._request, metadata=self._metadata)  # type: ignore[return-value]

    async def _updates_of(self, response: tables_pb2.WatchLobbyResponse) -> list[LobbyUpdate]:
        update = wire.lobby_update_from_proto(response)
        if isinstance(update, LobbySnapshot):
            self._tables = {table.table_id: table for table in update.tables}
        elif isinstance(update, TableOpened):
            self._tables[update.table.table_id] = update.table
        elif isinstance(update, TableClosed):
            self._tables.pop(update.table_id, None)
        return [] if update is None else [update]
