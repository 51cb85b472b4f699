"""What ``GOTI_REDIS_URL`` may name: one Redis, or a primary that Redis Sentinel watches.

One Redis is named by a URL as redis-py reads it: ``redis://``, ``rediss://`` (TLS) or
``unix://``.  A primary under Sentinel is named by its sentinels and the name they know it by
(the service), in a URL of Goti's own, since redis-py reads none for Sentinel:

    redis+sentinel://[[USER]:PASSWORD@]HOST[:PORT][,HOST[:PORT]...]/SERVICE[/DB]
                     [?sentinel_password=PASSWORD]

for example ``redis+sentinel://sentinel-0:26379,sentinel-1:26379,sentinel-2:26379/goti``.  A
PORT left out is Sentinel's own, 26379.  USER and PASSWORD are the Redis servers' (the primary
and its replicas); sentinels that ask for a password of their own get ``sentinel_password``.
Characters special to URLs are percent-encoded in both, as in any URL.

A Redis Cluster is named by some of its nodes (the client finds the rest from any one of
them), again in a URL of Goti's own, since redis-py's reads one node only:

    redis+cluster://[[USER]:PASSWORD@]HOST[:PORT][,HOST[:PORT]...]

for example ``redis+cluster://redis-0:6379,redis-1:6379,redis-2:6379``.  A PORT left out is
Redis's own, 6379; a cluster has no databases but 0, so the URL has no path.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qs, unquote, urlsplit

SENTINEL_SCHEME: Final = "redis+sentinel"
DEFAULT_SENTINEL_PORT: Final = 26379
CLUSTER_SCHEME: Final = "redis+cluster"
DEFAULT_REDIS_PORT: Final = 6379
ONE_REDIS_SCHEMES: Final = ("redis", "rediss", "unix")

_SENTINEL_FORM: Final = (
    "redis+sentinel://HOST[:PORT][,HOST[:PORT]...]/SERVICE[/DB], e.g. "
    "redis+sentinel://sentinel-0:26379,sentinel-1:26379/goti"
)
_CLUSTER_FORM: Final = (
    "redis+cluster://HOST[:PORT][,HOST[:PORT]...], e.g. redis+cluster://redis-0:6379,redis-1:6379"
)
_LABEL: Final = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME: Final = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
_SERVICE: Final = re.compile(r"^[A-Za-z0-9._-]+$")


class RedisUrlError(ValueError):
    """A Redis URL Goti cannot use; the message says what it must be."""


@dataclass(frozen=True, slots=True)
class SentinelUrl:
    """The sentinels to ask, the service whose primary they name, and how to log in."""

    sentinels: tuple[tuple[str, int], ...]
    service: str
    db: int = 0
    username: str | None = None
    password: str | None = None
    sentinel_password: str | None = None


@dataclass(frozen=True, slots=True)
class ClusterUrl:
    """Nodes of a Redis Cluster to start from, and how to log in."""

    nodes: tuple[tuple[str, int], ...]
    username: str | None = None
    password: str | None = None


def check_redis_url(text: str) -> str:
    """``text`` without surrounding blanks, if Goti can use it (empty: no URL given).

    Raises :class:`RedisUrlError`, saying what the URL must be.
    """
    url = text.strip()
    if url:
        scheme = url.partition("://")[0].lower() if "://" in url else ""
        if scheme == SENTINEL_SCHEME:
            sentinel_url(url)
        elif scheme == CLUSTER_SCHEME:
            cluster_url(url)
        elif scheme not in ONE_REDIS_SCHEMES:
            raise RedisUrlError(
                "a URL starting redis://, rediss://, unix://, redis+sentinel:// or redis+cluster://"
            )
    return url


def sentinel_url(url: str) -> SentinelUrl | None:
    """The sentinels and service a ``redis+sentinel://`` URL names; None for any other URL.

    Raises :class:`RedisUrlError` for a ``redis+sentinel://`` URL Goti cannot use.
    """
    if not url.lower().startswith(f"{SENTINEL_SCHEME}://"):
        return None
    parts = urlsplit(url)
    username, password, hosts = _logins_and_hosts(parts.netloc)
    sentinels = tuple(
        _address(part, DEFAULT_SENTINEL_PORT, _sentinel_error, "sentinel")
        for part in hosts.split(",")
    )
    service, *rest = parts.path.strip("/").split("/")
    if not _SERVICE.match(service):
        raise _sentinel_error("the service's name is missing or has other characters")
    db = 0
    if rest:
        if len(rest) > 1 or not rest[0].isdigit():
            raise _sentinel_error("after the service comes only a database number")
        db = int(rest[0])
    return SentinelUrl(sentinels, service, db, username, password, _sentinel_password(parts.query))


def _sentinel_error(problem: str) -> RedisUrlError:
    return RedisUrlError(f"{_SENTINEL_FORM} ({problem})")


def cluster_url(url: str) -> ClusterUrl | None:
    """The nodes a ``redis+cluster://`` URL names; None for any other URL.

    Raises :class:`RedisUrlError` for a ``redis+cluster://`` URL Goti cannot use.
    """
    if not url.lower().startswith(f"{CLUSTER_SCHEME}://"):
        return None
    parts = urlsplit(url)
    if parts.path.strip("/") not in ("", "0"):
        raise _cluster_error("a cluster has database 0 alone: nothing comes after the nodes")
    if parts.query:
        raise _cluster_error("a cluster URL takes no options")
    username, password, hosts = _logins_and_hosts(parts.netloc)
    nodes = tuple(
        _address(part, DEFAULT_REDIS_PORT, _cluster_error, "node") for part in hosts.split(",")
    )
    return ClusterUrl(nodes, username, password)


def _cluster_error(problem: str) -> RedisUrlError:
    return RedisUrlError(f"{_CLUSTER_FORM} ({problem})")


def _logins_and_hosts(netloc: str) -> tuple[str | None, str | None, str]:
    """A URL's user and password (percent-decoded, None when left out), and its hosts."""
    userinfo, has_userinfo, hosts = netloc.rpartition("@")
    username = password = None
    if has_userinfo:
        user, _, secret = userinfo.partition(":")
        username, password = unquote(user) or None, unquote(secret) or None
    return username, password, hosts


def _address(
    text: str, default_port: int, error: Callable[[str], RedisUrlError], what: str
) -> tuple[str, int]:
    """``HOST``, ``HOST:PORT``, ``[IPv6]`` or ``[IPv6]:PORT``."""
    if text.startswith("["):
        host, _, after = text[1:].partition("]")
        if after and not after.startswith(":"):
            raise error(f"{text!r} is no {what} address")
        port_text = after[1:]
    elif text.count(":") <= 1:
        host, _, port_text = text.partition(":")
    else:
        raise error(f"{text!r}: an IPv6 address goes in brackets")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if not _HOSTNAME.match(host):
            raise error(f"{text!r} is no {what} address") from None
    if not port_text:
        return host, default_port
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise error(f"{text!r} has no port 1-65535")
    return host, int(port_text)


def _sentinel_password(query: str) -> str | None:
    options = parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(options) - {"sentinel_password"})
    if unknown:
        raise _sentinel_error(f"the only option is sentinel_password, not {unknown[0]}")
    values = options.get("sentinel_password", [])
    return (values[-1] or None) if values else None
