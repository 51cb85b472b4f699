"""The tables store against a real Redis: compare-and-set, the log, idempotency, timers."""

from __future__ import annotations

import asyncio
import os
from typing import cast

import pytest
from redis.asyncio import Redis
from redis.asyncio.client import PubSub

from goti.settings import Settings
from goti.tables import keys
from goti.tables.options import TablesOptions
from goti.tables.packing import DEFLATED
from goti.tables.store import (
    Change,
    CodeTakenError,
    LobbyUpdate,
    RequestReusedError,
    StaleSeqError,
    TableExistsError,
    TableNotFoundError,
    TableStore,
    TimerUpdate,
    request_key,
)

MESSAGE_TIMEOUT = 30.0
"""Seconds to wait for a Redis message: generous, for a busy machine."""


async def _subscribe(pubsub: PubSub, channel: str) -> None:
    """Subscribe, and wait for Redis to confirm it: what is published after that reaches us."""
    await pubsub.subscribe(channel)
    confirmation = await pubsub.get_message(timeout=MESSAGE_TIMEOUT)
    assert confirmation is not None and confirmation["type"] == "subscribe", confirmation


async def _next_message(pubsub: PubSub) -> bytes:
    """The data of the next message published on the channel."""
    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=MESSAGE_TIMEOUT)
    assert message is not None, "no message came"
    return cast(bytes, message["data"])


async def _new_table(store: TableStore, table_id: str = "t1", code: str = "ABCD") -> None:
    await store.create(table_id, code, {"table": b"meta", "game": b"g0"}, expire_seconds=3600)


async def test_create_then_load(redis: Redis) -> None:
    store = TableStore(redis)
    await _new_table(store)
    table = await store.load("t1")
    assert table.seq == 0
    assert table.fields["table"] == b"meta"
    assert await store.table_for_code("ABCD") == "t1"
    with pytest.raises(TableExistsError):
        await _new_table(store, "t1", "WXYZ")
    with pytest.raises(CodeTakenError):
        await _new_table(store, "t2", "ABCD")
    assert not await redis.exists(keys.table_state("t2"))
    with pytest.raises(TableNotFoundError):
        await store.load("nope")


async def test_commit_writes_fields_appends_and_publishes(redis: Redis) -> None:
    store = TableStore(redis)
    await _new_table(store)
    async with redis.pubsub() as pubsub:
        await _subscribe(pubsub, keys.table_channel("t1"))
        committed = await store.commit("t1", 0, Change({"game": b"g1"}, [b"event-1"]))
        message = await _next_message(pubsub)
    assert (committed.first_seq, committed.last_seq, committed.duplicate) == (1, 1, False)
    assert message == b"event-1"
    table = await store.load("t1")
    assert (table.seq, table.fields["game"], table.fields["table"]) == (1, b"g1", b"meta")
    assert (await store.events_after("t1", 0)).events == [b"event-1"]


async def test_stale_seq_changes_nothing(redis: Redis) -> None:
    store = TableStore(redis)
    await _new_table(store)
    await store.commit("t1", 0, Change({"game": b"g1"}, [b"e1"]))
    with pytest.raises(StaleSeqError) as caught:
        await store.commit("t1", 0, Change({"game": b"other"}, [b"e-other"]))
    assert caught.value.current_seq == 1
    table = await store.load("t1")
    assert (table.seq, table.fields["game"]) == (1, b"g1")
    assert (await store.events_after("t1", 0)).events == [b"e1"]


async def test_a_retried_request_is_applied_once(redis: Redis) -> None:
    store = TableStore(redis)
    await _new_table(store)
    key = request_key("player", "req-1", b"play 11-15")
    change = Change({"game": b"g1"}, [b"move", b"over"], request_key=key)
    first = await store.commit("t1", 0, change)
    again = await store.commit("t1", 0, change)
    assert (first.first_seq, first.last_seq, first.duplicate) == (1, 2, False)
    assert (again.first_seq, again.last_seq, again.duplicate) == (1, 2, True)
    assert await store.find_request("t1", key) == again
    assert (await store.load("t1")).seq == 2
    assert await store.events_between("t1", 1, 2) == [b"move", b"over"]
    # The same request id for another command is refused, even at the right seq.
    other = request_key("player", "req-1", b"resign")
    with pytest.raises(RequestReusedError):
        await store.commit("t1", 2, Change({}, [b"resigned"], request_key=other))
    with pytest.raises(RequestReusedError):
        await store.find_request("t1", other)
    # Another player may use the same request id.
    assert await store.find_request("t1", request_key("someone", "req-1", b"resign")) is None


