"""``goti play`` as a real process in a pseudo-terminal: what it writes to the terminal is
read back, so a test sees exactly what a player's screen would receive."""

from __future__ import annotations

import asyncio
import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .pilot_moves import WAIT_SECONDS

READ_BYTES = 65536


class PseudoTerminal:
    """A process whose stdin, stdout and stderr are one pseudo-terminal of a given size."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        environment: Mapping[str, str],
        size: tuple[int, int] = (100, 30),
    ) -> None:
        controller, terminal = pty.openpty()
        columns, rows = size
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self._controller = controller
        self.process = subprocess.Popen(
            command,
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            env=dict(environment),
            start_new_session=True,
            close_fds=True,
        )
        os.close(terminal)
        self._received = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="pseudo-terminal", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._controller, READ_BYTES)
            except OSError:  # the process has gone and closed its side
                return
            if not chunk:
                return
            with self._lock:
                self._received += chunk

    @property
    def output(self) -> str:
        """Everything the process has written to the terminal so far."""
        with self._lock:
            return self._received.decode("utf-8", errors="replace")

    def type(self, keys: str) -> None:
        """Type ``keys`` at the terminal."""
        os.write(self._controller, keys.encode())

    async def wait_for(
        self, ready: Callable[[], object], what: str, timeout: float = WAIT_SECONDS
    ) -> None:
        """Wait until ``ready()`` is true; fail with the terminal's output after ``timeout``,
        or as soon as the process has ended without it."""
        deadline = time.monotonic() + timeout
        while not ready():
            ended = self.process.poll() is not None
            if ended:
                # Its last output may still be on the way (or ``ready`` may be that it ended,
                # and it did so after being asked): read all it wrote, then ask once more.
                await asyncio.to_thread(self._reader.join, WAIT_SECONDS)
                if ready():
                    return
            if ended or time.monotonic() > deadline:
                why = "the process ended" if ended else "timed out"
                raise AssertionError(
                    f"{why} waiting for {what}; the terminal received:\n{self.output[-4000:]}"
                )
            await asyncio.sleep(0.05)

    async def close(self) -> None:
        """End the process (if it still runs) and the terminal."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                await asyncio.to_thread(self.process.wait, WAIT_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                await asyncio.to_thread(self.process.wait)
        os.close(self._controller)
        await asyncio.to_thread(self._reader.join, WAIT_SECONDS)


def goti_play_command(server: str, *arguments: str) -> list[str]:
    """The command line of ``goti play`` against ``server``, run by this Python."""
    return [sys.executable, "-m", "goti.cli", "play", "--server", server, *arguments]


def player_environment(home: Path) -> dict[str, str]:
    """An environment whose user folders (config, data, state) are under ``home``."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("XDG_", "GOTI_", "GRPC_", "LC_"))
    }
    environment.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_STATE_HOME=str(home / "state"),
        TERM="xterm-256color",
        LANG="C.UTF-8",
    )
    return environment
