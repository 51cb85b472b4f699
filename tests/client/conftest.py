"""A real Goti backend for the SDK's tests, in the test's process: a referee, the computer
player when it exists, and tables replicas on the shared Redis, each on a free port.
Replicas can be stopped and started again on the same port, as a deploy would."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
import pytest_asyncio
from in_process_backend import NO_RATE_LIMITS, SETTINGS, TablesWiring, referee_server
from redis.asyncio import Redis
from service_ports import service_ports

import goti_client
from goti import serving
from goti.settings import Settings
from goti.tables.options import TablesOptions
from goti.tables.runtime import TablesRuntime

CALL_TIMEOUT = 30.0
"""Seconds per unary call: generous, for a busy machine."""
WORKER_STOP_TRIES = 5
WORKER_STOP_SECONDS = 2.0
QUICK_RECONNECTS = goti_client.Backoff(initial=0.05, maximum=0.5)
"""Stream backoff for tests: reconnects within half a second, not thirty."""


@pytest.fixture
def settings() -> Settings:
    return SETTINGS


@pytest.fixture
def options() -> TablesOptions:
    """Quick heartbeats, no rate limits (every test makes its guests from one address)."""
    return replace(NO_RATE_LIMITS, heartbeat_seconds=1.0)


@pytest_asyncio.fixture
async def referee_target(settings: Settings) -> AsyncIterator[str]:
    async with referee_server(settings) as target:
        yield target


@pytest_asyncio.fixture
async def ai_target() -> AsyncIterator[str]:
    """Where the tables service finds the computer player: by default a port nobody answers
    on (people's tables never ask it); tests of computer tables start the real one."""
    [port] = service_ports(1)
    yield f"127.0.0.1:{port}"


@dataclass
class Replica:
    """One tables server of this process, with what it opened."""

    server: serving.RunningServer
    runtime: TablesRuntime = field(repr=False)
    stack: contextlib.AsyncExitStack = field(repr=False)

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.server.port}"

    async def stop(self) -> None:
        """Stop the server (its watch streams end) and close its connections."""
        # Under Python 3.11, asyncio.wait_for inside redis-py can swallow the cancellation of
        # the timer worker when it lands on a Redis command, and the worker's stop then waits
        # forever; stopping it again lands on its sleep instead.
        for _ in range(WORKER_STOP_TRIES):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.runtime.worker.stop(), WORKER_STOP_SECONDS)
                break
        await self.stack.aclose()


StartReplica = Callable[..., Awaitable[Replica]]


@pytest_asyncio.fixture
async def start_replica(
    settings: Settings,
    options: TablesOptions,
    referee_target: str,
    ai_target: str,
    redis_url: str,
    redis: Redis,
) -> AsyncIterator[StartReplica]:
    """Start tables replicas on the shared Redis (emptied first), on a free port or a given
    one; whatever still runs stops at the end of the test."""
    replicas: list[Replica] = []

    async def start(*, port: int = 0) -> Replica:
        stack = contextlib.AsyncExitStack()
        try:
            wiring = TablesWiring(settings, options, redis_url, referee_target, ai_target)
            server, runtime = await wiring.start(stack, port=port)
        except BaseException:
            await stack.aclose()
            raise
        replica = Replica(server, runtime, stack)
        replicas.append(replica)
        return replica

    try:
        yield start
    finally:
        for replica in reversed(replicas):
            await replica.stop()


@pytest_asyncio.fixture
async def target(start_replica: StartReplica) -> str:
    """The address of one tables replica."""
    return (await start_replica()).target


class Clients:
    """Opens SDK clients to a replica (new guests unless told otherwise); closes them all at
    the end of the test."""

    def __init__(self, target: str, stack: contextlib.AsyncExitStack) -> None:
        self.target = target
        self._stack = stack

    async def open(
        self,
        *,
        target: str | None = None,
        token: str | None = None,
        identity_file: Path | None = None,
        guest: bool = True,
        display_name: str = "",
        timeout: float = CALL_TIMEOUT,
    ) -> goti_client.GotiClient:
        client = await goti_client.connect(
            target or self.target,
            token,
            identity_file=identity_file,
            guest=guest,
            display_name=display_name,
            timeout=timeout,
            stream_backoff=QUICK_RECONNECTS,
        )
        self._stack.push_async_callback(client.close)
        return client


@pytest_asyncio.fixture
async def clients(target: str) -> AsyncIterator[Clients]:
    async with contextlib.AsyncExitStack() as stack:
        yield Clients(target, stack)


@dataclass
class SeatedGame:
    """A table between two guests, started: Alice plays Black (moving first), Bob White."""

    alice: goti_client.GotiClient
    bob: goti_client.GotiClient
    table: goti_client.Table
    """The table as Bob joined it (seq 1: the join)."""

    @property
    def table_id(self) -> str:
        return self.table.table_id


async def seat_game(clients: Clients) -> SeatedGame:
    alice = await clients.open(display_name="Alice")
    bob = await clients.open(display_name="Bob")
    created = await alice.create_table(starting_player=goti_client.StartingPlayer.PLAYER_1)
    joined = await bob.join_table(created.code)
    # Alice learns of the join as an app would: from the table.
    await alice.get_table(created.table_id)
    return SeatedGame(alice, bob, joined)


@pytest_asyncio.fixture
async def game(clients: Clients) -> SeatedGame:
    return await seat_game(clients)
