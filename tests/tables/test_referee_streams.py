"""The tables service's Applies over long-lived streams to the referee, followed past the
referee's transitions: a referee stopped (gracefully, or at once) and started again between
two moves, a referee that never answers, and a referee older than ApplyStream. Each time the
players and both watchers see the next move."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import pytest
import pytest_asyncio

from goti import serving
from goti.api.v1 import referee_pb2, tables_pb2
from goti.redis_server import free_port
from goti.referee.servicer import RefereeService, RefereeServicer
from goti.settings import Settings
from goti.tables.options import TablesOptions

from .conftest import StartReplica, TablesReplica
from .table_calls import Guest, eventually, first_legal, new_guest, refusal, watching

GRACE_SECONDS = 60.0
"""The referee's grace period: open streams that held a stop would hold it this long."""


async def _never_answer(requests: AsyncIterator[object], context: object) -> None:
    async for _ in requests:
        pass


def _unary_apply_only(server: grpc.aio.Server) -> list[str]:
    """A referee from before ApplyStream: its Apply, no stream."""
    servicer = RefereeServicer()
    handler = grpc.unary_unary_rpc_method_handler(
        servicer.Apply,
        request_deserializer=referee_pb2.ApplyRequest.FromString,
        response_serializer=referee_pb2.ApplyResponse.SerializeToString,
    )
    name = "goti.api.v1.RefereeService"
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(name, {"Apply": handler}),)
    )
    return [name]


def _silent(server: grpc.aio.Server) -> list[str]:
    """A referee that takes every streamed Apply and answers none."""
    handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.stream_stream_rpc_method_handler(
        _never_answer, request_deserializer=None, response_serializer=None
    )
    name = "goti.api.v1.RefereeService"
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(name, {"ApplyStream": handler}),)
    )
    return [name]


@dataclasses.dataclass
class SwitchedReferee:
    """A referee at one address that the test stops and starts again, as a deploy does."""

    settings: Settings
    port: int = dataclasses.field(default_factory=free_port)
    running: serving.RunningServer | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self, bind: serving.Bind | None = None) -> None:
        """Start Goti's referee, or a server ``bind`` builds, on the port."""
        assert self.running is None
        drain = None
        if bind is None:
            service = RefereeService()
            bind, drain = service.bind, service.drain
        self.running = await serving.start_server(
            "referee", bind, self.settings, port=self.port, drain=drain
        )

    async def stop(self, grace: float | None) -> float:
        """Stop it (gracefully for ``grace`` seconds; None: at once); returns the seconds the
        stop took."""
        assert self.running is not None
        started = time.monotonic()
        await self.running.stop(grace)
        self.running = None
        return time.monotonic() - started


@pytest_asyncio.fixture
async def switched_referee(settings: Settings) -> AsyncIterator[SwitchedReferee]:
    referee = SwitchedReferee(dataclasses.replace(settings, grace_seconds=GRACE_SECONDS))
    await referee.start()
    try:
        yield referee
    finally:
        if referee.running is not None:
            await referee.stop(None)


@pytest.fixture
def referee_target(switched_referee: SwitchedReferee) -> str:
    """The tables replicas of these tests call the switched referee."""
    return switched_referee.target


@dataclasses.dataclass
class _Game:
    table_id: str
    ann: Guest
    bob: Guest
    turn: Any
    seq: int


async def _started(replica: TablesReplica) -> _Game:
    ann = await new_guest(replica.channel, "Ann")
    bob = await new_guest(replica.channel, "Bob")
    table = (await ann.create(starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1)).table
    joined = await bob.join(table.code)
    return _Game(table.table_id, ann, bob, joined.table.game.turn, joined.table.seq)


async def _move(game: _Game, player: Guest) -> tables_pb2.PlayResponse:
    played = await player.play(game.table_id, first_legal(game.turn), game.seq)
    game.turn, game.seq = played.events[0].move_played.next, played.events[-1].seq
    return played


