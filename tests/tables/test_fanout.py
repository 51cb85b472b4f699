"""The fan-out of one process: a message reaches each local listener once, whether this
process handed it on after committing or Redis sent it back first, and a listener waiting for
the next message hears at once that it must catch up."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest_asyncio
from redis.asyncio import Redis

from goti.tables.fanout import CATCH_UP, Fanout, Listener
from goti.tables.store import TableStore

CHANNEL = "goti:test-fanout"
WAIT_SECONDS = 30.0


@pytest_asyncio.fixture
async def fanout(redis: Redis) -> AsyncIterator[Fanout]:
    fanout = Fanout(TableStore(redis, table_log_events=16), queue_size=8)
    fanout.start()
    try:
        yield fanout
    finally:
        await fanout.close()


async def _next(listener: Listener[bytes]) -> bytes | object:
    item = await listener.next(WAIT_SECONDS)
    assert item is not None, "nothing arrived"
    return item


async def test_a_message_handed_on_here_is_not_delivered_again_when_redis_sends_it(
    fanout: Fanout, redis: Redis
) -> None:
    async with fanout.listen(CHANNEL, bytes) as listener:
        fanout.deliver(CHANNEL, [b"seq 1", b"seq 2"])
        assert await _next(listener) == b"seq 1"
        assert await _next(listener) == b"seq 2"
        # Redis's copies come after; the message published after them is the next one heard.
        for message in (b"seq 1", b"seq 2", b"seq 3"):
            assert await redis.publish(CHANNEL, message) == 1
        assert await _next(listener) == b"seq 3"


async def test_a_message_redis_sent_first_is_not_delivered_again_when_handed_on_here(
    fanout: Fanout, redis: Redis
) -> None:
    async with fanout.listen(CHANNEL, bytes) as listener:
        assert await redis.publish(CHANNEL, b"seq 1") == 1
        assert await _next(listener) == b"seq 1"
        fanout.deliver(CHANNEL, [b"seq 1"])
        fanout.deliver(CHANNEL, [b"seq 2"])
        assert await _next(listener) == b"seq 2"


async def test_messages_for_a_channel_nobody_here_listens_to_are_dropped(
    fanout: Fanout, redis: Redis
) -> None:
    fanout.deliver(CHANNEL, [b"seq 1"])
    async with fanout.listen(CHANNEL, bytes) as listener:
        assert await redis.publish(CHANNEL, b"seq 1") == 1
        assert await _next(listener) == b"seq 1"


async def test_a_waiting_listener_hears_at_once_that_it_must_catch_up() -> None:
    listener: Listener[bytes] = Listener(8)
    waiting = asyncio.ensure_future(listener.next(WAIT_SECONDS))
    await asyncio.sleep(0)  # the listener is waiting on its empty queue
    listener.deliver(CATCH_UP)
    assert await asyncio.wait_for(waiting, WAIT_SECONDS) is CATCH_UP
    # Told once: what follows is the next message.
    listener.deliver(b"seq 5")
    assert await listener.next(WAIT_SECONDS) == b"seq 5"


async def test_a_listener_behind_hears_catch_up_before_what_is_queued() -> None:
    listener: Listener[bytes] = Listener(8)
    listener.deliver(b"seq 4")
    listener.deliver(CATCH_UP)
    assert await listener.next(WAIT_SECONDS) is CATCH_UP
    assert await listener.next(WAIT_SECONDS) == b"seq 4"
