"""How each ``GOTI_*`` variable's text is read: a parser turns it into a value, or raises
:class:`ParseError` saying what the value must be (``Settings.from_env`` names the variable)."""

from __future__ import annotations

import ipaddress
import re
from typing import Final, Literal, cast

from goti.redis_urls import RedisUrlError, check_redis_url

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

LogFormat = Literal["auto", "json", "text"]
LOG_LEVELS: Final = ("debug", "info", "warning", "error", "critical")

MAX_REDIS_SHARDS: Final = 1024
"""The most shards a Redis Cluster deployment may split its tables into (each is one hash
slot, placed evenly over the slots: past this, shards would share the slot ranges they are
placed in)."""


class ParseError(ValueError):
    """Raised by a parser: the message says what the value must be."""


def port(text: str) -> int:
    value = integer(text, "a port number 1-65535")
    if not 1 <= value <= 65535:
        raise ParseError("a port number 1-65535")
    return value


def optional_port(text: str) -> int:
    value = integer(text, "a port number 1-65535, or 0 for off")
    if not 0 <= value <= 65535:
        raise ParseError("a port number 1-65535, or 0 for off")
    return value


def integer(text: str, must_be: str) -> int:
    try:
        return int(text.strip(), 10)
    except ValueError:
        raise ParseError(must_be) from None


def count(text: str) -> int:
    value = integer(text, "a whole number, 0 or more")
    if value < 0:
        raise ParseError("a whole number, 0 or more")
    return value


def shard_count(text: str) -> int:
    value = integer(text, f"a whole number, 1-{MAX_REDIS_SHARDS}")
    if not 1 <= value <= MAX_REDIS_SHARDS:
        raise ParseError(f"a whole number, 1-{MAX_REDIS_SHARDS}")
    return value


def positive_count(text: str) -> int:
    value = integer(text, "a whole number, 1 or more")
    if value < 1:
        raise ParseError("a whole number, 1 or more")
    return value


def seconds(text: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise ParseError("a number of seconds, 0 or more") from None
    if not 0 <= value < float("inf"):
        raise ParseError("a number of seconds, 0 or more")
    return value


def positive_seconds(text: str) -> float:
    value = seconds(text)
    if value <= 0:
        raise ParseError("a number of seconds above 0")
    return value


_HOST_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"^{_HOST_LABEL}(\.{_HOST_LABEL})*$")


def unbracketed(host: str) -> str:
    """A host as sockets take it: an IPv6 address without the brackets a URL puts round it."""
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def host(text: str) -> str:
    """A host name, an IPv4 address, or an IPv6 address with or without brackets."""
    bare = unbracketed(text.strip())
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        if _HOSTNAME.match(bare):
            return bare
        raise ParseError("a host name or an IP address (IPv6 may be in brackets)") from None
    return f"[{address}]" if address.version == 6 else str(address)


def target(text: str) -> str:
    """A gRPC target: ``host:port``, or a URI such as ``dns:///ai:50053``."""
    target = text.strip()
    if not target or any(character.isspace() for character in target):
        raise ParseError("a gRPC target such as host:port or dns:///host:port")
    return target


def redis_url(text: str) -> str:
    try:
        return check_redis_url(text)
    except RedisUrlError as error:
        raise ParseError(str(error)) from None


def path(text: str) -> str:
    path = text.strip()
    if not path or "\0" in path:
        raise ParseError("a folder path")
    return path


def base_url(text: str) -> str:
    """The start of a link: a scheme, then anything without spaces (``https://goti.example/join/``)."""
    url = text.strip()
    if not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://\S*$", url):
        raise ParseError("a URL such as https://goti.example/join/")
    return url


_ORIGIN = re.compile(r"^https?://[^/\s]+$")


def origins(text: str) -> tuple[str, ...]:
    """Web origins, comma-separated (``https://app.example,http://localhost:3000``), or ``*``."""
    origins = tuple(part.strip().rstrip("/") for part in text.split(",") if part.strip())
    if not all(origin == "*" or _ORIGIN.match(origin) for origin in origins):
        raise ParseError("web origins such as https://app.example, comma-separated, or *")
    return origins


def networks(text: str) -> tuple[IpNetwork, ...]:
    """IP addresses and networks, comma-separated (``10.0.0.0/8, 172.30.51.10``)."""
    networks = []
    for part in text.split(","):
        entry = part.strip()
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(unbracketed(entry), strict=False))
        except ValueError:
            raise ParseError(
                "IP addresses or networks such as 10.0.0.0/8, comma-separated"
            ) from None
    return tuple(networks)


def log_level(text: str) -> str:
    level = text.strip().lower()
    if level not in LOG_LEVELS:
        raise ParseError("one of " + ", ".join(LOG_LEVELS))
    return level


def log_format(text: str) -> LogFormat:
    value = text.strip().lower()
    if value not in ("auto", "json", "text"):
        raise ParseError("one of auto, json, text")
    return cast(LogFormat, value)
