"""``goti serve``: the whole backend from one command, as a newcomer runs it.

Started as a real process with an embedded Redis in a temporary data folder: it must come up
healthy, serve a game, stop cleanly on Ctrl-C with its children (Redis last, once the services
have drained into it), and keep the unfinished game across a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import psutil
import pytest
from service_ports import service_ports

from goti.api.v1 import players_pb2, players_pb2_grpc, tables_pb2, tables_pb2_grpc

START_SECONDS = 90.0
STOP_SECONDS = 60.0


class Backend:
    """One ``goti serve`` process."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        # Not ports the embedded Redis, which asks the OS for one, could be given.
        tables, referee, ai, web = service_ports(4)
        self.tables_target = f"localhost:{tables}"
        self.environment = {
            **{k: v for k, v in os.environ.items() if not k.startswith("GOTI_")},
            "GOTI_TABLES_PORT": str(tables),
            "GOTI_REFEREE_PORT": str(referee),
            "GOTI_AI_PORT": str(ai),
            "GOTI_WEB_PORT": str(web),
            "GOTI_DATA_DIR": str(data_dir),
            "GOTI_AI_WORKERS": "1",
            "GOTI_LOG_LEVEL": "warning",
        }
        self.process: subprocess.Popen[str] | None = None
        self.output: list[str] = []

    def start(self) -> None:
        self.output = []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "goti.cli", "serve"],
            env=self.environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            # As at a terminal: a process group of its own, which the terminal signals whole.
            start_new_session=True,
        )
        deadline = time.monotonic() + START_SECONDS
        assert self.process.stdout is not None
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.output.append(line)
            if line.startswith("Goti is running"):
                return
        self.stop()
        pytest.fail("goti serve did not start:\n" + "".join(self.output))

    def stop(self) -> int:
        assert self.process is not None
        children = psutil.Process(self.process.pid).children(recursive=True)
        self.process.send_signal(signal.SIGINT)
        status = self._wait()
        _, alive = psutil.wait_procs(children, timeout=STOP_SECONDS)
        assert not alive, f"still running after goti serve stopped: {alive}"
        return status

    def stop_from_the_terminal(self, signum: signal.Signals) -> tuple[int, list[str]]:
        """Signal the whole process group, as a terminal does (Ctrl-C, or closing it); the
        exit status, and what was still running when Redis ended."""
        assert self.process is not None
        children = psutil.Process(self.process.pid).children(recursive=True)
        [redis] = [child for child in children if child.name() == "redis-server"]
        others = [child for child in children if child is not redis]
        os.killpg(self.process.pid, signum)
        outliving = _running_when_it_ends(redis, others)
        status = self._wait()
        _, alive = psutil.wait_procs(others, timeout=STOP_SECONDS)
        assert not alive, f"still running after goti serve stopped: {alive}"
        return status, outliving

    def _wait(self) -> int:
        assert self.process is not None and self.process.stdout is not None
        status = self.process.wait(STOP_SECONDS)
        self.output.extend(self.process.stdout.readlines())
        self.process.stdout.close()
        return status

    def complaints(self) -> list[dict[str, object]]:
        """The warnings and errors the services logged."""
        records = []
        for line in self.output:
            with contextlib.suppress(json.JSONDecodeError):
                record = json.loads(line)
                if isinstance(record, dict) and record.get("level") != "info":
                    records.append(record)
        return records


