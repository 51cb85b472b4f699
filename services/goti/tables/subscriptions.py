"""The pub/sub connections under :class:`~goti.tables.fanout.Fanout`: what subscribes the
channels its listeners want, reads what Redis sends, and makes the connections again.

- :class:`ClassicSubscriber`, on one Redis (or the primary under Sentinel): one connection
  (SUBSCRIBE), made again from scratch, every channel subscribed again, whenever it fails.
- :class:`ShardedSubscriber`, on a Redis Cluster: sharded pub/sub (SSUBSCRIBE, Redis 7)
  through redis-py's cluster pub/sub, which keeps one connection to each node that serves a
  channel subscribed here, follows slots that move (it subscribes a channel again on its
  slot's new node when redis-py reads the cluster's slots afresh) and makes a node's
  connection again.  This class reads every node's connection at once, one task a node, and
  has the slots read afresh when a node's connection fails or a node drops a channel (its slot
  moved away), so that the failover of one primary cuts only the channels that primary served.

Either way a channel subscribed again, or one that may have lost messages, is reported to the
fan-out, whose listeners then catch up from the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, Final, Generic, Protocol, TypeVar

from redis.asyncio.client import PubSub
from redis.asyncio.cluster import ClusterPubSub

from goti.tables import keys
from goti.tables.background import cancel_and_wait

log = logging.getLogger(__name__)

_RECONNECT_FIRST_DELAY: Final = 0.05
_RECONNECT_MAX_DELAY: Final = 2.0
_READ_SECONDS: Final = 1.0
_CLOSE_TIMEOUT: Final = 2.0
_NODES_LOOK_SECONDS: Final = 0.2
"""How soon a node newly serving a channel subscribed here is read (a failover, a slot
moved): what it sends meanwhile waits on its connection, nothing is lost."""
_RECONCILE_SECONDS: Final = 5.0
"""How often, at most, the channels subscribed are checked against those wanted when nothing
failed."""

OpenPubSub = Callable[[], PubSub | ClusterPubSub]


class Deliveries(Protocol):
    """What a subscriber reports to (the fan-out)."""

    def wanted(self) -> Collection[str]:
        """The channels some listener listens to."""

    def subscribed(self, name: str) -> None:
        """Redis confirmed a subscription to the channel (perhaps again)."""

    def received(self, name: str, data: bytes) -> None:
        """A message arrived on the channel."""

    def lost(self, names: Iterable[str]) -> None:
        """Messages on these channels may have been lost."""


class Subscriber(Protocol):
    """Subscribes channels, reads them, and makes connections again (see the module)."""

    async def subscribe(self, names: Sequence[str]) -> None:
        """Subscribe channels (confirmed later, through :meth:`Deliveries.subscribed`)."""

    async def unsubscribe(self, names: Sequence[str]) -> None:
        """Unsubscribe channels no listener wants any more."""

    async def run(self) -> None:
        """Read until cancelled, making connections again as they fail."""

    async def close(self) -> None:
        """Close the connections (after :meth:`run` was cancelled)."""


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


async def _close_quietly(pubsub: PubSub) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(pubsub.aclose(), _CLOSE_TIMEOUT)


PubSubT = TypeVar("PubSubT", PubSub, ClusterPubSub)


class _Subscriber(Generic[PubSubT]):
    """What both subscribers share: the fan-out to report to, the lock that keeps Redis
    seeing subscriptions in the order this process decided them, the pub/sub client, and the
    messages Redis sends (plain ones, or sharded ones named with an ``s`` before them)."""

    _SUBSCRIBED = "subscribe"
    _MESSAGE = "message"

    def __init__(self, open_pubsub: OpenPubSub, deliveries: Deliveries) -> None:
        self._open = open_pubsub
        self._deliveries = deliveries
        self._pubsub: PubSubT | None = None
        self._lock = asyncio.Lock()

    async def close(self) -> None:
        pubsub, self._pubsub = self._pubsub, None
        if pubsub is not None:
            await _close_quietly(pubsub)

    def _unwanted(self, names: Sequence[str]) -> list[str]:
        wanted = self._deliveries.wanted()
        return [name for name in names if name not in wanted]

    def _dispatch(self, message: dict[str, Any]) -> str | None:
        """Report a subscription or a message; returns the kind of any other message."""
        kind = message.get("type")
        name = _text(message.get("channel"))
        if kind == self._SUBSCRIBED:
            self._deliveries.subscribed(name)
        elif kind == self._MESSAGE:
            self._deliveries.received(name, message["data"])
        else:
            return None if kind is None else str(kind)
        return None


class ClassicSubscriber(_Subscriber[PubSub]):
    """One pub/sub connection to one Redis."""

    async def subscribe(self, names: Sequence[str]) -> None:
        async with self._lock:
            pubsub = self._pubsub
            if pubsub is None:
                return  # run() subscribes every channel wanted once it is connected
            try:
                await pubsub.subscribe(*names)
            except Exception as error:
                # The reader sees the connection fail too, and subscribes again.
                log.warning("pub/sub subscribe failed: %s", error)

    async def unsubscribe(self, names: Sequence[str]) -> None:
        async with self._lock:
            names = self._unwanted(names)
            if self._pubsub is None or not names:
                return
            try:
                await self._pubsub.unsubscribe(*names)
            except Exception as error:
                log.warning("pub/sub unsubscribe failed: %s", error)

    async def run(self) -> None:
        delay = _RECONNECT_FIRST_DELAY
        while True:
            try:
                pubsub = self._pubsub or await self._connect()
                message = await pubsub.get_message(timeout=_READ_SECONDS)
                delay = _RECONNECT_FIRST_DELAY
                if message is not None:
                    self._dispatch(message)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.warning("pub/sub connection lost (%s); reconnecting in %.2f s", error, delay)
                await self.close()
                await asyncio.sleep(delay)
                delay = min(delay * 2, _RECONNECT_MAX_DELAY)

    async def _connect(self) -> PubSub:
        async with self._lock:
            pubsub = self._open()
            try:
                # A channel subscribed again tells its listeners to catch up; a connection
                # with nothing to listen to listens to the idle channel, to have something to
                # read.
                await pubsub.subscribe(*(self._deliveries.wanted() or [keys.IDLE_CHANNEL]))
            except BaseException:
                await _close_quietly(pubsub)
                raise
            self._pubsub = pubsub
            return pubsub


class ShardedSubscriber(_Subscriber[ClusterPubSub]):
    """Sharded pub/sub on a Redis Cluster, one connection a node (see the module)."""

    _SUBSCRIBED = "ssubscribe"
    _MESSAGE = "smessage"

    def __init__(self, open_pubsub: OpenPubSub, deliveries: Deliveries) -> None:
        super().__init__(open_pubsub, deliveries)
        self._ready = False
        # Per node: the node's pub/sub client as redis-py holds it, and the task reading it
        # while redis-py holds that client for the node.
        self._readers: dict[str, tuple[PubSub, asyncio.Task[None]]] = {}
        self._refresh: asyncio.Task[None] | None = None
        self._following: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._check_at = 0.0
        self._check_delay = _RECONNECT_FIRST_DELAY

    def _cluster_pubsub(self) -> ClusterPubSub:
        if self._pubsub is None:
            pubsub = self._open()
            if not isinstance(pubsub, ClusterPubSub):
                raise TypeError("sharded pub/sub needs a Redis Cluster client")
            self._pubsub = pubsub
        return self._pubsub

    async def subscribe(self, names: Sequence[str]) -> None:
        if not self._ready:
            return  # run() subscribes every channel wanted once it knows the cluster's slots
        async with self._lock:
            if not await self._subscribe_by_node(self._cluster_pubsub(), names):
                self._check_soon()

    async def unsubscribe(self, names: Sequence[str]) -> None:
        async with self._lock:
            names = self._unwanted(names)
            if self._pubsub is None or not names:
                return
            try:
                await self._pubsub.sunsubscribe(*names)
            except Exception as error:
                # Left subscribed; the next check unsubscribes it.
                log.warning("sharded pub/sub unsubscribe failed: %s", error)
                self._check_soon()

    async def run(self) -> None:
        pubsub = self._cluster_pubsub()
        try:
            while True:
                if time.monotonic() >= self._check_at:
                    await self._check(pubsub)
                self._read_every_node(pubsub)
                reading = [task for _, task in self._readers.values() if not task.done()]
                if reading:
                    await asyncio.wait(
                        reading, timeout=_NODES_LOOK_SECONDS, return_when=asyncio.FIRST_COMPLETED
                    )
                else:
                    await asyncio.sleep(_NODES_LOOK_SECONDS)
        finally:
            tasks = [task for _, task in self._readers.values()] + list(self._tasks)
            if self._refresh is not None:
                tasks.append(self._refresh)
            await cancel_and_wait(tasks)
            self._readers.clear()

    async def close(self) -> None:
        self._ready = False
        await super().close()

    async def _check(self, pubsub: ClusterPubSub) -> None:
        """Subscribe what is wanted and not subscribed (a node that failed), and unsubscribe
        what is subscribed and no longer wanted (an unsubscribe that failed)."""
        try:
            await pubsub.cluster.initialize()
            async with self._lock:
                wanted = set(self._deliveries.wanted())
                held = {_text(name) for name in pubsub.shard_channels}
                leaving = {_text(name) for name in pubsub.pending_unsubscribe_shard_channels}
                subscribed = await self._subscribe_by_node(pubsub, sorted(wanted - held))
                extra = sorted(held - wanted - leaving)
                if extra:
                    await pubsub.sunsubscribe(*extra)
                self._ready = True
        except Exception as error:
            log.warning("sharded pub/sub: %s; checking again in %.2f s", error, self._check_delay)
            subscribed = False
        if subscribed:
            self._check_at = time.monotonic() + _RECONCILE_SECONDS
            self._check_delay = _RECONNECT_FIRST_DELAY
        else:
            self._check_at = time.monotonic() + self._check_delay
            self._check_delay = min(self._check_delay * 2, _RECONNECT_MAX_DELAY)

    def _check_soon(self) -> None:
        self._check_at = min(self._check_at, time.monotonic() + self._check_delay)

    async def _subscribe_by_node(self, pubsub: ClusterPubSub, names: Sequence[str]) -> bool:
        """Subscribe channels, those of each node together; False when a node failed (its
        channels wait for the next check)."""
        by_node: dict[str, list[str]] = {}
        for name in names:
            node = pubsub.cluster.get_node_from_key(name)
            by_node.setdefault("" if node is None else node.name, []).append(name)
        done = True
        for node_name, group in by_node.items():
            try:
                await pubsub.ssubscribe(*group)
            except Exception as error:
                log.warning("sharded pub/sub: subscribing at %s failed: %s", node_name, error)
                done = False
        return done

    def _read_every_node(self, pubsub: ClusterPubSub) -> None:
        """A reading task for each node's client that redis-py holds now."""
        held = dict(pubsub.node_pubsub_mapping)
        for name in [name for name in self._readers if name not in held]:
            self._readers.pop(name)[1].cancel()
        for name, node_pubsub in held.items():
            known = self._readers.get(name)
            if known is None or known[0] is not node_pubsub:
                if known is not None:
                    known[1].cancel()
                task = asyncio.ensure_future(self._read_node(pubsub, name, node_pubsub))
                self._readers[name] = (node_pubsub, task)

    async def _read_node(self, pubsub: ClusterPubSub, name: str, node_pubsub: PubSub) -> None:
        """Read one node's connection while redis-py keeps it for that node."""
        delay = _RECONNECT_FIRST_DELAY
        failing = False
        while pubsub.node_pubsub_mapping.get(name) is node_pubsub:
            node = pubsub.cluster.get_node(node_name=name)
            if node is None or node_pubsub.connection is None:
                # Gone from the cluster (its channels move once the slots are read), or not
                # connected yet (a subscription there failed, and is tried again).
                await asyncio.sleep(_NODES_LOOK_SECONDS)
                continue
            try:
                # No timeout: redis-py holds a node's connection for a bounded read until it
                # ends, so SSUBSCRIBE and SUNSUBSCRIBE there would wait out the rest of it (a
                # paired seek's stream ended a second late so); an unbounded read leaves the
                # connection free for them.  The task is cancelled when redis-py replaces the
                # node's client (see _read_every_node).
                message = await pubsub.get_sharded_message(target_node=node, timeout=None)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                if not failing:
                    log.warning("sharded pub/sub: connection to %s lost: %s", name, error)
                    self._deliveries.lost([_text(each) for each in node_pubsub.shard_channels])
                    failing = True
                # The node may have been failed over: read the slots again, so that redis-py
                # moves its channels to the node promoted in its place.
                self._refresh_slots()
                await asyncio.sleep(delay)
                delay = min(delay * 2, _RECONNECT_MAX_DELAY)
                continue
            failing = False
            delay = _RECONNECT_FIRST_DELAY
            if message is not None:
                self._dispatch(message)

    def _refresh_slots(self) -> None:
        """Have redis-py read the cluster's slots again (in the background, once at a time):
        its cluster pub/sub then subscribes each channel whose slot moved on the slot's new
        node."""
        if self._refresh is not None and not self._refresh.done():
            return
        pubsub = self._pubsub
        if pubsub is not None:
            self._refresh = asyncio.ensure_future(self._read_slots(pubsub))

    async def _read_slots(self, pubsub: ClusterPubSub) -> None:
        try:
            await pubsub.cluster.nodes_manager.initialize()
        except Exception as error:
            log.warning("sharded pub/sub: reading the cluster's slots failed: %s", error)
        self._check_soon()

    def _dispatch(self, message: dict[str, Any]) -> str | None:
        kind = super()._dispatch(message)
        name = _text(message.get("channel"))
        if kind == "sunsubscribe" and name in self._deliveries.wanted():
            # A channel still listened to, dropped by its node: its slot moved away (Redis
            # drops a slot's shard channels when the slot leaves), or redis-py moves it.
            # Messages may have been missed; the channel follows its slot to the new node.
            self._deliveries.lost([name])
            self._follow_slot(name)
        return kind

    def _follow_slot(self, channel: str) -> None:
        """Have redis-py learn where a channel's slot went: a read of a key of that slot
        (the channel's own name, which no key has) sent where redis-py thinks the slot is
        comes back MOVED, and redis-py then moves the slot in its map and subscribes the
        channel again at the new node; where the map is right already, nothing changes.
        Once at a time per channel, in the background."""
        pubsub = self._pubsub
        if pubsub is None or channel in self._following:
            return
        self._following.add(channel)
        task = asyncio.ensure_future(self._read_where(pubsub, channel))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _read_where(self, pubsub: ClusterPubSub, channel: str) -> None:
        try:
            await pubsub.cluster.exists(channel)
        except Exception as error:
            log.warning("sharded pub/sub: following %s to its slot failed: %s", channel, error)
            self._refresh_slots()
        finally:
            self._following.discard(channel)
