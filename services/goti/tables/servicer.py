"""``goti.api.v1.TablesService`` and ``goti.api.v1.PlayersService``: requests to the tables'
readers, openers and commands, the players and the watch streams, and their answers back;
refusals to Goti statuses.

The servicers only translate: they check the request's fields
(:mod:`goti.tables.validation`), find the caller from the ``authorization`` metadata, map a
command's request to its typed :mod:`goti.tables.commands` value, call one domain method and
wrap its result.  Every refusal leaves with its Goti status, a store or
peer that does not answer with UNAVAILABLE (reason BACKEND_UNAVAILABLE), a shutdown with
UNAVAILABLE so that streams reconnect elsewhere.

:func:`bind_services` registers both services through :func:`goti.serving.add_servicer`,
which refuses bytes that are no request as INVALID_REQUEST.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import Any, Final, Never, TypeAlias

import grpc
from google.protobuf.message import Message

from goti import serving
from goti.api.v1 import (
    players_pb2,
    referee_pb2,
    tables_pb2,
)
from goti.tables import commands, validation
from goti.tables.loading import TableReader
from goti.tables.opening import TableOpener
from goti.tables.players import Players
from goti.tables.playing import CommandRunner
from goti.tables.redis_calls import StoreUnavailableError
from goti.tables.refusals import CallRefusedError
from goti.tables.watching import ShuttingDownError, Watching

Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"

TABLES_SERVICE: Final = tables_pb2.DESCRIPTOR.services_by_name["TablesService"]
PLAYERS_SERVICE: Final = players_pb2.DESCRIPTOR.services_by_name["PlayersService"]


def _store_unavailable(error: StoreUnavailableError) -> CallRefusedError:
    return CallRefusedError.unavailable(
        f"Goti's table store (Redis) cannot be reached ({error}); "
        "retry with the same request_id after a short backoff"
    )


_SHUTTING_DOWN: Final = CallRefusedError.unavailable(
    "this server is shutting down: reconnect (another replica will answer) and resume "
    "from the last seq you have"
)


async def _abort(context: Context, refusal: CallRefusedError) -> Never:
    status = refusal.status
    await context.abort(status.code, status.message, status.trailing_metadata())
    raise AssertionError("abort returns only by raising")


@contextlib.contextmanager
def _refusals() -> Iterator[None]:
    """Turn every expected failure into a :class:`CallRefusedError`."""
    try:
        yield
    except StoreUnavailableError as error:
        raise _store_unavailable(error) from error
    except ShuttingDownError:
        raise _SHUTTING_DOWN from None


async def _answer(context: Context, work: Awaitable[Message]) -> Message:
    try:
        with _refusals():
            return await work
    except CallRefusedError as refusal:
        await _abort(context, refusal)


def _metadata(context: Context) -> list[tuple[str, str | bytes]]:
    return list(context.invocation_metadata() or ())


class TablesServicer:
    """The public tables API."""

    def __init__(
        self,
        reader: TableReader,
        opener: TableOpener,
        runner: CommandRunner,
        players: Players,
        watching: Watching,
    ) -> None:
        self._reader = reader
        self._opener = opener
        self._runner = runner
        self._players = players
        self._watching = watching

    async def CreateTable(  # noqa: N802
        self, request: tables_pb2.CreateTableRequest, context: Context
    ) -> Message:
        async def work() -> tables_pb2.CreateTableResponse:
            player_id = await self._players.authenticate(_metadata(context))
            options = self._reader.options
            seated = await self._opener.create_table(
                player_id,
                validation.request_id(request.request_id),
                validation.fingerprint("CreateTable", request),
                variant=validation.variant(request.variant),
                starting_player=validation.starting_player(request.starting_player),
                opponent=validation.opponent(request.opponent),
                visibility=validation.visibility(request.visibility),
                turn_timer_seconds=validation.turn_timer_seconds(
                    request.turn_timer_seconds, options.min_turn_timer_seconds
                ),
            )
            return tables_pb2.CreateTableResponse(table=seated.table, your_role=seated.role)

        return await _answer(context, work())

    async def JoinTable(  # noqa: N802
        self, request: tables_pb2.JoinTableRequest, context: Context
    ) -> Message:
        async def work() -> tables_pb2.JoinTableResponse:
            player_id = await self._players.authenticate(_metadata(context))
            validation.request_id(request.request_id)
            seated = await self._opener.join_table(player_id, validation.code(request.code))
            return tables_pb2.JoinTableResponse(table=seated.table, your_role=seated.role)

        return await _answer(context, work())

    async def GetTable(  # noqa: N802
        self, request: tables_pb2.GetTableRequest, context: Context
    ) -> Message:
        async def work() -> tables_pb2.GetTableResponse:
            metadata = _metadata(context)
            player_id = await self._players.identify(metadata)
            table_id, code = validation.table_by(request.table_id, request.code)
            if code:
                address = self._players.client_address(context.peer(), metadata)
                table_id = await self._opener.find_table(code, player_id, address)
            seated = await self._reader.get_table(table_id, player_id)
            return tables_pb2.GetTableResponse(table=seated.table, your_role=seated.role)

        return await _answer(context, work())

    async def ListTables(  # noqa: N802
        self, request: tables_pb2.ListTablesRequest, context: Context
    ) -> Message:
        async def work() -> tables_pb2.ListTablesResponse:
            found, token = await self._reader.list_tables(
                validation.variant(request.variant),
                validation.page_size(request.page_size),
                validation.page_token(request.page_token),
            )
            return tables_pb2.ListTablesResponse(tables=found, next_page_token=token)

        return await _answer(context, work())

    async def WatchLobby(  # noqa: N802
        self, request: tables_pb2.WatchLobbyRequest, context: Context
    ) -> AsyncIterator[Message]:
        try:
            with _refusals():
                stream = self._watching.lobby(validation.variant(request.variant))
                async with contextlib.aclosing(stream):
                    async for message in stream:
                        yield message
        except CallRefusedError as refusal:
            await _abort(context, refusal)

    async def WatchTable(  # noqa: N802
        self, request: tables_pb2.WatchTableRequest, context: Context
    ) -> AsyncIterator[Message]:
        try:
            with _refusals():
                table_id = validation.table_id(request.table_id)
                player_id = await self._players.identify(_metadata(context))
                stream = self._watching.table(table_id, request.after_seq, player_id)
                async with contextlib.aclosing(stream):
                    async for message in stream:
                        yield message
        except CallRefusedError as refusal:
            await _abort(context, refusal)

    async def _envelope(
        self,
        context: Context,
        request: tables_pb2.PlayRequest
        | tables_pb2.OfferDrawRequest
        | tables_pb2.AnswerDrawRequest
        | tables_pb2.ResignRequest
        | tables_pb2.TakeBackRequest
        | tables_pb2.RematchRequest,
        method: str,
    ) -> commands.Envelope:
        return commands.Envelope(
            await self._players.authenticate(_metadata(context)),
            validation.table_id(request.table_id),
            validation.request_id(request.request_id),
            request.expected_seq,
            validation.fingerprint(method, request),
        )

    async def Play(self, request: tables_pb2.PlayRequest, context: Context) -> Message:  # noqa: N802
        async def work() -> tables_pb2.PlayResponse:
            move = commands.Move(
                validation.side(request.side),
                tuple(request.path.squares) if request.WhichOneof("move") == "path" else None,
                request.notation,
            )
            validation.move(request)
            envelope = await self._envelope(context, request, "Play")
            return tables_pb2.PlayResponse(events=await self._runner.run(envelope, move))

        return await _answer(context, work())

    async def OfferDraw(  # noqa: N802
        self, request: tables_pb2.OfferDrawRequest, context: Context
    ) -> Message:
        async def work() -> tables_pb2.OfferDrawResponse:
            offer = commands.GameAction(
                validation.side(request.side), referee_pb2.GAME_ACTION_OFFER_DRAW
            )
            envelope = await self._envelope(context, request, "OfferDraw")
            return tables_pb2.OfferDrawResponse(events=await self._runner.run(envelope, offer))

        return await _answer(context, work())

    async def AnswerDraw(  # noqa: N802
        self, request: tables_pb2.AnswerDrawRequest, context: Context
    ) -> Message:
        async def work() -> tables_pb2.AnswerDrawResponse:
            answer = commands.GameAction(
                validation.side(request.side),
                referee_pb2.GAME_ACTION_ACCEPT_DRAW
                if request.accept
                else referee_pb2.GAME_ACTION_DECLINE_DRAW,
            )
            envelope = await self._envelope(context, request, "AnswerDraw")
            return tables_pb2.AnswerDrawResponse(events=await self._runner.run(envelope, answer))

        return await _answer(context, work())

    async def Resign(self, request: tables_pb2.ResignRequest, context: Context) -> Message:  # noqa: N802
        async def work() -> tables_pb2.ResignResponse:
            resign = commands.GameAction(
                validation.side(request.side), referee_pb2.GAME_ACTION_RESIGN
            )
            envelope = await self._envelope(context, request, "Resign")
            return tables_pb2.ResignResponse(events=await self._runner.run(envelope, resign))

        return await _answer(context, work())

    async def TakeBack(  # noqa: N802
        self, request: tables_pb2.TakeBackRequest, context: Context
    ) -> Message:
        async def work() -> tables_pb2.TakeBackResponse:
            envelope = await self._envelope(context, request, "TakeBack")
            appended = await self._runner.run(envelope, commands.TakeBack())
            return tables_pb2.TakeBackResponse(events=appended)

        return await _answer(context, work())

    async def Rematch(self, request: tables_pb2.RematchRequest, context: Context) -> Message:  # noqa: N802
        async def work() -> tables_pb2.RematchResponse:
            envelope = await self._envelope(context, request, "Rematch")
            rematch = await self._runner.rematch(envelope)
            response = tables_pb2.RematchResponse(events=rematch.events)
            if rematch.table is not None:
                response.rematch_table.CopyFrom(rematch.table.table)
                response.your_role = rematch.table.role
            return response

        return await _answer(context, work())

    async def GetRecord(  # noqa: N802
        self, request: tables_pb2.GetRecordRequest, context: Context
    ) -> Message:
        async def work() -> tables_pb2.GetRecordResponse:
            record = await self._reader.get_record(validation.table_id(request.table_id))
            return tables_pb2.GetRecordResponse(
                game=record.game, pdn=record.pdn, white=record.white, black=record.black
            )

        return await _answer(context, work())


class PlayersServicer:
    """Guest players."""

    def __init__(self, players: Players) -> None:
        self._players = players

    async def CreateGuest(  # noqa: N802
        self, request: players_pb2.CreateGuestRequest, context: Context
    ) -> Message:
        async def work() -> players_pb2.CreateGuestResponse:
            name = request.display_name
            if name:
                name = validation.display_name(name)
            address = self._players.client_address(context.peer(), _metadata(context))
            player, token = await self._players.create_guest(name, address)
            return players_pb2.CreateGuestResponse(player=player, player_token=token)

        return await _answer(context, work())

    async def GetMe(self, request: players_pb2.GetMeRequest, context: Context) -> Message:  # noqa: N802
        async def work() -> players_pb2.GetMeResponse:
            me = await self._players.me(await self._players.authenticate(_metadata(context)))
            return players_pb2.GetMeResponse(
                player=me.player, streaks=me.streaks, ratings=me.rating_messages()
            )

        return await _answer(context, work())

    async def SetDisplayName(  # noqa: N802
        self, request: players_pb2.SetDisplayNameRequest, context: Context
    ) -> Message:
        async def work() -> players_pb2.SetDisplayNameResponse:
            player_id = await self._players.authenticate(_metadata(context))
            player = await self._players.set_display_name(
                player_id, validation.display_name(request.display_name)
            )
            return players_pb2.SetDisplayNameResponse(player=player)

        return await _answer(context, work())


# -- registration ---------------------------------------------------------------------------


def bind_services(
    server: grpc.aio.Server, tables: TablesServicer, players: PlayersServicer
) -> list[str]:
    """Add the tables and players servicers to ``server``; returns the services' full names."""
    return [
        serving.add_servicer(server, TABLES_SERVICE, tables),
        serving.add_servicer(server, PLAYERS_SERVICE, players),
    ]
