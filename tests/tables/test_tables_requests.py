"""Malformed and oversized requests: INVALID_ARGUMENT naming the field, never INTERNAL."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import grpc
import pytest

from goti.api.v1 import players_pb2, players_pb2_grpc, tables_pb2, tables_pb2_grpc

from .table_calls import CALL_TIMEOUT, new_guest, new_request_id, refusal


def _play(**fields: Any) -> tables_pb2.PlayRequest:
    fields.setdefault("table_id", "t" * 22)
    fields.setdefault("request_id", new_request_id())
    if "path" not in fields:
        fields.setdefault("notation", "11-15")
    return tables_pb2.PlayRequest(**fields)


@pytest.mark.parametrize(
    ("request_message", "reason", "field"),
    [
        (_play(table_id=""), "INVALID_REQUEST", "table_id"),
        (_play(table_id="a/b"), "INVALID_REQUEST", "table_id"),
        (_play(table_id="x" * 33), "INVALID_REQUEST", "table_id"),
        (_play(request_id=""), "INVALID_REQUEST", "request_id"),
        (_play(request_id="r" * 65), "INVALID_REQUEST", "request_id"),
        (_play(request_id="not a uuid!"), "INVALID_REQUEST", "request_id"),
        (_play(side=7), "INVALID_REQUEST", "side"),
        (_play(notation="1" * 65), "REQUEST_TOO_LARGE", "notation"),
        (_play(path={"squares": list(range(1, 15))}), "REQUEST_TOO_LARGE", "path.squares"),
        (tables_pb2.PlayRequest(table_id="t" * 22, request_id="r"), "INVALID_REQUEST", "move"),
    ],
)
async def test_malformed_moves_name_their_field(
    channel: grpc.aio.Channel,
    request_message: tables_pb2.PlayRequest,
    reason: str,
    field: str,
) -> None:
    ann = await new_guest(channel)
    status = await refusal(
        ann.tables.Play(request_message, metadata=ann.metadata, timeout=CALL_TIMEOUT)
    )
    assert (status.code, status.reason) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
    assert status.metadata["field"] == field
    if reason == "REQUEST_TOO_LARGE":
        assert int(status.metadata["limit"]) > 0


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"variant": 9}, "variant"),
        ({"starting_player": 5}, "starting_player"),
        ({"opponent": 42}, "opponent"),
        ({"opponent": 7}, "opponent"),  # the first value past OPPONENT_COMPUTER_MASTER
        ({"visibility": 3}, "visibility"),
        ({"turn_timer_seconds": 86_401}, "turn_timer_seconds"),
        ({"request_id": "x" * 65}, "request_id"),
    ],
)
async def test_malformed_tables_name_their_field(
    channel: grpc.aio.Channel, fields: dict[str, Any], field: str
) -> None:
    ann = await new_guest(channel)
    status = await refusal(ann.create(**fields))
    assert (status.code, status.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert status.metadata["field"] == field


async def test_reading_calls_check_their_fields_too(channel: grpc.aio.Channel) -> None:
    tables = tables_pb2_grpc.TablesServiceStub(channel)
    players = players_pb2_grpc.PlayersServiceStub(channel)
    cases: list[tuple[Awaitable[object], str]] = [
        (tables.GetTable(tables_pb2.GetTableRequest(table_id="{bad}")), "table_id"),
        (tables.ListTables(tables_pb2.ListTablesRequest(page_size=201)), "page_size"),
        (tables.ListTables(tables_pb2.ListTablesRequest(page_token="garbage!")), "page_token"),
        (tables.ListTables(tables_pb2.ListTablesRequest(variant=5)), "variant"),  # type: ignore[arg-type]
        (tables.GetRecord(tables_pb2.GetRecordRequest()), "table_id"),
        (
            players.CreateGuest(players_pb2.CreateGuestRequest(display_name="x" * 25)),
            "display_name",
        ),
        (
            players.CreateGuest(players_pb2.CreateGuestRequest(display_name="a\x07b")),
            "display_name",
        ),
    ]
    for call, field in cases:
        status = await refusal(call)
        assert (status.code, status.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
        assert status.metadata["field"] == field
    status = await refusal(tables.GetTable(tables_pb2.GetTableRequest(table_id="nosuchtable")))
    assert (status.code, status.reason) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")
    ann = await new_guest(channel)
    status = await refusal(ann.join("not-a-code!"))
    assert (status.reason, status.metadata["field"]) == ("INVALID_REQUEST", "code")


async def test_a_bad_watch_request_ends_the_stream_with_the_reason(
    channel: grpc.aio.Channel,
) -> None:
    tables = tables_pb2_grpc.TablesServiceStub(channel)

    async def first_message(request: tables_pb2.WatchTableRequest) -> None:
        async for _ in tables.WatchTable(request, timeout=CALL_TIMEOUT):
            pass

    status = await refusal(first_message(tables_pb2.WatchTableRequest(table_id="bad id")))
    assert (status.reason, status.metadata["field"]) == ("INVALID_REQUEST", "table_id")
    status = await refusal(first_message(tables_pb2.WatchTableRequest(table_id="missing")))
    assert status.reason == "TABLE_NOT_FOUND"
    status = await refusal(
        first_message(tables_pb2.WatchTableRequest(table_id="missing", after_seq=3))
    )
    assert status.reason == "TABLE_NOT_FOUND"


@pytest.mark.parametrize(
    "method", ["/goti.api.v1.TablesService/Play", "/goti.api.v1.PlayersService/CreateGuest"]
)
async def test_bytes_that_are_no_request_are_invalid(
    channel: grpc.aio.Channel, method: str
) -> None:
    call = channel.unary_unary(method, request_serializer=bytes, response_deserializer=bytes)
    status = await refusal(call(b"\xff\xff\xff garbage", timeout=CALL_TIMEOUT))
    assert (status.code, status.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert status.metadata["field"] == ""


async def test_a_request_over_the_transport_limit_is_resource_exhausted(
    channel: grpc.aio.Channel,
) -> None:
    ann = await new_guest(channel)
    huge = _play(notation="x" * (2 * 1024 * 1024))
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await ann.tables.Play(huge, metadata=ann.metadata, timeout=CALL_TIMEOUT)
    assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
