"""Tables replicas as child processes, for the tests that stop or kill one: each on the
test's Redis, referee and AI, logging to a file, and killed at the end if it still runs."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import grpc

from .table_calls import new_guest

START_SECONDS = 60.0
"""How long a replica may take to answer its first call on a busy machine."""


def replica_environment(
    port: int, redis_url: str, referee_target: str, ai_target: str
) -> dict[str, str]:
    """A replica's settings: none of this shell's ``GOTI_*``, no rate limits for the test's
    guests and seeks, no web port, and JSON logs."""
    inherited = {name: value for name, value in os.environ.items() if "GOTI_" not in name}
    return {
        **inherited,
        "GOTI_HOST": "127.0.0.1",
        "GOTI_TABLES_PORT": str(port),
        "GOTI_REDIS_URL": redis_url,
        "GOTI_REFEREE_TARGET": referee_target,
        "GOTI_AI_TARGET": ai_target,
        "GOTI_GUESTS_PER_MINUTE": "0",
        "GOTI_SEEKS_PER_MINUTE": "0",
        "GOTI_WEB_PORT": "0",
        "GOTI_LOG_FORMAT": "json",
    }


@contextlib.contextmanager
def tables_process(
    log_path: Path,
    environment: dict[str, str],
    arguments: Sequence[str] = ("-m", "goti.tables"),
) -> Iterator[subprocess.Popen[bytes]]:
    """``python <arguments>`` (the tables service), its output in ``log_path``; SIGKILLed
    on the way out unless it has ended."""
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, *arguments],
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)


async def until_answering(channel: grpc.aio.Channel, process: subprocess.Popen[bytes]) -> None:
    """Return once the replica behind ``channel`` creates a guest; fail if it exits first or
    takes longer than :data:`START_SECONDS`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + START_SECONDS
    while True:
        try:
            await new_guest(channel)
            return
        except grpc.aio.AioRpcError:
            assert process.poll() is None, f"the replica exited with status {process.returncode}"
            assert loop.time() < deadline, "the replica never answered"
            await asyncio.sleep(0.2)
