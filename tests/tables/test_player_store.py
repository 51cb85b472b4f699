"""Players in Redis: rate-limit windows, streaks counted once, expiries renewed as tokens are
read."""

from __future__ import annotations

from redis.asyncio import Redis

from goti.tables import keys
from goti.tables.player_store import PlayerStore


async def test_rate_limits_count_per_window(redis: Redis) -> None:
    store = PlayerStore(redis)
    key = keys.rate_limit("p1", "join")
    assert [await store.hit_rate_limit(key, 2, 60_000) for _ in range(2)] == [0, 0]
    wait = await store.hit_rate_limit(key, 2, 60_000)
    assert 0 < wait <= 60_000


async def test_a_result_counts_once_in_the_streaks(redis: Redis) -> None:
    store = PlayerStore(redis)
    assert await store.create_player("p1", {"name": b"Ann", "created": b"1"})
    assert not await store.create_player("p1", {"name": b"Bob", "created": b"2"})
    for table_id, won in (("a", True), ("a", True), ("b", True), ("c", False), ("d", True)):
        await store.record_result("p1", table_id, won=won, remember_seconds=60)
    player = await store.load_player("p1")
    assert player is not None
    assert (player.fields["win_streak"], player.fields["best_streak"]) == (b"1", b"2")
    assert await store.update_player("p1", {"name": b"Cy"})
    assert not await store.update_player("nobody", {"name": b"Cy"})
    renamed = await store.load_player("p1")
    assert renamed is not None and renamed.fields["name"] == b"Cy"


async def test_a_players_expiry_is_set_at_creation_and_renewed_as_its_token_is_read(
    redis: Redis,
) -> None:
    store = PlayerStore(redis)
    key = keys.player("p1")
    assert await store.create_player("p1", {"token": b"digest"}, keep_seconds=100)
    assert 0 < await redis.ttl(key) <= 100
    assert await store.player_token("p1", keep_seconds=5_000) == b"digest"
    assert 100 < await redis.ttl(key) <= 5_000
    # Guests kept forever now: reading the token lifts the expiry.
    assert await store.player_token("p1", keep_seconds=0) == b"digest"
    assert await redis.ttl(key) == -1
    # Renewing a player that is gone makes none.
    assert await store.player_token("nobody", keep_seconds=100) is None
    assert not await redis.exists(keys.player("nobody"))