async def _both_watchers_see_the_next_move_after(
    replica: TablesReplica,
    game: _Game,
    transition: Callable[[], Awaitable[None]],
    *,
    before: Guest | None,
    after: Guest,
) -> None:
    """``before`` moves (unless None), then the transition, then ``after`` moves, and both
    watchers of the table get that move."""
    async with contextlib.AsyncExitStack() as stack:
        watches = [
            await stack.enter_async_context(watching(replica.channel, game.table_id))
            for _ in range(2)
        ]
        if before is not None:
            await _move(game, before)
        await transition()
        played = await _move(game, after)
        for watch in watches:
            await watch.until_seq(game.seq)
            assert watch.events[-1] == played.events[-1]


async def _nothing() -> None:
    """No transition: the referee is back already."""


@pytest.mark.parametrize("grace", [GRACE_SECONDS, None], ids=["graceful", "at-once"])
async def test_a_referee_restarted_between_two_moves(
    start_replica: StartReplica, switched_referee: SwitchedReferee, grace: float | None
) -> None:
    replica = await start_replica()
    game = await _started(replica)

    async def restart() -> None:
        took = await switched_referee.stop(grace)
        # The tables' open streams end with the stop rather than hold it for its grace.
        assert took < 10, took
        await switched_referee.start()

    await _both_watchers_see_the_next_move_after(
        replica, game, restart, before=game.ann, after=game.bob
    )


async def test_a_silent_referee_fails_the_move_within_its_deadline_and_the_next_succeeds(
    start_replica: StartReplica, switched_referee: SwitchedReferee, options: TablesOptions
) -> None:
    deadline = 1.0
    replica = await start_replica(
        options=dataclasses.replace(options, referee_deadline_seconds=deadline)
    )
    game = await _started(replica)
    await _move(game, game.ann)
    await switched_referee.stop(None)
    await switched_referee.start(_silent)

    started = time.monotonic()
    status = await refusal(game.bob.play(game.table_id, first_legal(game.turn), game.seq))
    took = time.monotonic() - started
    assert status.code is grpc.StatusCode.UNAVAILABLE
    assert "did not answer Apply in time" in status.message
    assert deadline <= took < deadline + 5, took

    await switched_referee.stop(None)
    await switched_referee.start()
    # Nothing was changed: Bob plays again at the same seq, and it goes through.
    await _both_watchers_see_the_next_move_after(
        replica, game, _nothing, before=None, after=game.bob
    )


async def test_a_referee_without_apply_stream_is_called_unary(
    start_replica: StartReplica, switched_referee: SwitchedReferee
) -> None:
    replica = await start_replica()
    game = await _started(replica)

    async def downgrade() -> None:
        await switched_referee.stop(None)
        await switched_referee.start(_unary_apply_only)

    await _both_watchers_see_the_next_move_after(
        replica, game, downgrade, before=game.ann, after=game.bob
    )


async def test_closing_the_referee_client_ends_its_streams_cleanly(
    start_replica: StartReplica, switched_referee: SwitchedReferee
) -> None:
    replica = await start_replica()
    game = await _started(replica)
    await _move(game, game.ann)
    await replica.runtime.referee.close()

    pending = [
        task
        for task in asyncio.all_tasks()
        if "_ApplyStream" in getattr(task.get_coro(), "__qualname__", "")
    ]
    assert not pending
    assert switched_referee.running is not None
    registry = switched_referee.running.registry
    labels = {
        "grpc_type": "bidi_stream",
        "grpc_service": "goti.api.v1.RefereeService",
        "grpc_method": "ApplyStream",
    }
    # Each stream the client opened was half-closed and ended OK on the referee, once its
    # answers were in.
    opened = registry.get_sample_value("grpc_server_started_total", labels)
    assert opened is not None and opened >= 1
    await eventually(
        lambda: (
            registry.get_sample_value("grpc_server_handled_total", {**labels, "grpc_code": "OK"})
            == opened
        )
    )
    # A move after the close fails as unavailable rather than opening a stream again.
    status = await refusal(game.bob.play(game.table_id, first_legal(game.turn), game.seq))
    assert status.code is grpc.StatusCode.UNAVAILABLE
    assert registry.get_sample_value("grpc_server_started_total", labels) == opened
