"""Where the tables' keys live: under one Redis's names as before Redis Cluster came, or on a
cluster in shards of one hash slot each, a table's keys, its code and its indexes together,
the shards spread evenly over the slots."""

from __future__ import annotations

import pytest
from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

from goti.setting_values import MAX_REDIS_SHARDS
from goti.tables import keys, seating
from goti.tables.keys import KeySpace, spread_tags


def _slot(key: str) -> int:
    return key_slot(key.encode())


def test_one_redis_keeps_the_names_it_always_had() -> None:
    one = KeySpace()
    table = one.table("t1")
    assert (table.state, table.log, table.requests, table.channel) == (
        keys.table_state("t1"),
        keys.table_log("t1"),
        keys.table_requests("t1"),
        keys.table_channel("t1"),
    )
    assert one.shards == (keys.ONE_REDIS_SHARD,)
    assert (table.shard.timers, table.shard.lobby) == (keys.TIMERS, keys.LOBBY)
    assert one.code("ABCDEF") == keys.table_code("ABCDEF")
    assert one.code_fits("t1", "ABCDEF")
    pool = keys.seek_pool(1, 0, True)
    assert one.pool(pool) == pool
    assert one.publish_command == "PUBLISH"
    with pytest.raises(ValueError, match="one Redis has one shard"):
        KeySpace(4)


@pytest.mark.parametrize("shards", [1, 3, 16, 64, MAX_REDIS_SHARDS])
def test_a_clusters_shards_lie_evenly_over_the_slots(shards: int) -> None:
    tags = spread_tags(shards)
    assert len(set(tags)) == shards
    width = REDIS_CLUSTER_HASH_SLOTS / shards
    for index, tag in enumerate(tags):
        assert int(key_slot(tag.encode()) // width) == index


def test_on_a_cluster_a_tables_keys_code_and_indexes_share_one_slot() -> None:
    cluster = KeySpace(16, cluster=True)
    assert cluster.publish_command == "SPUBLISH"
    seen_shards = set()
    for number in range(200):
        table_id = seating.new_table_id() if number else "t1"
        table = cluster.table(table_id)
        code = cluster.code_for(table_id, seating.new_code)
        assert cluster.code_fits(table_id, code)
        named = [
            table.state,
            table.log,
            table.requests,
            table.channel,
            table.void,
            table.shard.timers,
            table.shard.lobby,
            table.shard.lobby_listings,
            table.shard.lobby_channel,
            cluster.code(code),
        ]
        assert len({_slot(key) for key in named}) == 1, named
        assert all(key.startswith("goti:{") for key in named)
        seen_shards.add(table.shard.index)
    assert seen_shards == set(range(16)), "table ids spread over every shard"
    # The same table in the same shard on every replica.
    assert KeySpace(16, cluster=True).table("t1") == cluster.table("t1")


def test_on_a_cluster_a_pool_and_its_seekers_and_lease_share_a_slot() -> None:
    cluster = KeySpace(16, cluster=True)
    pool = cluster.pool(keys.seek_pool(2, 1, False))
    assert pool == "goti:{pool:2:1:casual}"
    assert cluster.pool(pool) == pool
    assert {
        _slot(pool),
        _slot(keys.seek_pool_seekers(pool)),
        _slot(keys.seek_pool_lease(pool)),
    } == {_slot(pool)}