async def test_only_the_latest_requests_are_remembered(redis: Redis) -> None:
    store = TableStore(redis, request_memory=3)
    await _new_table(store)
    for seq in range(5):
        key = request_key("player", f"req-{seq}", b"x")
        await store.commit("t1", seq, Change({}, [b"e"], request_key=key))
    assert await redis.llen(keys.table_requests("t1")) == 3
    assert await store.find_request("t1", request_key("player", "req-1", b"x")) is None
    found = await store.find_request("t1", request_key("player", "req-4", b"x"))
    assert found is not None and (found.first_seq, found.last_seq) == (5, 5)
    # A forgotten request cannot land twice: its expected seq is stale by now.
    with pytest.raises(StaleSeqError):
        await store.commit(
            "t1", 0, Change({}, [b"e"], request_key=request_key("player", "req-0", b"x"))
        )


async def test_the_log_may_be_leaner_than_what_is_published(redis: Redis) -> None:
    store = TableStore(redis)
    await _new_table(store)
    async with redis.pubsub() as pubsub:
        await _subscribe(pubsub, keys.table_channel("t1"))
        await store.commit(
            "t1", 0, Change({}, [b"lean-1", b"lean-2"], published=[b"full-1", b"full-2"])
        )
        received = [await _next_message(pubsub) for _ in range(2)]
    assert received == [b"full-1", b"full-2"]
    assert (await store.events_after("t1", 0)).events == [b"lean-1", b"lean-2"]


async def test_racing_commits_exactly_one_lands(redis: Redis) -> None:
    store = TableStore(redis)
    await _new_table(store)
    results = await asyncio.gather(
        *(
            store.commit("t1", 0, Change({"game": f"g{i}".encode()}, [f"e{i}".encode()]))
            for i in range(20)
        ),
        return_exceptions=True,
    )
    landed = [result for result in results if not isinstance(result, BaseException)]
    refused = [result for result in results if isinstance(result, StaleSeqError)]
    assert len(landed) == 1 and len(refused) == 19
    events = (await store.events_after("t1", 0)).events
    assert events is not None and len(events) == 1


async def test_events_after_any_seq_and_trimming(redis: Redis) -> None:
    store = TableStore(redis, table_log_events=5)
    await _new_table(store)
    for seq in range(8):
        await store.commit("t1", seq, Change({}, [f"e{seq + 1}".encode()]))
    assert (await store.events_after("t1", 8)).events == []
    assert (await store.events_after("t1", 5)).events == [b"e6", b"e7", b"e8"]
    assert (await store.events_after("t1", 3)).events == [b"e4", b"e5", b"e6", b"e7", b"e8"]
    trimmed = await store.events_after("t1", 2)
    assert trimmed.events is None and trimmed.seq == 8
    assert await redis.llen(keys.table_log("t1")) == 5


async def test_a_request_is_forgotten_once_its_events_leave_the_log(redis: Redis) -> None:
    store = TableStore(redis, table_log_events=4, request_memory=8)
    await _new_table(store)
    keys_by_seq = {}
    for seq in range(6):
        keys_by_seq[seq] = request_key("player", f"req-{seq}", b"x")
        await store.commit(
            "t1", seq, Change({}, [f"e{seq + 1}".encode()], request_key=keys_by_seq[seq])
        )
    # The log holds e3-e6: the commands that appended them are remembered, with their events.
    for seq in range(2, 6):
        found = await store.find_request("t1", keys_by_seq[seq])
        assert found is not None and (found.first_seq, found.last_seq) == (seq + 1, seq + 1)
        assert await store.events_between("t1", seq + 1, seq + 1) == [f"e{seq + 1}".encode()]
    for seq in range(2):
        assert await store.find_request("t1", keys_by_seq[seq]) is None
        # Forgotten, it cannot land twice: its expected seq is stale.
        with pytest.raises(StaleSeqError):
            await store.commit("t1", seq, Change({}, [b"again"], request_key=keys_by_seq[seq]))
    # Events no command asked for (the computer's moves, a timer's) push commands out too,
    # and a command goes with its first event, even while its second is still kept.
    straddling = request_key("player", "req-6", b"x")
    await store.commit("t1", 6, Change({}, [b"e7", b"e8"], request_key=straddling))
    await store.commit("t1", 8, Change({}, [b"e9", b"e10"]))
    found = await store.find_request("t1", straddling)
    assert found is not None and await store.events_between("t1", 7, 8) == [b"e7", b"e8"]
    await store.commit("t1", 10, Change({}, [b"e11"]))
    assert await store.find_request("t1", straddling) is None
    assert not await redis.exists(keys.table_requests("t1"))
    assert (await store.events_after("t1", 7)).events == [b"e8", b"e9", b"e10", b"e11"]


