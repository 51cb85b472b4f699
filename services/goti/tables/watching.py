"""Watch streams: a table's events and the lobby, live.

A table stream listens to the table's channel first, then reads the log: a snapshot when
``after_seq`` is 0, ahead of the table or older than the log, else the events missed.  Live
events follow in seq order; one already sent is dropped, and a gap (or a lost connection,
or a watcher that fell behind) is filled from the log.  While idle, a heartbeat carries the
table's seq as Redis has it, which also catches an event pub/sub lost.  A table found behind
what the stream sent, or changed again at the seq it sent last (a failover lost its last
changes, and play went on from before them), is sent again, as a snapshot.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass

from goti.api.v1 import tables_pb2
from goti.tables.fanout import CATCH_UP, CLOSING, Fanout, FanoutClosedError, Listener
from goti.tables.loading import TableReader, table_not_found
from goti.tables.restoring import Restorer
from goti.tables.store import TableNotFoundError, TableStore


class ShuttingDownError(Exception):
    """The server is shutting down: the stream ends so that its client reconnects."""


@dataclass(frozen=True, slots=True)
class _LiveEvent:
    seq: int
    message: tables_pb2.WatchTableResponse


def _live_event(data: bytes) -> _LiveEvent:
    event = tables_pb2.TableEvent.FromString(data)
    return _LiveEvent(event.seq, tables_pb2.WatchTableResponse(event=event))


@dataclass
class _Sent:
    """Where a table stream is: the seq of the last event or snapshot it sent, and that
    event."""

    seq: int
    event: tables_pb2.TableEvent | None = None

    def of_event(self, event: tables_pb2.TableEvent) -> tables_pb2.WatchTableResponse:
        self.seq, self.event = event.seq, event
        return tables_pb2.WatchTableResponse(event=event)

    def of_live(self, live: _LiveEvent) -> tables_pb2.WatchTableResponse:
        """The live event's message, as decoded once for every watcher of the table."""
        self.seq, self.event = live.seq, live.message.event
        return live.message

    def of_snapshot(self, snapshot: tables_pb2.WatchTableResponse) -> tables_pb2.WatchTableResponse:
        self.seq, self.event = snapshot.snapshot.table.seq, None
        return snapshot

    def rewritten_by(self, live: _LiveEvent) -> bool:
        """Whether a live event numbered as the one sent last is another change: after a
        failover lost that one, the table was changed again at its seq."""
        return live.seq == self.seq and self.event is not None and live.message.event != self.event


def _now_ms() -> int:
    return int(time.time() * 1000)


def _heartbeat(now_ms: int, seq: int) -> tables_pb2.Heartbeat:
    heartbeat = tables_pb2.Heartbeat(seq=seq)
    heartbeat.server_time.FromMilliseconds(now_ms)
    return heartbeat


