"""A TCP proxy in front of Redis that loses one answer: a command runs, and its client never
reads what Redis said, as when a connection dies between the two.  redis-py then resends the
command on a new connection, so what the tests check is that each script, run twice, ends as
if it had run once."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit


class ReplyCutter:
    """A TCP proxy in front of Redis that passes every byte through, except that it cuts the
    first connection on which Redis answers ``reply`` to a command carrying ``marker``: the
    command ran, and its client never reads the answer."""

    def __init__(self, redis_url: str, *, marker: bytes, reply: bytes) -> None:
        self._upstream = urlsplit(redis_url)
        self._marker = marker
        self._reply = reply
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self.cut = asyncio.Event()

    async def start(self) -> str:
        """Start listening; returns the Redis URL that goes through the proxy."""
        self._server = await asyncio.start_server(self._pass_on, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        credentials, _, _ = self._upstream.netloc.rpartition("@")
        netloc = f"{credentials}@127.0.0.1:{port}" if credentials else f"127.0.0.1:{port}"
        return self._upstream._replace(netloc=netloc).geturl()

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        # Closed rather than cancelled: each connection's pipes then end as at a hang-up, and
        # asyncio has no cancelled connection handler to complain of.
        for writer in list(self._writers):
            writer.close()
        await asyncio.gather(*self._connections, return_exceptions=True)

    async def _pass_on(self, client: asyncio.StreamReader, to_client: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        self._writers.add(to_client)
        asked = asyncio.Event()
        try:
            assert self._upstream.hostname is not None and self._upstream.port is not None
            server, to_server = await asyncio.open_connection(
                self._upstream.hostname, self._upstream.port
            )
            self._writers.add(to_server)
            pipes = [
                asyncio.create_task(self._requests(client, to_server, asked)),
                asyncio.create_task(self._replies(server, to_client, asked)),
            ]
            try:
                await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for pipe in pipes:
                    pipe.cancel()
                await asyncio.gather(*pipes, return_exceptions=True)
                to_server.close()
                self._writers.discard(to_server)
        finally:
            to_client.close()
            self._writers.discard(to_client)
            self._connections.discard(task)

    async def _requests(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, asked: asyncio.Event
    ) -> None:
        tail = b""
        while chunk := await reader.read(64 * 1024):
            if not self.cut.is_set() and self._marker in tail + chunk:
                asked.set()  # before Redis can answer
            tail = (tail + chunk)[-len(self._marker) :]
            writer.write(chunk)
            await writer.drain()

    async def _replies(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, asked: asyncio.Event
    ) -> None:
        while chunk := await reader.read(64 * 1024):
            if asked.is_set():
                asked.clear()
                if chunk.startswith(self._reply) and not self.cut.is_set():
                    self.cut.set()
                    return
            writer.write(chunk)
            await writer.drain()
