"""``goti.api.v1.MatchmakingService``: Seek and CancelSeek (Play online now), and the
leaderboards.

Like the tables' servicers it only translates: it checks the request's fields, finds the
caller, hands the work to :class:`~goti.tables.seeking.Seeking` (or
:class:`~goti.tables.leaderboard.Leaderboard`) and sends its progress back;
refusals leave with their Goti status.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any, Final, Never, TypeAlias

import grpc
from google.protobuf.message import Message

from goti import serving
from goti.api.v1 import game_pb2, matchmaking_pb2
from goti.tables import validation
from goti.tables.leaderboard import Leaderboard
from goti.tables.players import Players
from goti.tables.redis_calls import StoreUnavailableError
from goti.tables.refusals import CallRefusedError
from goti.tables.seeking import TIMER_SECONDS, Pool, Seeking

Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"

MATCHMAKING_SERVICE: Final = matchmaking_pb2.DESCRIPTOR.services_by_name["MatchmakingService"]


def seek_timer(value: int) -> matchmaking_pb2.SeekTimer.ValueType:
    """A pool's turn-timer choice; SEEK_TIMER_UNSPECIFIED or an unknown value is refused."""
    if value not in TIMER_SECONDS:
        raise CallRefusedError.invalid(
            "timer",
            f"timer is {value}, which is not a turn-timer choice: SEEK_TIMER_NONE, "
            "SEEK_TIMER_30_SECONDS or SEEK_TIMER_2_MINUTES",
        )
    return value  # type: ignore[return-value]


def pool_of(request: matchmaking_pb2.SeekRequest) -> Pool:
    """The pool a request asks for (an unset variant is English)."""
    variant = validation.variant(request.variant) or game_pb2.VARIANT_ENGLISH
    return Pool(variant, seek_timer(request.timer), request.rated)


async def _abort(context: Context, refusal: CallRefusedError) -> Never:
    status = refusal.status
    await context.abort(status.code, status.message, status.trailing_metadata())
    raise AssertionError("abort returns only by raising")


class MatchmakingServicer:
    """The public matchmaking API."""

    def __init__(self, players: Players, seeking: Seeking, leaderboard: Leaderboard) -> None:
        self._players = players
        self._seeking = seeking
        self._leaderboard = leaderboard

    async def Seek(  # noqa: N802
        self, request: matchmaking_pb2.SeekRequest, context: Context
    ) -> AsyncIterator[Message]:
        try:
            try:
                request_id = validation.request_id(request.request_id)
                pool = pool_of(request)
                player_id = await self._players.authenticate(
                    list(context.invocation_metadata() or ())
                )
                stream = self._seeking.seek(player_id, request_id, pool)
                async with contextlib.aclosing(stream):
                    async for message in stream:
                        yield message
            except StoreUnavailableError as error:
                raise CallRefusedError.unavailable(
                    f"Goti's store (Redis) cannot be reached ({error}); seek again with the "
                    "same request_id after a short backoff"
                ) from error
        except CallRefusedError as refusal:
            await _abort(context, refusal)

    async def CancelSeek(  # noqa: N802
        self, request: matchmaking_pb2.CancelSeekRequest, context: Context
    ) -> Message:
        try:
            try:
                request_id = validation.request_id(request.request_id)
                player_id = await self._players.authenticate(
                    list(context.invocation_metadata() or ())
                )
                return await self._seeking.cancel(player_id, request_id)
            except StoreUnavailableError as error:
                raise CallRefusedError.unavailable(
                    f"Goti's store (Redis) cannot be reached ({error}); call CancelSeek again "
                    "after a short backoff"
                ) from error
        except CallRefusedError as refusal:
            await _abort(context, refusal)

    async def GetLeaderboard(  # noqa: N802
        self, request: matchmaking_pb2.GetLeaderboardRequest, context: Context
    ) -> Message:
        try:
            try:
                variant = validation.variant(request.variant) or game_pb2.VARIANT_ENGLISH
                caller = await self._players.identify(list(context.invocation_metadata() or ()))
                return await self._leaderboard.board(variant, caller)
            except StoreUnavailableError as error:
                raise CallRefusedError.unavailable(
                    f"Goti's store (Redis) cannot be reached ({error}); retry after a short backoff"
                ) from error
        except CallRefusedError as refusal:
            await _abort(context, refusal)


def bind_matchmaking(server: grpc.aio.Server, matchmaking: MatchmakingServicer) -> str:
    """Add the matchmaking servicer to ``server``; returns the service's full name."""
    return serving.add_servicer(server, MATCHMAKING_SERVICE, matchmaking)
