"""GOTI_REDIS_URL naming a primary under Sentinel: ``redis+sentinel://`` URLs read into the
sentinels, the service and the logins, and bad ones refused with what they must be."""

from __future__ import annotations

import pytest

from goti.redis_urls import RedisUrlError, SentinelUrl, check_redis_url, sentinel_url
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


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("redis+sentinel://sentinel-0:26379", "the service's name is missing"),
        ("redis+sentinel://sentinel-0:26379/", "the service's name is missing"),
        ("redis+sentinel://sentinel-0:26379/go ti", "has other characters"),
        ("redis+sentinel:///goti", "'' is no sentinel address"),
        ("redis+sentinel://a,,b/goti", "'' is no sentinel address"),
        ("redis+sentinel://-bad-/goti", "'-bad-' is no sentinel address"),
        ("redis+sentinel://fd00::7/goti", "an IPv6 address goes in brackets"),
        ("redis+sentinel://s:0/goti", "'s:0' has no port 1-65535"),
        ("redis+sentinel://s:http/goti", "'s:http' has no port 1-65535"),
        ("redis+sentinel://s/goti/zero", "after the service comes only a database number"),
        ("redis+sentinel://s/goti/0/1", "after the service comes only a database number"),
        ("redis+sentinel://s/goti?password=x", "the only option is sentinel_password"),
    ],
)
def test_a_bad_sentinel_url_says_what_it_must_be(url: str, problem: str) -> None:
    with pytest.raises(RedisUrlError) as raised:
        sentinel_url(url)
    message = str(raised.value)
    assert message.startswith("redis+sentinel://HOST[:PORT][,HOST[:PORT]...]/SERVICE[/DB]")
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
