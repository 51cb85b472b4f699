"""Several tables replicas on one Redis: a replica that shuts down sends its watchers to the
others, and one killed mid-game loses nothing — clients resume on another."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from redis.asyncio import Redis
from service_ports import service_ports

from goti import serving
from goti.api.v1 import tables_pb2
from goti.settings import Settings

from .conftest import StartReplica
from .table_calls import Guest, eventually, first_legal, new_guest, resuming
from .tables_subprocess import replica_environment, tables_process, until_answering

RETRY_SECONDS = 60.0
"""How long a player retries a move on the replicas before the test gives up."""
STOP_GRACE_SECONDS = 30.0
"""A stopping replica's grace period, which ends as soon as its drained streams are gone; cut
short by a slow drain, the stop would cancel the streams rather than end them as drained."""


class Game:
    """Ann (Black) against Bob (White), each retrying a command on the next replica with
    the same request id when one stops answering."""

    def __init__(self, ann: Guest, bob: Guest, table: tables_pb2.Table) -> None:
        self.players = {2: ann, 1: bob}  # COLOR_BLACK, COLOR_WHITE
        self.table_id = table.table_id
        self.seq = table.seq
        self.turn = table.game.turn
        self.plies = 0
        self.applied: list[tables_pb2.TableEvent] = []

    async def move(self, channels: list[grpc.aio.Channel]) -> None:
        player = self.players[self.turn.side]
        request_id = f"ply-{self.plies}"
        loop = asyncio.get_running_loop()
        deadline = loop.time() + RETRY_SECONDS
        attempt = 0
        while True:
            on = player.on(channels[attempt % len(channels)])
            try:
                response = await on.play(
                    self.table_id, first_legal(self.turn), self.seq, request_id=request_id
                )
                break
            except grpc.aio.AioRpcError as error:
                if error.code() not in (
                    grpc.StatusCode.UNAVAILABLE,
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                ):
                    raise
                assert loop.time() < deadline, f"no replica answered: {error.details()}"
                attempt += 1
                await asyncio.sleep(0.1)
        self.applied += response.events
        self.seq = response.events[-1].seq
        self.turn = response.events[0].move_played.next
        self.plies += 1


async def _start_game(channel: grpc.aio.Channel) -> Game:
    ann = await new_guest(channel, "Ann")
    bob = await new_guest(channel, "Bob")
    created = await ann.create(starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1)
    joined = await bob.join(created.table.code)
    return Game(ann, bob, joined.table)


async def _until(check: Callable[[], bool], timeout: float = 30.0) -> None:
    await eventually(check, timeout, every=0.05)


async def test_a_replica_shutting_down_sends_its_watchers_elsewhere(
    start_replica: StartReplica, redis: Redis
) -> None:
    leaving = await start_replica()
    staying = await start_replica()
    game = await _start_game(leaving.channel)
    async with resuming(game.table_id, [leaving.channel, staying.channel]) as watch:
        await game.move([leaving.channel])
        await _until(lambda: watch.last_seq >= game.seq)
        await leaving.server.stop(STOP_GRACE_SECONDS)
        await _until(lambda: bool(watch.breaks))
        for _ in range(4):
            await game.move([staying.channel])
        await _until(lambda: watch.last_seq >= game.seq)
    assert watch.breaks[0] == grpc.StatusCode.UNAVAILABLE
    watch.check_matches(game.applied)


@pytest.fixture
def replica_processes(
    tmp_path: Path, redis_url: str, referee_target: str, ai_target: str
) -> Iterator[list[tuple[subprocess.Popen[bytes], str]]]:
    """Two tables processes on the shared Redis, (process, target): one started as
    ``python -m goti.tables``, one as ``goti serve tables --port N``."""
    # The second port in the environment, which --port overrides.
    first, second, overridden = service_ports(3)
    launches = (
        (first, first, ("-m", "goti.tables")),
        (second, overridden, ("-m", "goti.cli", "serve", "tables", "--port", str(second))),
    )
    with contextlib.ExitStack() as stack:
        started = []
        for index, (port, environment_port, arguments) in enumerate(launches):
            environment = replica_environment(
                environment_port, redis_url, referee_target, ai_target
            )
            log = tmp_path / f"tables-{index}.log"
            process = stack.enter_context(tables_process(log, environment, arguments))
            started.append((process, f"127.0.0.1:{port}"))
        yield started


async def test_killing_a_replica_mid_game_loses_nothing(
    replica_processes: list[tuple[subprocess.Popen[bytes], str]],
    redis: Redis,
    settings: Settings,
) -> None:
    (doomed, doomed_target), (_, other_target) = replica_processes
    async with (
        serving.open_channel(doomed_target, settings) as doomed_channel,
        serving.open_channel(other_target, settings) as other_channel,
    ):
        await until_answering(doomed_channel, doomed)
        await until_answering(other_channel, replica_processes[1][0])
        game = await _start_game(doomed_channel)
        both = [doomed_channel, other_channel]
        async with resuming(game.table_id, both) as watch:
            for _ in range(6):
                await game.move([doomed_channel])
            await _until(lambda: watch.last_seq >= game.seq)
            # Kill it while a move may be on its way: the move is retried elsewhere.
            moving = asyncio.ensure_future(game.move(both))
            doomed.send_signal(signal.SIGKILL)
            await moving
            for _ in range(6):
                await game.move([other_channel, doomed_channel])
            await _until(lambda: watch.last_seq >= game.seq)
        watch.check_matches(game.applied)
        seen = await game.players[2].on(other_channel).get(game.table_id)
        assert seen.table.seq == game.seq == 1 + 13
        assert len(seen.table.game.moves) == 13


def test_goti_serve_tables_needs_redis(tmp_path: Path) -> None:
    environment = {name: value for name, value in os.environ.items() if "GOTI_" not in name}
    result = subprocess.run(
        [sys.executable, "-m", "goti.cli", "serve", "tables"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=environment,
    )
    assert result.returncode == 2
    assert "GOTI_REDIS_URL" in result.stderr and "Traceback" not in result.stderr


async def test_a_replica_stops_cleanly_on_sigterm(
    replica_processes: list[tuple[subprocess.Popen[bytes], str]],
    redis: Redis,
    settings: Settings,
) -> None:
    process, target = replica_processes[1]
    async with serving.open_channel(target, settings) as channel:
        await until_answering(channel, process)
    process.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(process.wait, 30) == 0
