"""A real referee server on a free port, and a stub on a real channel to it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
import pytest_asyncio
from in_process_backend import running_server

from goti import serving
from goti.api.v1 import referee_pb2_grpc
from goti.referee.servicer import bind
from goti.settings import Settings


@pytest.fixture
def settings() -> Settings:
    return Settings(host="127.0.0.1")


@pytest_asyncio.fixture
async def server(settings: Settings) -> AsyncIterator[serving.RunningServer]:
    async with running_server("referee", bind, settings) as running:
        yield running


@pytest_asyncio.fixture
async def channel(
    server: serving.RunningServer, settings: Settings
) -> AsyncIterator[grpc.aio.Channel]:
    async with serving.open_channel(server.target, settings) as opened:
        yield opened


@pytest.fixture
def referee(channel: grpc.aio.Channel) -> referee_pb2_grpc.RefereeServiceAsyncStub:
    return referee_pb2_grpc.RefereeServiceStub(channel)
