"""``goti.api.v1.RefereeService``: requests to :mod:`goti.referee.actions` and back.

The servicer only translates (through :mod:`goti.api.convert`) and maps errors to Goti
statuses: every error of the rules, of the mapping and of the referee's own checks becomes
INVALID_ARGUMENT or FAILED_PRECONDITION with its ``ErrorInfo`` reason.  Anything else is a bug
and is left to surface as one.

:func:`bind` is what the serving harness calls; it registers the servicer through
:func:`goti.serving.add_servicer`, which refuses bytes that are no request as INVALID_REQUEST.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Final, Never, TypeAlias

import grpc

from goti import serving
from goti.api import convert
from goti.api.error_status import ErrorStatus
from goti.api.v1 import errors_pb2, referee_pb2, referee_pb2_grpc
from goti.referee import actions
from goti.referee.actions import Action, RequestFieldError
from goti.referee.answered import AnsweredStates
from goti.rules.game import Game
from goti.rules.variants import ENGLISH

Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"

SERVICE: Final = referee_pb2.DESCRIPTOR.services_by_name["RefereeService"]
SERVICE_NAME: Final[str] = SERVICE.full_name

_ACTIONS: Final[dict[int, Action]] = {
    referee_pb2.GAME_ACTION_OFFER_DRAW: Action.OFFER_DRAW,
    referee_pb2.GAME_ACTION_ACCEPT_DRAW: Action.ACCEPT_DRAW,
    referee_pb2.GAME_ACTION_DECLINE_DRAW: Action.DECLINE_DRAW,
    referee_pb2.GAME_ACTION_RESIGN: Action.RESIGN,
    referee_pb2.GAME_ACTION_TAKE_BACK: Action.TAKE_BACK,
}

MAX_STATUS_MESSAGE_CHARS: Final = 400
"""Longest status message sent; longer ones are cut short."""

# The request field a move error is about, by the `action` oneof member that is set.
_MOVE_FIELDS: Final = {"move_path": "move_path.squares", "move_notation": "move_notation"}


def _error_status(error: Exception, field: str | None) -> ErrorStatus | None:
    if isinstance(error, RequestFieldError):
        if error.limit is not None:
            return ErrorStatus.of(
                errors_pb2.ERROR_REASON_REQUEST_TOO_LARGE,
                str(error),
                field=error.field,
                limit=error.limit,
            )
        return ErrorStatus.of(
            errors_pb2.ERROR_REASON_INVALID_REQUEST, str(error), field=error.field
        )
    return convert.rules_error_status(error, field=field)


def _refusal(error: Exception, field: str | None = None) -> ErrorStatus:
    """The Goti status for ``error``; re-raises what has none (a bug)."""
    status = _error_status(error, field)
    if status is None:
        raise error
    if len(status.message) > MAX_STATUS_MESSAGE_CHARS:
        # The message repeats for people what the metadata lists (the legal moves); with
        # many flying-king captures both together would pass the 8 KiB of trailers a gRPC
        # client accepts by default. The metadata keeps the whole list.
        status = status._replace(message=status.message[: MAX_STATUS_MESSAGE_CHARS - 1] + "…")
    return status


async def _abort(context: Context, status: ErrorStatus) -> Never:
    await context.abort(status.code, status.message, status.trailing_metadata())


async def _refuse(context: Context, error: Exception, field: str | None = None) -> Never:
    """End the call with the Goti status for ``error``; re-raise what has none (a bug)."""
    await _abort(context, _refusal(error, field))


def _game(
    request: referee_pb2.DescribeGameRequest
    | referee_pb2.ListLegalMovesRequest
    | referee_pb2.ApplyRequest
    | referee_pb2.ExportPdnRequest,
    answered: AnsweredStates | None = None,
) -> Game:
    if not request.HasField("state"):
        raise convert.InvalidFieldError("state is required", field="state")
    known = None if answered is None else answered.find(request.state)
    if known is not None:
        return actions.resumed(known)
    return actions.checked(convert.game_from_proto(request.state))


def apply(
    request: referee_pb2.ApplyRequest,
    response: referee_pb2.ApplyResponse,
    answered: AnsweredStates | None = None,
) -> ErrorStatus | None:
    """Apply's whole ruling, unary or streamed: fills ``response`` with the game after the
    action, or returns the refusal (leaving ``response`` to be dropped).  With ``answered``,
    a state this referee answered with lately is taken from there, and the new one kept."""
    kind = request.WhichOneof("action")
    record = None
    try:
        game = _game(request, answered)
        if kind == "move_path":
            by = convert.optional_color_from_proto(request.side, field="side")
            path = convert.move_path_from_proto(request.move_path)
            record = actions.play(game, path, by, field="move_path.squares")
        elif kind == "move_notation":
            by = convert.optional_color_from_proto(request.side, field="side")
            record = actions.play(game, request.move_notation, by, field="move_notation")
        elif kind == "game_action":
            action = _ACTIONS.get(request.game_action)
            if action is None:
                raise convert.InvalidFieldError(
                    f"game_action {request.game_action} is not an action", field="game_action"
                )
            by = convert.color_from_proto(request.side, field="side")
            response.taken_back.extend(actions.act(game, action, by))
        else:
            raise convert.InvalidFieldError(
                "set one of move_path, move_notation or game_action", field="action"
            )
    except ValueError as error:
        return _refusal(error, _MOVE_FIELDS.get(kind or ""))
    response.state.CopyFrom(convert.game_state_to_proto(game.state()))
    if answered is not None:
        answered.remember(response.state, game.state())
    response.view.CopyFrom(convert.game_view_to_proto(game))
    if record is not None:
        response.move.CopyFrom(convert.move_record_to_proto(record, game.variant))
    return None


_STOPPING: Final = "the referee is stopping: send again on a new stream"


class RefereeServicer(referee_pb2_grpc.RefereeServiceServicer):
    """The referee's RPCs. Holds nothing between calls but its open ApplyStreams, which
    :meth:`stop` ends, and the states it answered StartGame and Apply with lately (a cache:
    any replica rules the same on any state)."""

    def __init__(self) -> None:
        self._stopping = False
        self._streams: set[asyncio.Task[None]] = set()
        self._answered = AnsweredStates()

    async def StartGame(  # noqa: N802
        self, request: referee_pb2.StartGameRequest, context: Context
    ) -> referee_pb2.StartGameResponse:
        try:
            variant = convert.variant_from_proto(request.variant, default=ENGLISH)
            game = actions.start_game(variant, request.fen)
        except ValueError as error:
            await _refuse(context, error, "fen")
        response = referee_pb2.StartGameResponse(
            state=convert.game_state_to_proto(game.state()),
            view=convert.game_view_to_proto(game),
        )
        # A new game's first move brings this state back, as later moves bring Apply's.
        self._answered.remember(response.state, game.state())
        return response

    async def DescribeGame(  # noqa: N802
        self, request: referee_pb2.DescribeGameRequest, context: Context
    ) -> referee_pb2.DescribeGameResponse:
        try:
            game = _game(request)
        except ValueError as error:
            await _refuse(context, error)
        return referee_pb2.DescribeGameResponse(view=convert.game_view_to_proto(game))

    async def ListLegalMoves(  # noqa: N802
        self, request: referee_pb2.ListLegalMovesRequest, context: Context
    ) -> referee_pb2.ListLegalMovesResponse:
        try:
            game = _game(request)
        except ValueError as error:
            await _refuse(context, error)
        variant = game.variant
        return referee_pb2.ListLegalMovesResponse(
            side=convert.color_to_proto(game.turn),
            legal_moves=[convert.move_to_proto(move, variant) for move in game.legal_moves],
            must_capture=game.must_capture,
        )

    async def Apply(  # noqa: N802
        self, request: referee_pb2.ApplyRequest, context: Context
    ) -> referee_pb2.ApplyResponse:
        response = referee_pb2.ApplyResponse()
        refusal = apply(request, response, self._answered)
        if refusal is not None:
            await _abort(context, refusal)
        return response

    # A coroutine that writes its answers, where the generated base declares a generator:
    # a task of its own answers, which stop() can cancel while it waits for a request.
    async def ApplyStream(  # type: ignore[override]  # noqa: N802
        self, requests: AsyncIterator[referee_pb2.ApplyStreamRequest], context: Context
    ) -> None:
        if self._stopping:
            await context.abort(grpc.StatusCode.UNAVAILABLE, _STOPPING)
        answering = asyncio.ensure_future(self._answer(requests, context))
        self._streams.add(answering)
        try:
            await answering
        except asyncio.CancelledError:
            # stop() cancels the answering; a cancelled call cancels this task too.
            current = asyncio.current_task()
            if not self._stopping or (current is not None and current.cancelling()):
                raise
        finally:
            self._streams.discard(answering)
        if self._stopping:
            await context.abort(grpc.StatusCode.UNAVAILABLE, _STOPPING)

    async def _answer(
        self, requests: AsyncIterator[referee_pb2.ApplyStreamRequest], context: Context
    ) -> None:
        """Answer each request in turn, until the caller stops sending."""
        observer = serving.carried_call_observer("Apply")
        async for streamed in requests:
            started_at = observer.start()
            answer = referee_pb2.ApplyStreamResponse(call_id=streamed.call_id)
            refusal = apply(streamed.request, answer.response, self._answered)
            if refusal is None:
                observer.finish(started_at, grpc.StatusCode.OK)
            else:
                answer.refusal = refusal.to_proto().SerializeToString()
                observer.finish(started_at, refusal.code)
            await context.write(answer)

    async def stop(self) -> None:
        """End every ApplyStream with UNAVAILABLE, now and from now on, so that callers send
        what is unanswered again elsewhere (the harness's drain: gRPC has sent its GOAWAYs,
        and the streams would otherwise hold the stop for its whole grace period)."""
        self._stopping = True
        for answering in list(self._streams):
            answering.cancel()
        await asyncio.gather(*self._streams, return_exceptions=True)

    async def ExportPdn(  # noqa: N802
        self, request: referee_pb2.ExportPdnRequest, context: Context
    ) -> referee_pb2.ExportPdnResponse:
        try:
            game = _game(request)
            # Map order is arbitrary; sorted, the same game always reads the same.
            pdn = actions.export_pdn(game, dict(sorted(request.tags.items())))
        except ValueError as error:
            await _refuse(context, error)
        return referee_pb2.ExportPdnResponse(pdn=pdn)


# -- registration ---------------------------------------------------------------------------


class RefereeService:
    """The referee as the harness serves it: :meth:`bind` adds it to a server and
    :meth:`drain` ends its streams when that server stops."""

    def __init__(self) -> None:
        self._servicer = RefereeServicer()

    def bind(self, server: grpc.aio.Server) -> list[str]:
        """Add the referee to ``server``; returns the full name of the service added."""
        return [serving.add_servicer(server, SERVICE, self._servicer)]

    async def drain(self) -> None:
        """End the ApplyStreams, which callers resume on other replicas."""
        await self._servicer.stop()


def bind(server: grpc.aio.Server) -> list[str]:
    """Add a referee to ``server`` whose streams end only when the server cuts them (tests
    that stop their referee at once); a server stopped gracefully needs
    :class:`RefereeService`'s drain too."""
    return RefereeService().bind(server)
