"""A rolling restart, as the apps live it: two tables replicas behind one address, one of
them stopped with SIGTERM while games are being played on it.  The apps (SDK clients with
their default settings) see no error, every move they were told was played is in the game
exactly once, and the games go on afterwards with both players seeing every move through
their watches."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio
from redis.asyncio import Redis
from service_ports import service_ports
from tcp_proxy import TcpProxy

import goti_client
from goti.healthcheck import wait_until_serving
from goti.rules import Color, Move
from goti_client import (
    GameOver,
    MovePlayed,
    NotYourTurnError,
    Role,
    Snapshot,
    StaleSeqError,
    StartingPlayer,
)

GAMES = 12
PLIES_BEFORE = 4
"""Plies every game has played when the replica is stopped."""
PLIES_AFTER = 6
"""Plies every game plays once the stopped replica has exited."""
THINKING_SECONDS = 0.05
"""How long a player looks at the board before moving: games last through the restart."""
BROWSERS = 8
"""Apps on the lobby screen besides the players, so that calls keep coming all through the
stop, as they do to a replica serving thousands of apps."""
BROWSING_SECONDS = 0.02
"""How often a browsing app lists the lobby."""
PATIENCE = 60.0
"""Seconds for any stage of the test; generous, for a busy machine."""


@dataclass
class ReplicaProcess:
    """A tables service run as ``goti serve tables``, as a deployment runs it."""

    port: int
    log_path: Path
    environment: dict[str, str]
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "goti.cli", "serve", "tables", "--port", str(self.port)],
                env=self.environment,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@pytest.fixture
def replica_processes(
    tmp_path: Path, redis_url: str, redis: Redis, referee_target: str, ai_target: str
) -> Iterator[list[ReplicaProcess]]:
    """Two tables processes on the shared Redis (emptied first) with the default grace
    period, not started."""
    inherited = {name: value for name, value in os.environ.items() if "GOTI_" not in name}
    environment = {
        **inherited,
        "GOTI_HOST": "127.0.0.1",
        "GOTI_REDIS_URL": redis_url,
        "GOTI_REFEREE_TARGET": referee_target,
        "GOTI_AI_TARGET": ai_target,
        "GOTI_GUESTS_PER_MINUTE": "0",
        "GOTI_JOINS_PER_MINUTE": "0",
        "GOTI_TABLES_PER_MINUTE": "0",
        "GOTI_WEB_PORT": "0",
        "GOTI_LOG_FORMAT": "json",
    }
    replicas = [
        ReplicaProcess(port, tmp_path / f"tables-{index}.log", environment)
        for index, port in enumerate(service_ports(2))
    ]
    try:
        yield replicas
    finally:
        for replica in replicas:
            if replica.process is not None and replica.process.poll() is None:
                replica.process.kill()
                replica.process.wait(timeout=30)


@pytest_asyncio.fixture
async def proxy(replica_processes: list[ReplicaProcess]) -> AsyncIterator[TcpProxy]:
    """One address in front of both replicas: every connection goes to the first replica
    while it accepts connections, so every app lives through its stop."""
    for replica in replica_processes:
        replica.start()
    for replica in replica_processes:
        await wait_until_serving(replica.target, timeout=PATIENCE)
    running = TcpProxy([replica.port for replica in replica_processes])
    await running.start()
    try:
        yield running
    finally:
        await running.stop()


@dataclass
class Player:
    """One app: a client seated at a table, its watch, and what it was told."""

    client: goti_client.GotiClient
    color: Color
    watch: goti_client.TableWatch
    seen: list[tuple[int, str]] = field(default_factory=list)
    """The moves its watch showed: (seq, notation)."""
    played: list[tuple[int, str]] = field(default_factory=list)
    """The moves it played, as their answers said: (seq, notation)."""
    errors: list[goti_client.GotiError] = field(default_factory=list)
    """What the SDK raised to the app."""


@dataclass
class PlayedGame:
    """A game between two apps, played until told to stop."""

    table_id: str
    players: tuple[Player, Player]
    stop_at_ply: int | None = None
    """Once set, the players stop when their watch has shown this many plies."""
    watching: set[Color] = field(default_factory=set)
    """The players whose watch has shown its first snapshot."""
    both_watching: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once both have: no one moves before, so that each watch shows every move as it is
    played (a move made before a watch opens comes inside its snapshot instead)."""

    @property
    def plies(self) -> int:
        """Plies both players have seen."""
        return min(len(player.seen) for player in self.players)


async def _play(game: PlayedGame, me: Player) -> None:
    """What an app does: follow the table and, on its turn, think, then move."""
    async for update in me.watch:
        if isinstance(update, GameOver):
            return
        if isinstance(update, MovePlayed):
            me.seen.append((update.seq, update.notation))
            turn = update.next
        elif isinstance(update, Snapshot):
            turn = update.table.game.turn
            game.watching.add(me.color)
            if len(game.watching) == len(game.players):
                game.both_watching.set()
        else:
            continue
        if game.stop_at_ply is not None and len(me.seen) >= game.stop_at_ply:
            return
        if turn is not None and turn.side is me.color:
            await game.both_watching.wait()
            await asyncio.sleep(THINKING_SECONDS)
            await _move(game, me, turn.legal_moves[0])


