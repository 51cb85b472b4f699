"""``goti.api.v1.AiService``: the computer player behind gRPC.

The search runs in worker processes, one per core by default, never on the event loop: the
server stays responsive (health checks, other calls) while every worker thinks.  The
servicer only translates through :mod:`goti.api.convert` and maps errors; the choosing is
:func:`goti.ai.player.choose_move` and :func:`goti.ai.player.decide_draw`.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, Final, Never, TypeAlias

import grpc

from goti import serving
from goti.ai.levels import SETTINGS, Level
from goti.ai.player import (
    DEFAULT_SEARCH_MEMORY_MB,
    choose_move,
    decide_draw,
    limit_search_memory,
    prepare_levels,
    use_master_tables,
)
from goti.api import convert
from goti.api.error_status import ErrorStatus
from goti.api.v1 import ai_pb2, ai_pb2_grpc, errors_pb2
from goti.rules.game import GameState

Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"

SERVICE: Final = ai_pb2.DESCRIPTOR.services_by_name["AiService"]
SERVICE_NAME: Final[str] = SERVICE.full_name

_LEVELS: Final[dict[int, Level]] = {
    ai_pb2.LEVEL_EASY: Level.EASY,
    ai_pb2.LEVEL_NORMAL: Level.NORMAL,
    ai_pb2.LEVEL_HARD: Level.HARD,
    ai_pb2.LEVEL_QUICK: Level.QUICK,
    ai_pb2.LEVEL_MASTER: Level.MASTER,
}
MAX_TIME_BUDGET_MS: Final = 10_000
DEADLINE_SHARE: Final = 0.6
"""Of the time left before the caller's deadline, the share the search may think: the rest
covers the queue, the hand-over to the worker and the answer's way back."""
MIN_BUDGET_SECONDS: Final = 0.002
SCORE_LIMIT: Final = 30_000


