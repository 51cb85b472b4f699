"""Live messages from Redis pub/sub to every watcher in this process, over one connection
(one per node on a Redis Cluster, whose table channels are sharded: see
:mod:`goti.tables.subscriptions`).

A process holds one pub/sub connection whatever the number of watchers.  A channel is
subscribed while at least one local watcher listens to it (counted per channel) and each
message is decoded once, then handed to every listener's queue.  :meth:`Fanout.listen`
returns only once Redis has confirmed the subscription, so a watcher that reads the log
afterwards cannot miss an event between the two.

A change this process committed reaches its own listeners at once (:meth:`Fanout.deliver`),
without waiting for Redis to send it back; whichever copy comes first is handed on and the
other dropped, recognised by its bytes.

Pub/sub is at most once: a listener is told to catch up from the log (:data:`CATCH_UP`) when
its queue overflowed or the connection was lost and made again, and to end
(:data:`CLOSING`) when the process shuts down.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

from goti.tables.background import cancel_and_wait
from goti.tables.redis_calls import StoreUnavailableError
from goti.tables.store import TableStore
from goti.tables.subscriptions import ClassicSubscriber, ShardedSubscriber, Subscriber

log = logging.getLogger(__name__)

T = TypeVar("T")

_SUBSCRIBE_TIMEOUT: Final = 10.0
# Messages remembered per channel to drop the second copy of each: a commit publishes at most
# a few events, and both copies arrive within one commit's time of each other.
_DELIVERED_KEPT: Final = 16


class Signal(enum.Enum):
    """What a listener is told besides messages."""

    CATCH_UP = "catch_up"
    """Messages may have been lost: read what was missed from the log."""
    CLOSING = "closing"
    """The process is shutting down: end the stream so the client reconnects elsewhere."""


CATCH_UP: Final = Signal.CATCH_UP
CLOSING: Final = Signal.CLOSING


class FanoutClosedError(Exception):
    """The process is shutting down and takes no new listeners."""


class Listener(Generic[T]):
    """One watcher's view of a channel: decoded messages and signals, in order."""

    def __init__(self, size: int) -> None:
        self._queue: asyncio.Queue[T | Signal] = asyncio.Queue(size)
        self._behind = False

    def deliver(self, item: T | Signal) -> None:
        if item is CLOSING:
            self._force(item)
            return
        if item is CATCH_UP:
            # A watcher waiting on an empty queue must hear it now, not at its next heartbeat.
            if not self._behind and self._queue.empty():
                self._queue.put_nowait(item)
            self._behind = True
            return
        try:
            self._queue.put_nowait(item)
        except asyncio.QueueFull:
            # A watcher this far behind reads what it missed from the log instead.
            self._behind = True

    def _force(self, item: T | Signal) -> None:
        while True:
            try:
                self._queue.put_nowait(item)
                return
            except asyncio.QueueFull:
                self._queue.get_nowait()

    async def next(self, timeout: float) -> T | Signal | None:
        """The next message or signal; None after ``timeout`` seconds of nothing."""
        if self._behind:
            self._behind = False
            return CATCH_UP
        try:
            item = self._queue.get_nowait()
        except asyncio.QueueEmpty:
            # asyncio.timeout rather than wait_for, which would start a task per message.
            try:
                async with asyncio.timeout(timeout):
                    item = await self._queue.get()
            except TimeoutError:
                return None
        if item is CATCH_UP:
            self._behind = False
        return item


