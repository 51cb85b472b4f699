"""The tables and players services over Connect and gRPC-Web, from the tables runtime's own
servicers: the same calls, the same refusals with their ErrorInfo, the same streams, and the
same tables as the gRPC server's."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any, cast

import grpc
import pytest
from connectrpc.client import ConnectClient
from connectrpc.code import Code
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.errors import ConnectError
from connectrpc.method import MethodInfo
from connectrpc.protocol import ProtocolType
from google.protobuf.message import Message
from google.rpc import error_details_pb2

from goti.api.v1 import game_pb2, matchmaking_pb2, players_pb2, tables_pb2, tables_pb2_grpc
from goti.tables.matchmaking_servicer import MATCHMAKING_SERVICE
from goti.tables.servicer import PLAYERS_SERVICE, TABLES_SERVICE
from goti.web.adapter import method_info

from .conftest import WebBackend

PROTOCOLS = [ProtocolType.CONNECT, ProtocolType.GRPC_WEB]
SERVICES = (TABLES_SERVICE, PLAYERS_SERVICE, MATCHMAKING_SERVICE)
CALL_TIMEOUT_MS = 30_000


def _method(name: str) -> MethodInfo[Any, Any]:
    [service] = [service for service in SERVICES if name in service.methods_by_name]
    return method_info(service, service.methods_by_name[name])


class BrowserCalls:
    """Calls as a browser makes them, with one player's token."""

    def __init__(self, client: ConnectClient, token: str = "") -> None:
        self.client = client
        self.token = token

    def _headers(self) -> Mapping[str, str]:
        return {"authorization": f"Bearer {self.token}"} if self.token else {}

    async def call(self, method: str, request: Message) -> Any:
        return await self.client.execute_unary(
            request=request,
            method=_method(method),
            headers=self._headers(),
            timeout_ms=CALL_TIMEOUT_MS,
        )

    async def server_stream(self, method: str, request: Message) -> AsyncGenerator[Any, None]:
        """The call's messages; closing this closes the call, as a browser leaving does."""
        stream = self.client.execute_server_stream(
            request=request, method=_method(method), headers=self._headers()
        )
        # The client's stream is an async generator: closed here, not when it is collected.
        async with contextlib.aclosing(cast("AsyncGenerator[Any, None]", stream)) as messages:
            async for message in messages:
                yield message

    def watch_table(self, table_id: str, after_seq: int = 0) -> AsyncGenerator[Any, None]:
        request = tables_pb2.WatchTableRequest(table_id=table_id, after_seq=after_seq)
        return self.server_stream("WatchTable", request)

    def seek(self, request: matchmaking_pb2.SeekRequest) -> AsyncGenerator[Any, None]:
        return self.server_stream("Seek", request)

    async def sign_in(self) -> players_pb2.Player:
        guest = await self.call("CreateGuest", players_pb2.CreateGuestRequest())
        self.token = guest.player_token
        player: players_pb2.Player = guest.player
        return player


@contextlib.asynccontextmanager
async def browser_calls(backend: WebBackend, protocol: ProtocolType) -> AsyncIterator[BrowserCalls]:
    async with ConnectClient(
        backend.url.rstrip("/"),
        codec=google_protobuf_binary_codec(),
        protocol=protocol,
        send_compression=None,
        accept_compression=(),
    ) as client:
        yield BrowserCalls(client)


def reason_of(error: ConnectError) -> tuple[str, dict[str, str]]:
    for detail in error.details:
        if detail.type_name == "google.rpc.ErrorInfo":
            info = error_details_pb2.ErrorInfo.FromString(detail.message_bytes)
            assert info.domain == "goti.api.v1"
            return info.reason, dict(info.metadata)
    raise AssertionError(f"no ErrorInfo in {error!r}")


