"""A TCP proxy in front of several servers, as a load balancer that passes connections
through: the client dials one address, and each connection it opens goes to the first server
that accepts it.  Bytes flow both ways untouched, so the servers' HTTP/2 frames (GOAWAY
among them) reach the client as if it had dialled the server itself."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Sequence

CHUNK_BYTES = 64 * 1024


class TcpProxy:
    """Listens on 127.0.0.1; passes each connection to the first of ``upstreams`` (ports on
    127.0.0.1) that accepts one, or closes it when none does."""

    def __init__(self, upstreams: Sequence[int]) -> None:
        self._upstreams = tuple(upstreams)
        self._server: asyncio.Server | None = None
        self.target = ""
        """What clients dial, once started."""
        self._piping: set[asyncio.Task[None]] = set()
        self.connections: Counter[int] = Counter()
        """Connections passed on, by upstream port."""

    async def start(self) -> str:
        """Start listening; returns the target clients dial."""
        self._server = await asyncio.start_server(self._pass_on, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.target = f"127.0.0.1:{port}"
        return self.target

    async def stop(self) -> None:
        """Stop listening and cut every connection passed on."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._piping):
            task.cancel()
        await asyncio.gather(*self._piping, return_exceptions=True)

    async def _pass_on(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._piping.add(task)
        try:
            upstream = await self._connect()
            if upstream is None:
                return
            server_reader, server_writer = upstream
            try:
                await asyncio.gather(
                    _pipe(client_reader, server_writer), _pipe(server_reader, client_writer)
                )
            finally:
                server_writer.close()
        finally:
            client_writer.close()
            self._piping.discard(task)

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        for port in self._upstreams:
            try:
                connection = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                continue
            self.connections[port] += 1
            return connection
        return None


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until the reader ends, then end the writer's side too."""
    try:
        while chunk := await reader.read(CHUNK_BYTES):
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        # The other side went away: close this one as well, as a dead peer would.
        writer.close()
    with contextlib.suppress(OSError):
        await writer.drain()
