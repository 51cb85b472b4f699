"""``goti.api.v1.RefereeService``: requests to :mod:`goti.referee.actions` and back.

The servicer only translates (through :mod:`goti.api.convert`) and maps errors to Goti
statuses: every error of the rules, of the mapping and of the referee's own checks becomes
INVALID_ARGUMENT or FAILED_PRECONDITION with its ``ErrorInfo`` reason.  Anything else is a bug
and is left to surface as one.

:func:`bind` is what the serving harness calls; it registers the servicer through
:func:`goti.serving.add_servicer`, which refuses bytes that are no request as INVALID_REQUEST.
"""

from __future__ import annotations

from typing import Any, Final, Never, TypeAlias

import grpc

from goti import serving
from goti.api import convert
from goti.api.error_status import ErrorStatus
from goti.api.v1 import errors_pb2, referee_pb2, referee_pb2_grpc
from goti.referee import actions
from goti.referee.actions import Action, RequestFieldError
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


async def _refuse(context: Context, error: Exception, field: str | None = None) -> Never:
    """End the call with the Goti status for ``error``; re-raise what has none (a bug)."""
    status = _error_status(error, field)
    if status is None:
        raise error
    if len(status.message) > MAX_STATUS_MESSAGE_CHARS:
        # The message repeats for people what the metadata lists (the legal moves); with
        # many flying-king captures both together would pass the 8 KiB of trailers a gRPC
        # client accepts by default. The metadata keeps the whole list.
        status = status._replace(message=status.message[: MAX_STATUS_MESSAGE_CHARS - 1] + "…")
    await context.abort(status.code, status.message, status.trailing_metadata())


def _game(
    request: referee_pb2.DescribeGameRequest
    | referee_pb2.ListLegalMovesRequest
    | referee_pb2.ApplyRequest
    | referee_pb2.ExportPdnRequest,
) -> Game:
    if not request.HasField("state"):
        raise convert.InvalidFieldError("state is required", field="state")
    return actions.load(convert.game_state_from_proto(request.state))


class RefereeServicer(referee_pb2_grpc.RefereeServiceServicer):
    """The referee's RPCs. Holds nothing between calls."""

    async def StartGame(  # noqa: N802
        self, request: referee_pb2.StartGameRequest, context: Context
    ) -> referee_pb2.StartGameResponse:
        try:
            variant = convert.variant_from_proto(request.variant, default=ENGLISH)
            game = actions.start_game(variant, request.fen)
        except ValueError as error:
            await _refuse(context, error, "fen")
        return referee_pb2.StartGameResponse(
            state=convert.game_state_to_proto(game.state()),
            view=convert.game_view_to_proto(game),
        )

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
        kind = request.WhichOneof("action")
        move_field = _MOVE_FIELDS.get(kind or "")
        record = None
        taken_back: tuple[str, ...] = ()
        try:
            game = _game(request)
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
                taken_back = actions.act(game, action, by)
            else:
                raise convert.InvalidFieldError(
                    "set one of move_path, move_notation or game_action", field="action"
                )
        except ValueError as error:
            await _refuse(context, error, move_field)
        return referee_pb2.ApplyResponse(
            state=convert.game_state_to_proto(game.state()),
            view=convert.game_view_to_proto(game),
            move=None if record is None else convert.move_record_to_proto(record, game.variant),
            taken_back=taken_back,
        )

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


def bind(server: grpc.aio.Server) -> list[str]:
    """Add the referee to ``server``; returns the full name of the service added."""
    return [serving.add_servicer(server, SERVICE, RefereeServicer())]
