"""Ports for a backend a test starts as processes, which take their ports from the environment.

A port the test picks by binding port 0 and then lets go can be handed out again: to the
embedded Redis that ``goti serve`` starts (it asks the OS for a free port, before the services
bind theirs), or to the test's own next pick.  The ports here come from outside the range the
OS hands out for port 0 (``ip_local_port_range``), and all at once, so none of them repeats and
nothing that asks the OS for a free port is given one of them.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

HOST = "127.0.0.1"
PORT_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST = 10_000
"""Below the OS's range, but above the ports services commonly listen on."""


def _os_range() -> tuple[int, int]:
    """The ports the OS picks from for port 0 (Linux's default where it does not say)."""
    try:
        low, high = (int(part) for part in PORT_RANGE.read_text().split())
    except (OSError, ValueError):
        return 32_768, 60_999
    return low, high


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def service_ports(count: int, *, with_partner_at: int = 0) -> list[int]:
    """``count`` different ports nothing listens on now, none of which the OS gives out for a
    bind to port 0.

    With ``with_partner_at``, each port's partner (the port that far above it, such as a Redis
    Cluster node's bus, 10,000 above its port) is free and outside that range too."""
    low, high = _os_range()

    def usable(port: int) -> bool:
        return port < 65_536 and not low <= port <= high

    candidates = [
        port
        for port in range(LOWEST, 65_536)
        if usable(port) and (not with_partner_at or usable(port + with_partner_at))
    ]
    random.shuffle(candidates)
    ports: list[int] = []
    taken: set[int] = set()
    for port in candidates:
        partner = port + with_partner_at if with_partner_at else port
        if port in taken or partner in taken:
            continue
        if _free(port) and (not with_partner_at or _free(partner)):
            taken.update((port, partner))
            ports.append(port)
            if len(ports) == count:
                return ports
    raise RuntimeError(f"fewer than {count} free ports outside the OS's range {low}-{high}")
