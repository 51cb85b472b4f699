"""The lobby: open public tables listed newest first, page by page, and live."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import grpc

from goti.api.v1 import game_pb2, tables_pb2, tables_pb2_grpc

from .table_calls import CALL_TIMEOUT, eventually, new_guest


async def test_open_public_tables_are_listed_newest_first_in_pages(
    channel: grpc.aio.Channel,
) -> None:
    ann = await new_guest(channel, "Ann")
    public = tables_pb2.VISIBILITY_PUBLIC
    english = [(await ann.create(visibility=public)).table for _ in range(5)]
    russian = (await ann.create(visibility=public, variant=game_pb2.VARIANT_RUSSIAN)).table
    await ann.create()  # private: never listed
    await ann.create(visibility=public, opponent=tables_pb2.OPPONENT_PASS_AND_PLAY)  # not waiting
    tables = tables_pb2_grpc.TablesServiceStub(channel)

    everything = await tables.ListTables(tables_pb2.ListTablesRequest(), timeout=CALL_TIMEOUT)
    ids = [listed.table_id for listed in everything.tables]
    assert ids == [russian.table_id] + [table.table_id for table in reversed(english)]
    assert not everything.next_page_token
    first = everything.tables[0]
    assert first.code == russian.code and first.host.display_name == "Ann"
    assert first.open_color in (game_pb2.COLOR_WHITE, game_pb2.COLOR_BLACK)

    paged: list[str] = []
    token = ""
    while True:
        page = await tables.ListTables(
            tables_pb2.ListTablesRequest(
                variant=game_pb2.VARIANT_ENGLISH, page_size=2, page_token=token
            ),
            timeout=CALL_TIMEOUT,
        )
        assert len(page.tables) <= 2
        paged += [listed.table_id for listed in page.tables]
        token = page.next_page_token
        if not token:
            break
    assert paged == [table.table_id for table in reversed(english)]
    exact = await tables.ListTables(
        tables_pb2.ListTablesRequest(variant=game_pb2.VARIANT_ENGLISH, page_size=5),
        timeout=CALL_TIMEOUT,
    )
    assert len(exact.tables) == 5 and not exact.next_page_token

    bob = await new_guest(channel, "Bob")
    await bob.join(english[0].code)
    after = await tables.ListTables(tables_pb2.ListTablesRequest(), timeout=CALL_TIMEOUT)
    assert english[0].table_id not in [listed.table_id for listed in after.tables]


@contextlib.asynccontextmanager
async def _lobby(
    channel: grpc.aio.Channel, variant: game_pb2.Variant.ValueType = game_pb2.VARIANT_UNSPECIFIED
) -> AsyncIterator[list[tables_pb2.WatchLobbyResponse]]:
    tables = tables_pb2_grpc.TablesServiceStub(channel)
    received: list[tables_pb2.WatchLobbyResponse] = []
    call = tables.WatchLobby(tables_pb2.WatchLobbyRequest(variant=variant))

    async def read() -> None:
        async for message in call:
            received.append(message)

    reader = asyncio.ensure_future(read())
    await eventually(lambda: bool(received))
    try:
        yield received
    finally:
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
            await reader


def _changes(received: list[tables_pb2.WatchLobbyResponse]) -> list[tables_pb2.WatchLobbyResponse]:
    """What a lobby stream said, less its heartbeats (which come whenever a step is slow)."""
    return [message for message in received if not message.HasField("heartbeat")]


async def test_the_lobby_updates_live(channel: grpc.aio.Channel) -> None:
    ann = await new_guest(channel, "Ann")
    already = (await ann.create(visibility=tables_pb2.VISIBILITY_PUBLIC)).table
    async with _lobby(channel) as lobby, _lobby(channel, game_pb2.VARIANT_RUSSIAN) as russian:
        assert [listed.table_id for listed in lobby[0].snapshot.tables] == [already.table_id]
        assert russian[0].snapshot.tables == []
        opened = (await ann.create(visibility=tables_pb2.VISIBILITY_PUBLIC)).table
        await ann.create()  # private
        await eventually(lambda: len(_changes(lobby)) >= 2)
        assert _changes(lobby)[1].table_opened.table_id == opened.table_id
        bob = await new_guest(channel, "Bob")
        await bob.join(opened.code)
        await eventually(lambda: len(_changes(lobby)) >= 3)
        assert _changes(lobby)[2].table_closed == opened.table_id
        shashki = (
            await ann.create(
                visibility=tables_pb2.VISIBILITY_PUBLIC, variant=game_pb2.VARIANT_RUSSIAN
            )
        ).table
        await eventually(lambda: len(_changes(russian)) >= 2 and len(_changes(lobby)) >= 4)
        assert _changes(russian)[1].table_opened.table_id == shashki.table_id
        # Heartbeats keep the stream alive while nothing happens.
        await eventually(lambda: any(message.HasField("heartbeat") for message in lobby))
    # Tables of other variants never reach a filtered stream, opening or closing.
    assert all(
        message.table_opened.variant == game_pb2.VARIANT_RUSSIAN
        for message in russian
        if message.HasField("table_opened")
    )
    assert not any(message.HasField("table_closed") for message in russian)