async def test_long_fields_are_kept_deflated_and_read_back_as_written(redis: Redis) -> None:
    store = TableStore(redis)
    moves = b"".join(b"\x1a\x0511-15\x1a\x0522-17" for _ in range(80))
    # Random bytes deflate cannot shorten, not starting with the deflated mark (1 in 256 would).
    noise = b"\x01" + os.urandom(399)
    await store.create("t1", "ABCD", {"table": b"meta", "game": moves}, expire_seconds=3600)
    await store.commit("t1", 0, Change({"game": moves + b"\x1a\x0524-20", "noise": noise}, [b"e"]))
    stored = cast(dict[bytes, bytes], await redis.hgetall(keys.table_state("t1")))
    assert stored[b"game"].startswith(DEFLATED) and len(stored[b"game"]) < len(moves) / 4
    # Short values, and long ones deflate would not shorten, are kept as they are.
    assert (stored[b"table"], stored[b"noise"]) == (b"meta", noise)
    table = await store.load("t1")
    assert table.fields["game"] == moves + b"\x1a\x0524-20"
    assert (table.fields["table"], table.fields["noise"]) == (b"meta", noise)
    with pytest.raises(ValueError, match="mark"):
        await store.commit("t1", 1, Change({"game": DEFLATED + b"raw"}, [b"e"]))
    assert (await store.load("t1")).seq == 1


def test_the_log_keeps_as_many_events_as_the_setting_says() -> None:
    assert TablesOptions().table_log_events == Settings().table_log_events == 16
    chosen = Settings.from_env({"GOTI_TABLE_LOG_EVENTS": "64"})
    assert TablesOptions.from_settings(chosen).table_log_events == 64


async def test_timers_are_claimed_with_a_lease(redis: Redis) -> None:
    store = TableStore(redis)
    await _new_table(store)
    await store.commit("t1", 0, Change({}, [b"e1"], timer=TimerUpdate.SET, timer_due_ms=1_000))
    assert (await store.claim_due(now_ms=999, lease_ms=500, limit=10)).table_ids == []
    claim = await store.claim_due(now_ms=1_000, lease_ms=500, limit=10)
    assert claim.table_ids == ["t1"] and claim.lease_until_ms == 1_500
    # Held by the lease: another replica finds nothing until it ends.
    assert (await store.claim_due(now_ms=1_400, lease_ms=500, limit=10)).table_ids == []
    again = await store.claim_due(now_ms=1_500, lease_ms=500, limit=10)
    assert again.table_ids == ["t1"]
    # A stale lease does not remove a timer that was set again since.
    await store.commit("t1", 1, Change({}, [b"e2"], timer=TimerUpdate.SET, timer_due_ms=5_000))
    await store.release("t1", again.lease_until_ms)
    assert await redis.zscore(keys.TIMERS, "t1") == 5_000
    claim = await store.claim_due(now_ms=5_000, lease_ms=100, limit=10)
    await store.release("t1", claim.lease_until_ms)
    assert await redis.zscore(keys.TIMERS, "t1") is None
    await store.commit("t1", 2, Change({}, [b"e3"], timer=TimerUpdate.SET, timer_due_ms=9_000))
    await store.commit("t1", 3, Change({}, [b"e4"], timer=TimerUpdate.CLEAR))
    assert await redis.zscore(keys.TIMERS, "t1") is None


async def test_lobby_listing_and_unlisting(redis: Redis) -> None:
    store = TableStore(redis)
    async with redis.pubsub() as pubsub:
        await _subscribe(pubsub, keys.LOBBY_CHANNEL)
        await store.create(
            "t1",
            "AAAA",
            {"game": b"g"},
            expire_seconds=3600,
            lobby_score=1,
            lobby_listing=b"L1",
            lobby_message=b"open-1",
        )
        await store.create(
            "t2",
            "BBBB",
            {"game": b"g"},
            expire_seconds=3600,
            lobby_score=2,
            lobby_listing=b"L2",
            lobby_message=b"open-2",
        )
        assert await store.lobby(10) == [b"L2", b"L1"]
        await store.commit(
            "t1", 0, Change({}, [b"joined"], lobby=LobbyUpdate.UNLIST, lobby_message=b"closed-1")
        )
        messages = [await _next_message(pubsub) for _ in range(3)]
    assert messages == [b"open-1", b"open-2", b"closed-1"]
    assert await store.lobby(10) == [b"L2"]


async def test_a_finished_table_expires_with_its_code(redis: Redis) -> None:
    store = TableStore(redis)
    await _new_table(store)
    await store.commit("t1", 0, Change({}, [b"over"], expire_seconds=600, code="ABCD"))
    for key in (keys.table_state("t1"), keys.table_log("t1"), keys.table_code("ABCD")):
        assert 0 < await redis.ttl(key) <= 600


async def test_a_table_still_at_its_seq_is_discarded_with_its_listing(redis: Redis) -> None:
    store = TableStore(redis)
    await store.create(
        "t1", "AAAA", {"game": b"g"}, expire_seconds=3600, lobby_score=1, lobby_listing=b"L1"
    )
    await store.commit("t1", 0, Change({}, [b"e1"]))
    assert not await store.discard("t1", 0, "AAAA")
    assert await store.discard("t1", 1, "AAAA", lobby_message=b"closed")
    assert await store.lobby(10) == []
    assert await store.table_for_code("AAAA") is None
    for key in (keys.table_state("t1"), keys.table_log("t1")):
        assert not await redis.exists(key)
    assert not await store.discard("t1", 1, "AAAA")
