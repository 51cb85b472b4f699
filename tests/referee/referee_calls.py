"""What the referee tests share: game states built with the rules library, and failed calls
read back as Goti statuses."""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import TypeAlias

import grpc
import pytest

from goti.api import convert
from goti.api.error_status import ErrorStatus, status_code_of
from goti.api.v1 import game_pb2, referee_pb2_grpc
from goti.rules.game import Game
from goti.rules.variants import ENGLISH, Variant

Referee: TypeAlias = "referee_pb2_grpc.RefereeServiceAsyncStub"
"""The generated asyncio stub (a name for type checkers only)."""

CALL_TIMEOUT = 30.0
"""Seconds; generous, for a busy machine."""


def game_after(moves: Iterable[str], variant: Variant = ENGLISH, fen: str | None = None) -> Game:
    """A local game with ``moves`` played, from the start or from ``fen``."""
    game = Game(variant) if fen is None else Game.from_fen(fen, variant)
    for text in moves:
        game.play(text)
    return game


def state_of(game: Game) -> game_pb2.GameState:
    """A local game's state as the referee takes it."""
    return convert.game_state_to_proto(game.state())


async def refusal(call: Awaitable[object]) -> ErrorStatus:
    """The Goti status a call fails with; it must fail, and with one."""
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    status = ErrorStatus.from_rpc_error(raised.value)
    assert status is not None, (raised.value.code(), raised.value.details())
    assert status.code is status_code_of(status.reason)
    return status
