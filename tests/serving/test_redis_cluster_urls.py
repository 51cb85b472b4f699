"""GOTI_REDIS_URL naming a Redis Cluster: ``redis+cluster://`` URLs read into the nodes to
start from and the logins, and bad ones refused with what they must be."""

from __future__ import annotations

import pytest

from goti.redis_urls import ClusterUrl, RedisUrlError, cluster_url, sentinel_url
from goti.settings import Settings, SettingsError


def test_the_readme_example_names_three_nodes() -> None:
    url = "redis+cluster://redis-0:6379,redis-1:6379,redis-2:6379"
    assert cluster_url(url) == ClusterUrl((("redis-0", 6379), ("redis-1", 6379), ("redis-2", 6379)))
    assert sentinel_url(url) is None
    assert Settings.from_env({"GOTI_REDIS_URL": f" {url} "}).redis_url == url


def test_ports_logins_and_ipv6() -> None:
    named = cluster_url("REDIS+CLUSTER://goti:p%40ss@10.0.0.5,[fd00::7]:7001,redis.example:7000/")
    assert named == ClusterUrl(
        (("10.0.0.5", 6379), ("fd00::7", 7001), ("redis.example", 7000)),
        username="goti",
        password="p@ss",
    )
    assert cluster_url("redis://redis:6379/0") is None


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("redis+cluster://redis-0:6379/1", "database 0 alone"),
        ("redis+cluster://redis-0/goti", "database 0 alone"),
        ("redis+cluster://redis-0?ssl=true", "takes no options"),
        ("redis+cluster://", "'' is no node address"),
        ("redis+cluster://a,,b", "'' is no node address"),
        ("redis+cluster://fd00::7", "an IPv6 address goes in brackets"),
        ("redis+cluster://redis-0:99999", "'redis-0:99999' has no port 1-65535"),
    ],
)
def test_a_bad_cluster_url_says_what_it_must_be(url: str, problem: str) -> None:
    with pytest.raises(RedisUrlError) as raised:
        cluster_url(url)
    message = str(raised.value)
    assert message.startswith("redis+cluster://HOST[:PORT][,HOST[:PORT]...]")
    assert problem in message
    with pytest.raises(SettingsError) as refused:
        Settings.from_env({"GOTI_REDIS_URL": url})
    assert refused.value.problems == [f"GOTI_REDIS_URL must be {message}, got {url!r}"]


@pytest.mark.parametrize(("text", "shards"), [("1", 1), ("16", 16), (" 1024 ", 1024)])
def test_the_shards_are_a_number_from_1_to_1024(text: str, shards: int) -> None:
    assert Settings.from_env({"GOTI_REDIS_SHARDS": text}).redis_shards == shards


@pytest.mark.parametrize("text", ["0", "1025", "-3", "many"])
def test_other_shard_counts_are_refused(text: str) -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.from_env({"GOTI_REDIS_SHARDS": text})
    assert refused.value.problems == [
        f"GOTI_REDIS_SHARDS must be a whole number, 1-1024, got {text!r}"
    ]
