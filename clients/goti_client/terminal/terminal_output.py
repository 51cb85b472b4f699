"""Only the interface draws on the terminal.

gRPC's C core writes its log lines (``chttp2_transport.cc ... Got goaway`` when a server goes
away) straight to file descriptor 2, below Python, where nothing in Python can catch them; on
a terminal Textual draws on, such a line lands in the middle of the screen and leaves stray
characters behind.  So while the interface runs, descriptor 2 is a log file in the user's
state folder, and the interface (Textual, which draws on the original standard error, and
Python's own error output) gets a copy of the terminal's descriptor instead.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

STDERR_FD: Final = 2
LOG_LIMIT_BYTES: Final = 1 << 20
"""A log larger than this at start is begun afresh, so it never grows without bound."""


def _open_log(log_file: Path) -> int:
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        fresh = log_file.exists() and log_file.stat().st_size > LOG_LIMIT_BYTES
        flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if fresh else os.O_APPEND)
        descriptor = os.open(log_file, flags, 0o600)
    except OSError:
        # Better no log at all than those lines on the screen.
        return os.open(os.devnull, os.O_WRONLY)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    os.write(descriptor, f"goti play started {started}\n".encode())
    return descriptor


@contextlib.contextmanager
def stderr_to_log(log_file: Path) -> Iterator[None]:
    """While the block runs, descriptor 2 writes to ``log_file`` and ``sys.stderr`` and
    ``sys.__stderr__`` write to the terminal; all as before afterwards.

    Enter it before the Textual app is built: the app and its driver take
    ``sys.__stderr__`` as the terminal to draw on.
    """
    original = sys.__stderr__
    if original is None:  # no standard error at all: nothing to keep apart
        yield
        return
    original.flush()
    terminal_fd = os.dup(STDERR_FD)
    terminal = open(  # noqa: SIM115 - closed below, after the descriptors are put back
        terminal_fd,
        "w",
        encoding=original.encoding,
        errors=original.errors,
        buffering=1,
    )
    log_fd = _open_log(log_file)
    os.dup2(log_fd, STDERR_FD)
    os.close(log_fd)
    python_stderr = sys.stderr
    # sys.__stderr__ is typed Final, yet it is an ordinary attribute: Textual reads it as
    # the terminal to draw on, so it must name the copy while the interface runs.
    sys.__stderr__ = terminal  # type: ignore[misc]
    sys.stderr = terminal
    try:
        yield
    finally:
        terminal.flush()
        os.dup2(terminal_fd, STDERR_FD)
        sys.stderr = python_stderr
        sys.__stderr__ = original  # type: ignore[misc]
        terminal.close()
