"""The AI service through a real gRPC server with real search processes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from functools import partial
from typing import Any

import grpc
import pytest
import pytest_asyncio
from grpc_health.v1 import health_pb2

from goti import serving
from goti.ai.levels import SETTINGS, Level
from goti.ai.opening_book import shipped_book
from goti.ai.player import DEFAULT_SEARCH_MEMORY_MB, choose_move, search_memory_slots
from goti.ai.search import SLOT_BYTES, slots_within
from goti.ai.servicer import DEADLINE_SHARE, MAX_TIME_BUDGET_MS, bind, search_pool
from goti.api import convert
from goti.api.error_status import ErrorStatus
from goti.api.v1 import ai_pb2, ai_pb2_grpc, game_pb2
from goti.healthcheck import health_check_call
from goti.rules.color import Color
from goti.rules.game import Game
from goti.rules.position import Position
from goti.settings import Settings

from .out_of_book import game_past_the_book

LEVELS = [
    ai_pb2.LEVEL_EASY,
    ai_pb2.LEVEL_NORMAL,
    ai_pb2.LEVEL_HARD,
    ai_pb2.LEVEL_MASTER,
    ai_pb2.LEVEL_QUICK,
]
MASTER_WALL_SECONDS = 15.0
"""A Master move thinks about 1 s of CPU (at most 3 s), which a busy machine may spread over
several seconds of wall-clock time; the search that waited for the call's deadline instead (0.6
of its 30 s) would still take longer than this."""
WORKERS = 2
WAIT_SECONDS = 30.0
"""Generous: the machine running the tests may be busy."""


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessPoolExecutor]:
    workers = search_pool(WORKERS)
    yield workers
    workers.shutdown(cancel_futures=True)


class WatchedPool(Executor):
    """The search pool, keeping the calls handed to it so a test can see what runs."""

    def __init__(self, pool: Executor) -> None:
        self._pool = pool
        self._calls: list[Future[Any]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        call = self._pool.submit(fn, *args, **kwargs)
        self._calls.append(call)
        return call

    def running(self) -> int:
        """The calls handed on to the worker processes and not finished (a process pool marks
        a call running as it queues it for a worker)."""
        return sum(call.running() for call in self._calls)


@pytest.fixture
def watched_pool(pool: ProcessPoolExecutor) -> WatchedPool:
    return WatchedPool(pool)


@pytest_asyncio.fixture
async def server(watched_pool: WatchedPool) -> AsyncIterator[serving.RunningServer]:
    settings = Settings(host="127.0.0.1")
    running = await serving.start_server(
        "ai", partial(bind, pool=watched_pool, workers=WORKERS), settings, port=0
    )
    try:
        yield running
    finally:
        await running.stop(None)


@pytest_asyncio.fixture
async def channel(server: serving.RunningServer) -> AsyncIterator[grpc.aio.Channel]:
    async with serving.open_channel(server.target, Settings(host="127.0.0.1")) as opened:
        yield opened


@pytest.fixture
def ai(channel: grpc.aio.Channel) -> ai_pb2_grpc.AiServiceAsyncStub:
    return ai_pb2_grpc.AiServiceStub(channel)


def _state(game: Game) -> game_pb2.GameState:
    return convert.game_state_to_proto(game.state())


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("variant", ["english", "russian"])
async def test_every_level_answers_with_a_legal_move(
    ai: ai_pb2_grpc.AiServiceAsyncStub, level: ai_pb2.Level.ValueType, variant: str
) -> None:
    game = game_past_the_book(variant)
    reply = await ai.ChooseMove(
        ai_pb2.ChooseMoveRequest(state=_state(game), level=level, seed=1), timeout=30
    )
    move = convert.move_from_proto(reply.move)
    assert move in game.position.legal_moves
    assert reply.move.notation == game.notation(move)
    assert reply.nodes > 0 and reply.depth >= 1
    assert reply.principal_variation[0] == reply.move.notation


@pytest.mark.parametrize("variant", ["english", "russian"])
async def test_the_timed_levels_answer_the_start_from_the_opening_book(
    ai: ai_pb2_grpc.AiServiceAsyncStub, variant: str
) -> None:
    game = Game(variant)
    booked = {move.notation for move in shipped_book(variant).moves(game.position)}
    for level in (ai_pb2.LEVEL_HARD, ai_pb2.LEVEL_MASTER):
        reply = await ai.ChooseMove(
            ai_pb2.ChooseMoveRequest(state=_state(game), level=level), timeout=30
        )
        assert reply.move.notation in booked
        # No search: the book's depth and score, at once.
        assert reply.nodes == 0 and reply.depth >= 8 and reply.cpu_time_ms < 100


@pytest.mark.parametrize("level", LEVELS)
async def test_a_forced_result_comes_with_its_length_and_a_lost_game_says_so(
    ai: ai_pb2_grpc.AiServiceAsyncStub, level: ai_pb2.Level.ValueType
) -> None:
    """White to move loses in four plies (30-26 17-22 26x17 21x14); Black to move after 30-26
    wins in three; the start is no forced result at all."""
    lost = Game.from_fen("W:WK30:BK8,K21,17", "english")
    reply = await ai.ChooseMove(
        ai_pb2.ChooseMoveRequest(state=_state(lost), level=level, seed=1), timeout=30
    )
    assert reply.proven_loss
    assert (reply.forced_in_plies, reply.score) == (4, -29_996)
    assert reply.move.notation == "30-26"
    lost.play("30-26")
    won = await ai.ChooseMove(
        ai_pb2.ChooseMoveRequest(state=_state(lost), level=level, seed=1), timeout=30
    )
    assert not won.proven_loss
    assert (won.forced_in_plies, won.score) == (3, 29_997)
    assert won.move.notation == "17-22"
    start = await ai.ChooseMove(
        ai_pb2.ChooseMoveRequest(state=_state(Game()), level=level, seed=1), timeout=30
    )
    assert not start.proven_loss and start.forced_in_plies == 0


@pytest.mark.parametrize("variant", ["english", "russian"])
async def test_master_thinks_about_a_second_and_answers_within_its_budget(
    ai: ai_pb2_grpc.AiServiceAsyncStub, variant: str
) -> None:
    game = game_past_the_book(variant)
    started = time.monotonic()
    reply = await ai.ChooseMove(
        ai_pb2.ChooseMoveRequest(state=_state(game), level=ai_pb2.LEVEL_MASTER), timeout=30
    )
    waited = time.monotonic() - started
    move = convert.move_from_proto(reply.move)
    assert move in game.position.legal_moves
    assert reply.move.notation == game.notation(move)
    # Its own time, planned around 1 s of CPU: far more than Hard's 0.15 s, and no more than
    # the level's most (the search stops within a few hundred nodes of it).
    most_seconds = SETTINGS[Level.MASTER].most_cpu_seconds
    assert most_seconds is not None
    assert 500 <= reply.cpu_time_ms <= most_seconds * 1_200
    assert waited < MASTER_WALL_SECONDS and reply.wall_time_ms < MASTER_WALL_SECONDS * 1000
    assert reply.depth > 0 and reply.principal_variation[0] == reply.move.notation


async def test_the_callers_deadline_caps_the_thinking(ai: ai_pb2_grpc.AiServiceAsyncStub) -> None:
    """A long budget with a shorter deadline still answers in time, with the best move so far:
    the search thinks for a share of the deadline, in CPU and in wall-clock time, and leaves
    the rest of it for the answer to come back (the call fails if it overruns)."""
    game = Game("russian")
    request = ai_pb2.ChooseMoveRequest(
        state=_state(game), level=ai_pb2.LEVEL_HARD, time_budget_ms=MAX_TIME_BUDGET_MS
    )
    deadline = 4.0
    reply = await ai.ChooseMove(request, timeout=deadline)
    assert convert.move_from_proto(reply.move) in game.position.legal_moves
    # Stopped by the deadline, not the budget: a thread's CPU time runs no faster than the
    # clock, so the search spent at most its share of the deadline, far below the budget.
    share_ms = deadline * DEADLINE_SHARE * 1000
    assert reply.cpu_time_ms <= share_ms + 250 < MAX_TIME_BUDGET_MS / 2


async def test_the_search_runs_off_the_event_loop(
    ai: ai_pb2_grpc.AiServiceAsyncStub, channel: grpc.aio.Channel, watched_pool: WatchedPool
) -> None:
    """While every worker thinks for a second, the server still answers."""
    game = game_past_the_book("english")
    request = ai_pb2.ChooseMoveRequest(
        state=_state(game), level=ai_pb2.LEVEL_HARD, time_budget_ms=1_000
    )
    searches = [asyncio.ensure_future(ai.ChooseMove(request, timeout=60)) for _ in range(WORKERS)]
    deadline = time.monotonic() + WAIT_SECONDS
    while watched_pool.running() < WORKERS:
        assert time.monotonic() < deadline, "the searches never reached every worker"
        await asyncio.sleep(0.01)
    answer = await health_check_call(channel)(health_pb2.HealthCheckRequest(), timeout=30)
    assert answer.status == health_pb2.HealthCheckResponse.SERVING
    # Answered while every search still thinks: a search holding up the event loop would
    # have come back before the health check was even read.
    assert not any(search.done() for search in searches)
    replies = await asyncio.gather(*searches)
    assert all(reply.cpu_time_ms >= 500 for reply in replies)


async def test_draw_decisions(ai: ai_pb2_grpc.AiServiceAsyncStub) -> None:
    """Three kings against one: the side behind takes a draw, the side ahead refuses it."""
    ahead = Game.from_fen("W:WK1,K2,K3:BK32", "english")
    ahead.push(ahead.legal_moves[0])
    ahead.push(ahead.legal_moves[0])
    ahead.offer_draw(Color.WHITE)
    ahead.push(ahead.legal_moves[0])  # White moves; Black, one king down to three, decides
    losing = await ai.DecideDraw(
        ai_pb2.DecideDrawRequest(state=_state(ahead), level=ai_pb2.LEVEL_HARD), timeout=30
    )
    assert losing.accept and losing.score < 0
    behind = Game.from_fen("B:WK1,K2,K3:BK32", "english")
    behind.push(behind.legal_moves[0])
    behind.push(behind.legal_moves[0])
    behind.offer_draw(Color.BLACK)
    behind.push(behind.legal_moves[0])  # Black moves; White, three kings to one, decides
    winning = await ai.DecideDraw(
        ai_pb2.DecideDrawRequest(state=_state(behind), level=ai_pb2.LEVEL_EASY), timeout=30
    )
    assert not winning.accept and winning.score > 0


async def _refusal(call: object) -> ErrorStatus:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    status = ErrorStatus.from_rpc_error(caught.value)
    assert status is not None
    return status


async def test_refusals(ai: ai_pb2_grpc.AiServiceAsyncStub, channel: grpc.aio.Channel) -> None:
    fresh = _state(Game())
    no_level = await _refusal(ai.ChooseMove(ai_pb2.ChooseMoveRequest(state=fresh), timeout=10))
    assert (no_level.code, no_level.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    unknown_level = await _refusal(
        ai.ChooseMove(
            ai_pb2.ChooseMoveRequest(state=fresh, level=max(LEVELS) + 1),  # type: ignore[arg-type]
            timeout=10,
        )
    )
    assert unknown_level.code == grpc.StatusCode.INVALID_ARGUMENT
    assert unknown_level.metadata["field"] == "level"
    assert "LEVEL_MASTER" in unknown_level.message
    no_state = await _refusal(
        ai.ChooseMove(ai_pb2.ChooseMoveRequest(level=ai_pb2.LEVEL_EASY), timeout=10)
    )
    assert no_state.reason == "INVALID_REQUEST"
    too_long = await _refusal(
        ai.ChooseMove(
            ai_pb2.ChooseMoveRequest(state=fresh, level=ai_pb2.LEVEL_EASY, time_budget_ms=60_000),
            timeout=10,
        )
    )
    assert too_long.reason == "INVALID_REQUEST"
    broken = game_pb2.GameState()
    broken.CopyFrom(fresh)
    broken.position.white = broken.position.black
    bad_state = await _refusal(
        ai.ChooseMove(ai_pb2.ChooseMoveRequest(state=broken, level=ai_pb2.LEVEL_EASY), timeout=10)
    )
    assert (bad_state.code, bad_state.reason) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_GAME_STATE",
    )
    over = Game.from_fen("W:W29:B25,22", "english")
    finished = await _refusal(
        ai.ChooseMove(
            ai_pb2.ChooseMoveRequest(state=_state(over), level=ai_pb2.LEVEL_EASY), timeout=10
        )
    )
    assert (finished.code, finished.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "GAME_OVER")
    no_offer = await _refusal(
        ai.DecideDraw(ai_pb2.DecideDrawRequest(state=fresh, level=ai_pb2.LEVEL_HARD), timeout=10)
    )
    assert (no_offer.code, no_offer.reason) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NO_DRAW_OFFER",
    )
    garbage = await _refusal(
        channel.unary_unary(
            "/goti.api.v1.AiService/ChooseMove",
            request_serializer=lambda data: data,
            response_deserializer=lambda data: data,
        )(b"\xff\xff\xff", timeout=10)
    )
    assert (garbage.code, garbage.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert Position.initial().legal_moves  # the pool survived every refusal
    reply = await ai.ChooseMove(
        ai_pb2.ChooseMoveRequest(state=fresh, level=ai_pb2.LEVEL_QUICK), timeout=10
    )
    assert reply.HasField("move")


def test_each_search_process_keeps_its_memory_within_the_setting() -> None:
    """GOTI_AI_SEARCH_MEMORY_MB reaches the worker processes: their tables are sized to it,
    and a Hard move is chosen with so small a memory, twice (the second from the memory)."""
    small = search_pool(1, search_memory_mb=1)
    try:
        assert small.submit(search_memory_slots).result(WAIT_SECONDS) == slots_within(0.5)
        assert slots_within(0.5) * SLOT_BYTES <= 500_000
        game = game_past_the_book("english")
        for _ in range(2):
            result = small.submit(choose_move, game.state(), "hard").result(WAIT_SECONDS)
            assert result.move in game.legal_moves
            game.push(result.move)
        assert small.submit(search_memory_slots).result(WAIT_SECONDS) == slots_within(0.5)
    finally:
        small.shutdown(cancel_futures=True)
    default = Settings.from_env({})
    assert default.ai_search_memory_mb == DEFAULT_SEARCH_MEMORY_MB
    with pytest.raises(ValueError, match="GOTI_AI_SEARCH_MEMORY_MB"):
        Settings.from_env({"GOTI_AI_SEARCH_MEMORY_MB": "0"})
