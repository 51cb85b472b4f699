"""A real Echo server on a free port, and a channel to it with Goti's client options."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
import pytest_asyncio
from in_process_backend import running_server

from goti import serving
from goti.settings import Settings

from .echo import EchoClient, EchoService

# Small enough that a test can exceed it cheaply.
MAX_MESSAGE_BYTES = 64 * 1024


@pytest.fixture
def settings() -> Settings:
    return Settings(host="127.0.0.1", max_message_bytes=MAX_MESSAGE_BYTES, grace_seconds=5)


@pytest.fixture
def echo_service() -> EchoService:
    return EchoService()


@pytest_asyncio.fixture
async def server(
    settings: Settings, echo_service: EchoService
) -> AsyncIterator[serving.RunningServer]:
    async with running_server("echo", echo_service.bind, settings, metrics_port=0) as running:
        yield running


@pytest_asyncio.fixture
async def channel(
    server: serving.RunningServer, settings: Settings
) -> AsyncIterator[grpc.aio.Channel]:
    async with serving.open_channel(server.target, settings) as opened:
        yield opened


@pytest.fixture
def client(channel: grpc.aio.Channel) -> EchoClient:
    return EchoClient.on(channel)