class Watching:
    """Serves the watch streams of this process."""

    def __init__(
        self,
        store: TableStore,
        reader: TableReader,
        restorer: Restorer,
        fanout: Fanout,
        *,
        heartbeat_seconds: float,
        lobby_snapshot_size: int,
        clock_ms: Callable[[], int] = _now_ms,
    ) -> None:
        self._store = store
        self._reader = reader
        self._restorer = restorer
        self._fanout = fanout
        self._heartbeat_seconds = heartbeat_seconds
        self._lobby_snapshot_size = lobby_snapshot_size
        self._clock_ms = clock_ms

    async def table(
        self, table_id: str, after_seq: int, player_id: str | None
    ) -> AsyncGenerator[tables_pb2.WatchTableResponse, None]:
        """A table's stream: snapshot or missed events, then live events and heartbeats."""
        try:
            channel = self._store.keys.table(table_id).channel
            async with self._fanout.listen(channel, _live_event) as listener:
                async for message in self._table_stream(table_id, after_seq, player_id, listener):
                    yield message
        except FanoutClosedError:
            raise ShuttingDownError from None

    async def _table_stream(
        self,
        table_id: str,
        after_seq: int,
        player_id: str | None,
        listener: Listener[_LiveEvent],
    ) -> AsyncGenerator[tables_pb2.WatchTableResponse, None]:
        sent = _Sent(after_seq)
        variant = None
        if after_seq > 0:
            try:
                found = await self._store.events_after(table_id, after_seq)
            except TableNotFoundError:
                raise table_not_found(table_id) from None
            if found.events is not None and after_seq <= found.seq:
                variant = await self._restorer.variant_of(table_id)
                for event in await self._restorer.restore(variant, found.events):
                    yield sent.of_event(event)
            else:
                sent.seq = -1
        if after_seq == 0 or sent.seq < 0:
            yield sent.of_snapshot(await self._snapshot(table_id, player_id))
        while True:
            item = await listener.next(self._heartbeat_seconds)
            if item is CLOSING:
                raise ShuttingDownError
            if isinstance(item, _LiveEvent):
                if sent.rewritten_by(item):
                    yield sent.of_snapshot(await self._snapshot(table_id, player_id))
                    continue
                if item.seq <= sent.seq:
                    continue
                if item.seq == sent.seq + 1:
                    yield sent.of_live(item)
                    continue
            if item is None:
                seq_now = await self._store.seq(table_id)
                if seq_now is None:
                    raise table_not_found(table_id)
                if seq_now == sent.seq:
                    heartbeat = _heartbeat(self._clock_ms(), sent.seq)
                    yield tables_pb2.WatchTableResponse(heartbeat=heartbeat)
                    continue
            # A gap, lost messages, or a heartbeat that found the table ahead (or behind): read
            # the log.
            assert item is None or item is CATCH_UP or isinstance(item, _LiveEvent)
            try:
                found = await self._store.events_after(table_id, sent.seq)
            except TableNotFoundError:
                raise table_not_found(table_id) from None
            if found.events is None or found.seq < sent.seq:
                # Trimmed from the log, or gone from Redis (a failover lost the last changes):
                # what this stream sent is no longer the table, so it starts again from it.
                yield sent.of_snapshot(await self._snapshot(table_id, player_id))
                continue
            if found.events:
                if variant is None:
                    variant = await self._restorer.variant_of(table_id)
                for event in await self._restorer.restore(variant, found.events):
                    if event.seq == sent.seq + 1:
                        yield sent.of_event(event)

    async def _snapshot(
        self, table_id: str, player_id: str | None
    ) -> tables_pb2.WatchTableResponse:
        seated = await self._reader.get_table(table_id, player_id)
        return tables_pb2.WatchTableResponse(
            snapshot=tables_pb2.TableSnapshot(table=seated.table, your_role=seated.role)
        )

    async def lobby(self, variant: int) -> AsyncGenerator[tables_pb2.WatchLobbyResponse, None]:
        """The lobby's stream: a snapshot, then tables opening and closing, and heartbeats."""
        try:
            # Every shard's lobby has a channel (one on one Redis).
            channels = [shard.lobby_channel for shard in self._store.keys.shards]
            async with self._fanout.listen(
                channels, tables_pb2.WatchLobbyResponse.FromString
            ) as listener:
                async for message in self._lobby_stream(variant, listener):
                    yield message
        except FanoutClosedError:
            raise ShuttingDownError from None

    async def _lobby_snapshot(
        self, variant: int, listed: set[str]
    ) -> tables_pb2.WatchLobbyResponse:
        listings = [
            tables_pb2.LobbyTable.FromString(listing)
            for listing in await self._store.lobby(self._lobby_snapshot_size)
        ]
        kept = [listing for listing in listings if not variant or listing.variant == variant]
        listed.clear()
        listed.update(listing.table_id for listing in kept)
        return tables_pb2.WatchLobbyResponse(snapshot=tables_pb2.LobbySnapshot(tables=kept))

    async def _lobby_stream(
        self, variant: int, listener: Listener[tables_pb2.WatchLobbyResponse]
    ) -> AsyncGenerator[tables_pb2.WatchLobbyResponse, None]:
        listed: set[str] = set()
        yield await self._lobby_snapshot(variant, listed)
        while True:
            item = await listener.next(self._heartbeat_seconds)
            if item is CLOSING:
                raise ShuttingDownError
            if item is None:
                yield tables_pb2.WatchLobbyResponse(heartbeat=_heartbeat(self._clock_ms(), 0))
            elif item is CATCH_UP:
                # The lobby keeps no log: what was missed is in a fresh snapshot.
                yield await self._lobby_snapshot(variant, listed)
            elif isinstance(item, tables_pb2.WatchLobbyResponse):
                kind = item.WhichOneof("message")
                if kind == "table_opened":
                    if variant and item.table_opened.variant != variant:
                        continue
                    listed.add(item.table_opened.table_id)
                    yield item
                elif kind == "table_closed" and item.table_closed in listed:
                    listed.discard(item.table_closed)
                    yield item