@dataclass(eq=False)
class _Channel:
    decode: Callable[[bytes], Any]
    listeners: set[Listener[Any]] = field(default_factory=set)
    delivered: deque[bytes] = field(default_factory=lambda: deque(maxlen=_DELIVERED_KEPT))
    subscribed: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class Fanout:
    """This process's pub/sub connection (one per cluster node on a cluster) and the
    listeners of each channel."""

    def __init__(self, store: TableStore, *, queue_size: int) -> None:
        self._queue_size = queue_size
        self._channels: dict[str, _Channel] = {}
        self._subscriber: Subscriber = (
            ShardedSubscriber(store.subscriber, self)
            if store.keys.cluster
            else ClassicSubscriber(store.subscriber, self)
        )
        self._reader: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def channel_count(self) -> int:
        """Channels subscribed now."""
        return len(self._channels)

    @property
    def listener_count(self) -> int:
        """Listeners now, over every channel."""
        return len({id(each) for channel in self._channels.values() for each in channel.listeners})

    def start(self) -> None:
        """Start reading from Redis (in the background)."""
        if self._reader is None:
            self._reader = asyncio.ensure_future(self._subscriber.run())

    async def close(self) -> None:
        """Tell every listener to end, and stop reading."""
        self._closed = True
        for channel in self._channels.values():
            for listener in channel.listeners:
                listener.deliver(CLOSING)
            if not channel.subscribed.done():
                channel.subscribed.set_exception(FanoutClosedError("shutting down"))
                channel.subscribed.exception()
        if self._reader is not None:
            await cancel_and_wait([self._reader])
        await self._subscriber.close()

    def deliver(self, channel_name: str, messages: Iterable[bytes]) -> None:
        """Hand messages this process just published to the channel's local listeners, ahead
        of their copies from Redis (dropped when they arrive)."""
        channel = self._channels.get(channel_name)
        if channel is None or self._closed:
            return
        for data in messages:
            self._hand_on(channel, channel_name, data)

    @contextlib.asynccontextmanager
    async def listen(
        self, channels: str | Sequence[str], decode: Callable[[bytes], T]
    ) -> AsyncIterator[Listener[T]]:
        """Listen to a channel, or to several at once (the lobby of every shard), with one
        listener: subscribed (and confirmed by Redis) on entry, until exit.

        Raises :class:`FanoutClosedError` while shutting down, and
        :class:`~goti.tables.store.StoreUnavailableError` when Redis does not confirm the
        subscription in time.
        """
        if self._closed:
            raise FanoutClosedError("the server is shutting down")
        names = [channels] if isinstance(channels, str) else list(channels)
        listener: Listener[T] = Listener(self._queue_size)
        joined: list[tuple[str, _Channel]] = []
        new: list[str] = []
        for name in names:
            channel = self._channels.get(name)
            if channel is None:
                channel = _Channel(decode)
                self._channels[name] = channel
                new.append(name)
            channel.listeners.add(listener)
            joined.append((name, channel))
        try:
            if new:
                await self._subscriber.subscribe(new)
            try:
                confirmed = [asyncio.shield(channel.subscribed) for _, channel in joined]
                await asyncio.wait_for(asyncio.gather(*confirmed), _SUBSCRIBE_TIMEOUT)
            except TimeoutError:
                raise StoreUnavailableError(
                    "Redis did not confirm a subscription in time"
                ) from None
            yield listener
        finally:
            gone = []
            for name, channel in joined:
                channel.listeners.discard(listener)
                if not channel.listeners and self._channels.get(name) is channel:
                    del self._channels[name]
                    gone.append(name)
            if gone:
                await self._subscriber.unsubscribe(gone)

    # -- what the subscriber reports ----------------------------------------------------------

    def wanted(self) -> Collection[str]:
        """The channels some listener here listens to."""
        return self._channels.keys()

    def subscribed(self, name: str) -> None:
        """Redis confirmed a subscription to the channel."""
        channel = self._channels.get(name)
        if channel is None:
            return
        if not channel.subscribed.done():
            channel.subscribed.set_result(None)
        else:
            # Subscribed again: the connection was lost and made again (by the subscriber or
            # by the client library), or the channel moved to another node, and messages may
            # have been lost meanwhile.
            for listener in channel.listeners:
                listener.deliver(CATCH_UP)

    def received(self, name: str, data: bytes) -> None:
        """A message arrived on the channel."""
        channel = self._channels.get(name)
        if channel is not None:
            self._hand_on(channel, name, data)

    def lost(self, names: Iterable[str]) -> None:
        """Messages on these channels may have been lost (a node's connection failed, or a
        channel left its node): their listeners catch up from the log."""
        for name in names:
            channel = self._channels.get(name)
            if channel is not None:
                for listener in channel.listeners:
                    listener.deliver(CATCH_UP)

    def _hand_on(self, channel: _Channel, name: str, data: bytes) -> None:
        if data in channel.delivered:
            return
        channel.delivered.append(data)
        try:
            decoded = channel.decode(data)
        except Exception:
            log.exception("undecodable message on %s", name)
            return
        for listener in channel.listeners:
            listener.deliver(decoded)
