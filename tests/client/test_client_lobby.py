"""The lobby through the SDK: listed tables, and live changes as tables open and fill."""

from __future__ import annotations

import asyncio

from goti.rules import RUSSIAN, Color
from goti_client import (
    LobbySnapshot,
    LobbyUpdate,
    MovePlayed,
    StartingPlayer,
    TableClosed,
    TableOpened,
)
from goti_client.watches import TableWatch

from .conftest import Clients

WAIT_SECONDS = 30.0


async def test_a_public_table_opens_in_the_lobby_and_leaves_it_when_joined(
    clients: Clients,
) -> None:
    host = await clients.open(display_name="Host")
    guest = await clients.open()
    spectator = await clients.open(guest=False)
    watch = spectator.watch_lobby()
    updates: list[LobbyUpdate] = []

    async def next_update() -> LobbyUpdate:
        update = await asyncio.wait_for(anext(watch), WAIT_SECONDS)
        updates.append(update)
        return update

    try:
        assert isinstance(await next_update(), LobbySnapshot)
        private = await host.create_table()
        table = await host.create_table(
            public=True, starting_player=StartingPlayer.PLAYER_2, turn_timer_seconds=60
        )
        opened = await next_update()
        assert isinstance(opened, TableOpened)
        assert opened.table.table_id == table.table_id and opened.table.code == table.code
        assert opened.table.host == host.player and opened.table.turn_timer_seconds == 60
        # Player 2 moves first: Black in English, so the one who joins plays Black.
        assert opened.table.open_color is Color.BLACK
        assert set(watch.tables) == {table.table_id}

        listed = await guest.list_tables()
        assert [entry.table_id for entry in listed] == [table.table_id]
        assert await guest.list_tables(RUSSIAN) == []

        await guest.join_table(opened.table.code)
        closed = await next_update()
        assert closed == TableClosed(table.table_id)
        assert watch.tables == {}
        assert await guest.list_tables() == []
        assert private.table_id not in {entry.table_id for entry in listed}
    finally:
        await watch.aclose()


async def test_a_spectator_watches_a_table_found_by_its_join_link(clients: Clients) -> None:
    host = await clients.open(display_name="Host")
    guest = await clients.open()
    spectator = await clients.open(guest=False)
    table = await host.create_table(starting_player=StartingPlayer.PLAYER_1)
    await guest.join_table(table.join_url)
    found = await spectator.get_table(code=table.join_url)
    assert found.table_id == table.table_id and found.code == table.code
    assert found == await spectator.get_table(code=table.code.lower())
    watch = spectator.watch(found.table_id, after_seq=found.seq)
    try:
        events = await host.play(table.table_id, "11-15", expected_seq=found.seq)
        seen = await asyncio.wait_for(anext(watch), WAIT_SECONDS)
        assert seen == events[0]
    finally:
        await watch.aclose()


async def test_after_joining_from_the_lobby_each_player_sees_the_others_move(
    clients: Clients,
) -> None:
    host = await clients.open(display_name="Host")
    guest = await clients.open(display_name="Guest")
    lobby = guest.watch_lobby()
    try:
        assert isinstance(await asyncio.wait_for(anext(lobby), WAIT_SECONDS), LobbySnapshot)
        table = await host.create_table(public=True, starting_player=StartingPlayer.PLAYER_1)
        opened = await asyncio.wait_for(anext(lobby), WAIT_SECONDS)
        assert isinstance(opened, TableOpened) and opened.table.table_id == table.table_id
        joined = await guest.join_table(opened.table.code)
    finally:
        await lobby.aclose()
    host_watch = host.watch(table.table_id, after_seq=joined.seq)
    guest_watch = guest.watch(joined.table_id, after_seq=joined.seq)

    async def next_move(watch: TableWatch) -> MovePlayed:
        while True:
            update = await asyncio.wait_for(anext(watch), WAIT_SECONDS)
            if isinstance(update, MovePlayed):
                return update

    try:
        first = await host.play(table.table_id, "11-15", expected_seq=joined.seq)
        assert await next_move(guest_watch) == first[0]
        reply = await guest.play(joined.table_id, "23-19")
        assert await next_move(host_watch) == first[0]
        seen = await next_move(host_watch)
        assert seen == reply[0]
        assert seen.record.side is Color.WHITE and seen.next is not None
        assert seen.next.side is Color.BLACK
    finally:
        await host_watch.aclose()
        await guest_watch.aclose()