async def _move(game: PlayedGame, me: Player, move: Move) -> None:
    """Play a move as a player does: when the app shows an error, try again."""
    while True:
        try:
            events = await me.client.play(game.table_id, move)
        except (StaleSeqError, NotYourTurnError) as error:
            # The move was played after all, by a try whose answer never came.
            me.errors.append(error)
            return
        except goti_client.GotiError as error:
            me.errors.append(error)
            await asyncio.sleep(THINKING_SECONDS)
            continue
        me.played += [
            (event.seq, event.notation) for event in events if isinstance(event, MovePlayed)
        ]
        return


async def _browse(client: goti_client.GotiClient, errors: list[goti_client.GotiError]) -> None:
    """What an app on the lobby screen does: list the open tables, again and again."""
    while True:
        try:
            await client.list_tables()
        except goti_client.GotiError as error:
            errors.append(error)
        await asyncio.sleep(BROWSING_SECONDS)


async def _seat(target: str, stack: contextlib.AsyncExitStack) -> PlayedGame:
    alice = await stack.enter_async_context(goti_client.connect(target, display_name="Alice"))
    bob = await stack.enter_async_context(goti_client.connect(target, display_name="Bob"))
    created = await alice.create_table(starting_player=StartingPlayer.PLAYER_1)
    joined = await bob.join_table(created.code)
    players = (
        Player(alice, Color.BLACK, alice.watch(created.table_id)),
        Player(bob, Color.WHITE, bob.watch(created.table_id)),
    )
    assert created.role is Role.BLACK and joined.role is Role.WHITE
    return PlayedGame(created.table_id, players)


@dataclass
class Apps:
    """Every app in the test: players seated in pairs, and apps browsing the lobby."""

    games: list[PlayedGame]
    browsers: list[goti_client.GotiClient]
    browsing_errors: list[goti_client.GotiError] = field(default_factory=list)

    @property
    def errors(self) -> list[goti_client.GotiError]:
        """Everything the SDK raised to an app."""
        seated = [
            error for game in self.games for player in game.players for error in player.errors
        ]
        return self.browsing_errors + seated

    def progress(self) -> str:
        plies = [game.plies for game in self.games]
        return f"plies seen {plies}; {len(self.errors)} errors: {self.errors[:3]}"


async def _until(check: Callable[[], bool], what: str, apps: Apps) -> None:
    """Wait until ``check()`` holds; fail at once when an error has reached an app."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PATIENCE
    while not check():
        assert not apps.errors, f"errors reached the apps before {what}: {apps.progress()}"
        assert loop.time() < deadline, f"timed out waiting until {what}: {apps.progress()}"
        await asyncio.sleep(0.05)


async def test_a_rolling_restart_shows_the_apps_nothing(
    proxy: TcpProxy, replica_processes: list[ReplicaProcess]
) -> None:
    leaving = replica_processes[0]
    assert leaving.process is not None
    async with contextlib.AsyncExitStack() as stack:
        apps = Apps(
            games=[await _seat(proxy.target, stack) for _ in range(GAMES)],
            browsers=[
                await stack.enter_async_context(goti_client.connect(proxy.target, guest=False))
                for _ in range(BROWSERS)
            ],
        )
        playing = [
            asyncio.ensure_future(_play(game, player))
            for game in apps.games
            for player in game.players
        ]
        browsing = [
            asyncio.ensure_future(_browse(client, apps.browsing_errors)) for client in apps.browsers
        ]
        try:
            await _until(
                lambda: all(game.plies >= PLIES_BEFORE for game in apps.games),
                f"every game has {PLIES_BEFORE} plies",
                apps,
            )
            leaving.process.send_signal(signal.SIGTERM)
            assert await asyncio.to_thread(leaving.process.wait, PATIENCE) == 0, leaving.log()
            for game in apps.games:
                game.stop_at_ply = game.plies + PLIES_AFTER
            await _until(
                lambda: all(task.done() for task in playing),
                f"every game has played {PLIES_AFTER} plies more",
                apps,
            )
        finally:
            for task in playing + browsing:
                task.cancel()
            await asyncio.gather(*playing, *browsing, return_exceptions=True)

        assert not apps.errors, f"{len(apps.errors)} errors reached the apps: {apps.errors}"
        for game in apps.games:
            alice, bob = game.players
            table = await alice.client.get_table(game.table_id)
            played = sorted(alice.played + bob.played)
            # Every move an app was told it played is in the game once, in its place.
            assert [seq for seq, _ in played] == list(range(2, 2 + len(played)))
            assert list(table.game.moves) == [notation for _, notation in played]
            # Both apps saw every move through their watches, after the stop as before.
            assert alice.seen == bob.seen == played
            assert len(played) == game.stop_at_ply
