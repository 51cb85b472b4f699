"""GOTI_REDIS_URL naming a primary under Sentinel or a Redis Cluster: ``redis+sentinel://``
URLs read into the sentinels, the service and the logins, ``redis+cluster://`` ones into the
nodes to start from and the logins, and bad ones refused with what they must be."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from goti.redis_urls import (
    ClusterUrl,
    RedisUrlError,
    SentinelUrl,
    check_redis_url,
    cluster_url,
    sentinel_url,
)
from goti.settings import Settings, SettingsError


def test_the_readme_example_names_three_sentinels_and_the_service() -> None:
    url = "redis+sentinel://sentinel-0:26379,sentinel-1:26379,sentinel-2:26379/goti"
    assert sentinel_url(url) == SentinelUrl(
        (("sentinel-0", 26379), ("sentinel-1", 26379), ("sentinel-2", 26379)), "goti"
    )
    assert Settings.from_env({"GOTI_REDIS_URL": f" {url} "}).redis_url == url


def test_ports_logins_databases_and_ipv6() -> None:
    named = sentinel_url(
        "REDIS+SENTINEL://goti:p%40ss%3Aword@10.0.0.5,[fd00::7]:5000,sentinel.example:26380"
        "/cache-1/3?sentinel_password=s%26cret"
    )
    assert named == SentinelUrl(
        (("10.0.0.5", 26379), ("fd00::7", 5000), ("sentinel.example", 26380)),
        "cache-1",
        db=3,
        username="goti",
        password="p@ss:word",
        sentinel_password="s&cret",
    )
    only_password = sentinel_url("redis+sentinel://:secret@s:1/goti/")
    assert only_password is not None
    assert (only_password.username, only_password.password) == (None, "secret")


@pytest.mark.parametrize(
    "url", ["redis://redis:6379/0", "rediss://:pw@redis.example:6380/1", "unix:///run/redis.sock"]
)
def test_urls_of_one_redis_are_left_to_redis_py(url: str) -> None:
    assert sentinel_url(url) is None
    assert check_redis_url(url) == url


SENTINEL_FORM = "redis+sentinel://HOST[:PORT][,HOST[:PORT]...]/SERVICE[/DB]"
CLUSTER_FORM = "redis+cluster://HOST[:PORT][,HOST[:PORT]...]"


@pytest.mark.parametrize(
    ("read", "form", "url", "problem"),
    [
        (
            sentinel_url,
            SENTINEL_FORM,
            "redis+sentinel://sentinel-0:26379",
            "the service's name is missing",
        ),
        (
            sentinel_url,
            SENTINEL_FORM,
            "redis+sentinel://sentinel-0:26379/",
            "the service's name is missing",
        ),
        (
            sentinel_url,
            SENTINEL_FORM,
            "redis+sentinel://sentinel-0:26379/go ti",
            "has other characters",
        ),
        (sentinel_url, SENTINEL_FORM, "redis+sentinel:///goti", "'' is no sentinel address"),
        (sentinel_url, SENTINEL_FORM, "redis+sentinel://a,,b/goti", "'' is no sentinel address"),
        (
            sentinel_url,
            SENTINEL_FORM,
            "redis+sentinel://-bad-/goti",
            "'-bad-' is no sentinel address",
        ),
        (
            sentinel_url,
            SENTINEL_FORM,
            "redis+sentinel://fd00::7/goti",
            "an IPv6 address goes in brackets",
        ),
        (sentinel_url, SENTINEL_FORM, "redis+sentinel://s:0/goti", "'s:0' has no port 1-65535"),
        (
            sentinel_url,
            SENTINEL_FORM,
            "redis+sentinel://s:http/goti",
            "'s:http' has no port 1-65535",
        ),
        (
            sentinel_url,
            SENTINEL_FORM,
            "redis+sentinel://s/goti/zero",
            "after the service comes only a database number",
        ),
        (
            sentinel_url,
            SENTINEL_FORM,
            "redis+sentinel://s/goti/0/1",
            "after the service comes only a database number",
        ),
        (
            sentinel_url,
            SENTINEL_FORM,
            "redis+sentinel://s/goti?password=x",
            "the only option is sentinel_password",
        ),
        (cluster_url, CLUSTER_FORM, "redis+cluster://redis-0:6379/1", "database 0 alone"),
        (cluster_url, CLUSTER_FORM, "redis+cluster://redis-0/goti", "database 0 alone"),
        (cluster_url, CLUSTER_FORM, "redis+cluster://redis-0?ssl=true", "takes no options"),
        (cluster_url, CLUSTER_FORM, "redis+cluster://", "'' is no node address"),
        (cluster_url, CLUSTER_FORM, "redis+cluster://a,,b", "'' is no node address"),
        (cluster_url, CLUSTER_FORM, "redis+cluster://fd00::7", "an IPv6 address goes in brackets"),
        (
            cluster_url,
            CLUSTER_FORM,
            "redis+cluster://redis-0:99999",
            "'redis-0:99999' has no port 1-65535",
        ),
    ],
)
def test_a_bad_url_says_what_it_must_be(
    read: Callable[[str], object], form: str, url: str, problem: str
) -> None:
    with pytest.raises(RedisUrlError) as raised:
        read(url)
    message = str(raised.value)
    assert message.startswith(form)
    assert problem in message
    with pytest.raises(SettingsError) as refused:
        Settings.from_env({"GOTI_REDIS_URL": url})
    assert refused.value.problems == [f"GOTI_REDIS_URL must be {message}, got {url!r}"]


def test_other_schemes_are_refused() -> None:
    with pytest.raises(
        RedisUrlError,
        match="redis://, rediss://, unix://, redis\\+sentinel:// or redis\\+cluster://",
    ):
        check_redis_url("sentinel://s:26379/goti")


def test_the_readme_cluster_example_names_three_nodes() -> None:
    url = "redis+cluster://redis-0:6379,redis-1:6379,redis-2:6379"
    assert cluster_url(url) == ClusterUrl((("redis-0", 6379), ("redis-1", 6379), ("redis-2", 6379)))
    assert sentinel_url(url) is None
    assert Settings.from_env({"GOTI_REDIS_URL": f" {url} "}).redis_url == url


def test_cluster_ports_logins_and_ipv6() -> None:
    named = cluster_url("REDIS+CLUSTER://goti:p%40ss@10.0.0.5,[fd00::7]:7001,redis.example:7000/")
    assert named == ClusterUrl(
        (("10.0.0.5", 6379), ("fd00::7", 7001), ("redis.example", 7000)),
        username="goti",
        password="p@ss",
    )
    assert cluster_url("redis://redis:6379/0") is None


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