def available_cpus() -> int:
    """The CPUs this process may run on (a container's limit where the OS reports one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not every platform has it
        return os.cpu_count() or 1


def _ignore_interrupts() -> None:
    # Ctrl-C reaches the whole process group; the server, not its workers, decides when to
    # stop, and a worker killed mid-search would break the pool for the calls still running.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start_worker(search_memory_mb: float, master_endgames: Path | None) -> None:
    _ignore_interrupts()
    limit_search_memory(search_memory_mb)
    use_master_tables(master_endgames)
    # Here, not in a call handed to the pool: the pool runs this in every worker it starts,
    # while calls land on whichever worker is free (one may take two warm-ups, another none).
    prepare_levels()


def search_pool(
    workers: int,
    *,
    search_memory_mb: float = DEFAULT_SEARCH_MEMORY_MB,
    master_endgames: Path | None = None,
) -> ProcessPoolExecutor:
    """Worker processes for the search, each keeping search memories (the transposition
    tables of the timed levels) of at most ``search_memory_mb`` when full, and giving Master
    the endgame tables in ``master_endgames`` (:func:`~goti.ai.player.use_master_tables`:
    check the folder with it first, since a worker that fails to start breaks the pool).

    Started from a fork server, not forked from the gRPC process: forking a process that
    runs gRPC's threads is unsafe.
    """
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("forkserver"),
        initializer=_start_worker,
        initargs=(search_memory_mb, master_endgames),
    )


def _warm_up() -> int:
    """A call that makes the pool start its workers (each prepares as it starts) before the
    first real call waits for them."""
    return os.getpid()


async def _refuse(context: Context, status: ErrorStatus) -> Never:
    await context.abort(status.code, status.message, status.trailing_metadata())


async def _state(
    request: ai_pb2.ChooseMoveRequest | ai_pb2.DecideDrawRequest, context: Context
) -> GameState:
    if not request.HasField("state"):
        await _refuse(
            context,
            ErrorStatus.of(
                errors_pb2.ERROR_REASON_INVALID_REQUEST, "state is required", field="state"
            ),
        )
    try:
        state = convert.game_state_from_proto(request.state)
    except ValueError as error:
        status = convert.rules_error_status(error, field="state")
        if status is None:
            raise
        await _refuse(context, status)
    if state.outcome is not None:
        await _refuse(
            context,
            ErrorStatus.of(
                errors_pb2.ERROR_REASON_GAME_OVER, "the game is over: there is nothing to decide"
            ),
        )
    return state


async def _level(value: int, context: Context) -> Level:
    level = _LEVELS.get(value)
    if level is None:
        await _refuse(
            context,
            ErrorStatus.of(
                errors_pb2.ERROR_REASON_INVALID_REQUEST,
                f"level {value} is not a level: use LEVEL_EASY, LEVEL_NORMAL, LEVEL_HARD, "
                "LEVEL_MASTER or LEVEL_QUICK",
                field="level",
            ),
        )
    return level


def _clamp(score: int) -> int:
    return max(-SCORE_LIMIT, min(SCORE_LIMIT, score))


class AiServicer(ai_pb2_grpc.AiServiceServicer):
    """The computer player's RPCs, run on a pool of search processes."""

    def __init__(self, pool: Executor) -> None:
        self._pool = pool

    async def ChooseMove(  # noqa: N802
        self, request: ai_pb2.ChooseMoveRequest, context: Context
    ) -> ai_pb2.ChooseMoveResponse:
        received = time.perf_counter()
        state = await _state(request, context)
        level = await _level(request.level, context)
        # None: the level's own time (Hard and Master plan it move by move).
        budget: float | None = None
        if request.time_budget_ms:
            if request.time_budget_ms > MAX_TIME_BUDGET_MS:
                await _refuse(
                    context,
                    ErrorStatus.of(
                        errors_pb2.ERROR_REASON_INVALID_REQUEST,
                        f"time_budget_ms must be 1-{MAX_TIME_BUDGET_MS}, not "
                        f"{request.time_budget_ms}",
                        field="time_budget_ms",
                    ),
                )
            budget = request.time_budget_ms / 1000
        remaining = context.time_remaining()
        wall_deadline = None
        if remaining is not None:
            # The caller's deadline wins: think within a share of what is left of it, in CPU
            # time and, on a loaded machine where CPU time runs slow, in wall-clock time too.
            share = max(MIN_BUDGET_SECONDS, remaining * DEADLINE_SHARE)
            if share < (SETTINGS[level].cpu_seconds if budget is None else budget):
                budget = share
            wall_deadline = time.monotonic() + share
        seed = request.seed if request.HasField("seed") else None
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(
            self._pool,
            partial(
                choose_move,
                state,
                level,
                time_budget=budget,
                seed=seed,
                wall_deadline=wall_deadline,
            ),
        )
        return ai_pb2.ChooseMoveResponse(
            move=convert.move_to_proto(result.move, state.variant),
            score=_clamp(result.score),
            depth=result.depth,
            nodes=result.nodes,
            cpu_time_ms=round(result.seconds * 1000),
            wall_time_ms=round((time.perf_counter() - received) * 1000),
            principal_variation=list(result.principal_variation) or [result.notation],
            forced_in_plies=result.forced_in_plies,
            proven_loss=result.proven_loss,
        )

    async def DecideDraw(  # noqa: N802
        self, request: ai_pb2.DecideDrawRequest, context: Context
    ) -> ai_pb2.DecideDrawResponse:
        state = await _state(request, context)
        level = await _level(request.level, context)
        if state.draw_offer is None or state.draw_offer is state.position.turn:
            await _refuse(
                context,
                ErrorStatus.of(
                    errors_pb2.ERROR_REASON_NO_DRAW_OFFER,
                    "the opponent of the side to move has no open draw offer to decide on",
                ),
            )
        loop = asyncio.get_running_loop()
        decision = await loop.run_in_executor(self._pool, partial(decide_draw, state, level))
        return ai_pb2.DecideDrawResponse(accept=decision.accept, score=_clamp(decision.score))


async def bind(server: grpc.aio.Server, *, pool: Executor, workers: int) -> list[str]:
    """Add the AI service to ``server`` once every search worker is up."""
    loop = asyncio.get_running_loop()
    await asyncio.gather(*(loop.run_in_executor(pool, _warm_up) for _ in range(workers)))
    return [serving.add_servicer(server, SERVICE, AiServicer(pool))]
