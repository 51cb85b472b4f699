"""A real Goti backend for the SDK's tests, in the test's process: a referee, the computer
player when it exists, and tables replicas on the shared Redis, each on a free port.
Replicas can be stopped and started again on the same port, as a deploy would."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pytest
import pytest_asyncio
from redis.asyncio import Redis

import goti_client
from goti import serving
from goti.ai.servicer import bind as bind_ai_service
from goti.ai.servicer import search_pool
from goti.redis_server import free_port
from goti.referee.servicer import bind as bind_referee
from goti.settings import Settings
from goti.tables.options import TablesOptions
from goti.tables.runtime import TablesRuntime, open_redis

CALL_TIMEOUT = 30.0
"""Seconds per unary call: generous, for a busy machine."""
WORKER_STOP_TRIES = 5
WORKER_STOP_SECONDS = 2.0
QUICK_RECONNECTS = goti_client.Backoff(initial=0.05, maximum=0.5)
"""Stream backoff for tests: reconnects within half a second, not thirty."""


@pytest.fixture
def settings() -> Settings:
    return Settings(host="127.0.0.1", grace_seconds=1)


@pytest.fixture
def options() -> TablesOptions:
    """Quick heartbeats, no rate limits (every test makes its guests from one address)."""
    return TablesOptions(
        heartbeat_seconds=1.0,
        joins_per_minute=0,
        tables_per_minute=0,
        guests_per_minute=0,
    )


@pytest_asyncio.fixture
async def referee_target(settings: Settings) -> AsyncIterator[str]:
    running = await serving.start_server("referee", bind_referee, settings, port=0)
    try:
        yield running.target
    finally:
        await running.stop(None)


@pytest_asyncio.fixture
async def ai_target() -> AsyncIterator[str]:
    """Where the tables service finds the computer player: by default a port nobody answers
    on (people's tables never ask it); tests of computer tables start the real one."""
    yield f"127.0.0.1:{free_port()}"


@contextlib.asynccontextmanager
async def computer_player(settings: Settings) -> AsyncIterator[str]:
    """The real AI service with one search process; yields its address."""
    pool = search_pool(1)
    try:
        running = await serving.start_server(
            "ai", partial(bind_ai_service, pool=pool, workers=1), settings, port=0
        )
        try:
            yield running.target
        finally:
            await running.stop(None)
    finally:
        pool.shutdown(cancel_futures=True)


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
            client = open_redis(redis_url)
            stack.push_async_callback(client.connection_pool.disconnect)
            stack.push_async_callback(client.aclose)
            referee_channel = serving.open_channel(referee_target, settings)
            ai_channel = serving.open_channel(ai_target, settings)
            stack.push_async_callback(referee_channel.close)
            stack.push_async_callback(ai_channel.close)
            runtime = TablesRuntime.assemble(client, referee_channel, ai_channel, options)
            runtime.start()
            stack.push_async_callback(runtime.close)
            server = await serving.start_server(
                "tables", runtime.bind, settings, port=port, drain=runtime.drain
            )
            stack.push_async_callback(server.stop, 0)
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