def _ended(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _running_when_it_ends(process: psutil.Process, others: list[psutil.Process]) -> list[str]:
    """Wait for ``process`` to end; the commands of the ``others`` still running then (each
    looked at after it, so none that ended first is counted)."""
    commands = {other.pid: " ".join(other.cmdline()) for other in others}
    deadline = time.monotonic() + STOP_SECONDS
    while not _ended(process):
        assert time.monotonic() < deadline, f"{process.name()} is still running"
        time.sleep(0.01)
    return [commands[other.pid] for other in others if not _ended(other)]


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[Backend]:
    running = Backend(tmp_path / "data")
    yield running
    if running.process is not None and running.process.poll() is None:
        running.process.kill()


async def _new_game_with_one_move(target: str) -> tuple[str, str]:
    async with grpc.aio.insecure_channel(target) as channel:
        players = players_pb2_grpc.PlayersServiceStub(channel)
        guest = await players.CreateGuest(players_pb2.CreateGuestRequest(), timeout=30)
        metadata = (("authorization", f"Bearer {guest.player_token}"),)
        tables = tables_pb2_grpc.TablesServiceStub(channel)
        created = await tables.CreateTable(
            tables_pb2.CreateTableRequest(
                request_id=uuid.uuid4().hex,
                opponent=tables_pb2.OPPONENT_PASS_AND_PLAY,
            ),
            metadata=metadata,
            timeout=30,
        )
        table = created.table
        await tables.Play(
            tables_pb2.PlayRequest(
                table_id=table.table_id,
                request_id=uuid.uuid4().hex,
                expected_seq=table.seq,
                notation=table.game.turn.legal_moves[0].notation,
            ),
            metadata=metadata,
            timeout=30,
        )
        return table.table_id, guest.player_token


async def _moves_of(target: str, table_id: str) -> list[str]:
    async with grpc.aio.insecure_channel(target) as channel:
        tables = tables_pb2_grpc.TablesServiceStub(channel)
        reply = await tables.GetTable(tables_pb2.GetTableRequest(table_id=table_id), timeout=30)
        return list(reply.table.game.moves)


async def _play_on(target: str, table_id: str, token: str) -> list[str]:
    """The player's next move after a restart, with the token kept from before it, seen by a
    watch resumed from the seq the player had; the game's moves after it."""
    metadata = (("authorization", f"Bearer {token}"),)
    async with grpc.aio.insecure_channel(target) as channel:
        tables = tables_pb2_grpc.TablesServiceStub(channel)
        table = (
            await tables.GetTable(
                tables_pb2.GetTableRequest(table_id=table_id), metadata=metadata, timeout=30
            )
        ).table
        assert table.status == tables_pb2.TABLE_STATUS_PLAYING
        watch = tables.WatchTable(
            tables_pb2.WatchTableRequest(table_id=table_id, after_seq=table.seq), timeout=60
        )
        played = await tables.Play(
            tables_pb2.PlayRequest(
                table_id=table_id,
                request_id=uuid.uuid4().hex,
                expected_seq=table.seq,
                notation=table.game.turn.legal_moves[0].notation,
            ),
            metadata=metadata,
            timeout=30,
        )
        seen = None
        async for message in watch:
            if message.HasField("event"):
                seen = message.event
                break
        watch.cancel()
        assert seen == played.events[0]
        return await _moves_of(target, table_id)


def test_goti_serve_runs_everything_and_keeps_games_across_a_restart(backend: Backend) -> None:
    backend.start()
    assert any("Clients connect to" in line for line in backend.output)
    table_id, token = asyncio.run(_new_game_with_one_move(backend.tables_target))
    before = asyncio.run(_moves_of(backend.tables_target, table_id))
    assert len(before) == 1
    assert backend.stop() == 0
    assert any("Goti stopped" in line for line in backend.output)

    backend.start()
    assert asyncio.run(_moves_of(backend.tables_target, table_id)) == before
    after = asyncio.run(_play_on(backend.tables_target, table_id, token))
    assert after[:1] == before and len(after) == 2
    assert backend.stop() == 0


@pytest.mark.parametrize(
    "signum", [signal.SIGINT, signal.SIGHUP], ids=["ctrl-c", "terminal-closed"]
)
def test_the_terminal_stopping_goti_serve_stops_redis_after_the_services(
    backend: Backend, signum: signal.Signals
) -> None:
    backend.start()
    table_id, token = asyncio.run(_new_game_with_one_move(backend.tables_target))

    status, outliving_redis = backend.stop_from_the_terminal(signum)

    assert status == 0, "".join(backend.output)
    assert any("Goti stopped" in line for line in backend.output)
    assert outliving_redis == []
    # The services drained into a Redis still there: no lost pub/sub, no timer errors.
    assert backend.complaints() == []
    redis_log = (backend.data_dir / "redis" / "redis-server.log").read_text()
    assert "User requested shutdown" in redis_log and "Received SIG" not in redis_log
    backend.start()
    assert len(asyncio.run(_moves_of(backend.tables_target, table_id))) == 1
    assert len(asyncio.run(_play_on(backend.tables_target, table_id, token))) == 2
    assert backend.stop() == 0, "".join(backend.output)


def test_goti_serve_refuses_a_port_without_a_service() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "goti.cli", "serve", "--port", "5000"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "goti: error: --port and --workers go with one service (goti serve tables|referee|ai); "
        "the whole backend takes its ports from GOTI_*_PORT"
    ]