def request_id() -> str:
    return uuid.uuid4().hex


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=["connect", "grpc-web"])
async def test_a_game_played_through_the_web_port(
    web_backend: WebBackend, protocol: ProtocolType
) -> None:
    async with browser_calls(web_backend, protocol) as calls:
        player = await calls.sign_in()
        me = await calls.call("GetMe", players_pb2.GetMeRequest())
        assert me.player.player_id == player.player_id
        created = await calls.call(
            "CreateTable",
            tables_pb2.CreateTableRequest(
                request_id=request_id(), opponent=tables_pb2.OPPONENT_PASS_AND_PLAY
            ),
        )
        table = created.table
        assert created.your_role == tables_pb2.ROLE_BOTH
        assert table.join_url == f"{web_backend.url}join/{table.code}"

        stream = calls.watch_table(table.table_id)
        first = await anext(stream)
        assert first.WhichOneof("message") == "snapshot"
        move = table.game.turn.legal_moves[0]
        played = await calls.call(
            "Play",
            tables_pb2.PlayRequest(
                table_id=table.table_id,
                request_id=request_id(),
                expected_seq=table.seq,
                notation=move.notation,
            ),
        )
        assert [event.seq for event in played.events] == [1]
        second = await anext(stream)
        assert second.event.move_played.record.move.notation == move.notation
        await stream.aclose()


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=["connect", "grpc-web"])
async def test_refusals_carry_the_goti_reason(
    web_backend: WebBackend, protocol: ProtocolType
) -> None:
    async with browser_calls(web_backend, protocol) as calls:
        with pytest.raises(ConnectError) as no_token:
            await calls.call("GetMe", players_pb2.GetMeRequest())
        assert no_token.value.code is Code.UNAUTHENTICATED
        assert reason_of(no_token.value)[0] == "TOKEN_REQUIRED"

        await calls.sign_in()
        created = await calls.call(
            "CreateTable",
            tables_pb2.CreateTableRequest(
                request_id=request_id(), opponent=tables_pb2.OPPONENT_PASS_AND_PLAY
            ),
        )
        with pytest.raises(ConnectError) as illegal:
            await calls.call(
                "Play",
                tables_pb2.PlayRequest(
                    table_id=created.table.table_id,
                    request_id=request_id(),
                    expected_seq=0,
                    notation="21-17",
                ),
            )
        assert illegal.value.code is Code.INVALID_ARGUMENT
        reason, metadata = reason_of(illegal.value)
        assert reason == "ILLEGAL_MOVE"
        assert "9-13" in metadata["legalMoves"].split(",")

        with pytest.raises(ConnectError) as missing:
            await calls.call("GetTable", tables_pb2.GetTableRequest(table_id="no-such-table"))
        assert missing.value.code is Code.NOT_FOUND
        assert reason_of(missing.value) == ("TABLE_NOT_FOUND", {"field": "table_id"})


async def test_the_web_port_and_grpc_share_the_tables(web_backend: WebBackend) -> None:
    async with (
        browser_calls(web_backend, ProtocolType.CONNECT) as calls,
        grpc.aio.insecure_channel(web_backend.grpc_target) as channel,
    ):
        await calls.sign_in()
        created = await calls.call(
            "CreateTable",
            tables_pb2.CreateTableRequest(
                request_id=request_id(), opponent=tables_pb2.OPPONENT_PASS_AND_PLAY
            ),
        )
        table = created.table
        tables = tables_pb2_grpc.TablesServiceStub(channel)
        native = tables.WatchTable(tables_pb2.WatchTableRequest(table_id=table.table_id))
        responses = aiter(native)
        assert (await anext(responses)).WhichOneof("message") == "snapshot"
        move = table.game.turn.legal_moves[0]
        await calls.call(
            "Play",
            tables_pb2.PlayRequest(
                table_id=table.table_id,
                request_id=request_id(),
                expected_seq=table.seq,
                path=game_pb2.MovePath(squares=move.path),
            ),
        )
        seen = await asyncio.wait_for(anext(responses), 30)
        assert seen.event.move_played.record.move.notation == move.notation
        native.cancel()
        # And the reverse: the web port reads what gRPC wrote.
        read = await calls.call("GetTable", tables_pb2.GetTableRequest(table_id=table.table_id))
        assert list(read.table.game.moves) == [move.notation]
        assert read.your_role == tables_pb2.ROLE_BOTH
