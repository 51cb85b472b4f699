"""A Goti server run as its own process, with its JSON log records collected as they come:
tests wait for a record (``serving on``...) and read what it says."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

PATIENCE = 30.0  # seconds; generous, for a busy machine

Record = dict[str, Any]


class LoggingProcess:
    """A server process whose standard error carries JSON log records, one a line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.records: list[Record] = []
        self.stray_lines: list[str] = []
        self._changed = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read_stderr())

    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        async for line in self.process.stderr:
            text = line.decode().rstrip("\n")
            try:
                self.records.append(json.loads(text))
            except json.JSONDecodeError:
                self.stray_lines.append(text)
            self._changed.set()

    async def record(self, message: str) -> Record:
        """The first log record whose message starts with ``message``, waiting for it."""
        deadline = time.monotonic() + PATIENCE
        while True:
            for record in self.records:
                if str(record.get("message", "")).startswith(message):
                    return record
            assert self.process.returncode is None, f"exited; logs: {self.records}"
            self._changed.clear()
            await asyncio.wait_for(self._changed.wait(), deadline - time.monotonic())

    async def exit_code(self) -> int:
        code = await asyncio.wait_for(self.process.wait(), PATIENCE)
        await asyncio.wait_for(self._reader, PATIENCE)
        return code
