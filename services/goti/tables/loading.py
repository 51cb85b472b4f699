"""Reading tables: a table as the store keeps it, as the API shows it, the lobby's pages and
a game's record.

A :class:`LoadedTable` is what every step of a command works on; it decodes the side to move
once, however many steps ask for it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from goti.api.v1 import errors_pb2, game_pb2, tables_pb2
from goti.tables import events, seating, validation
from goti.tables.options import TablesOptions
from goti.tables.peer_errors import peer_refusals
from goti.tables.peers import Referee
from goti.tables.refusals import CallRefusedError
from goti.tables.store import StoredTable, TableNotFoundError, TableStore


@dataclass(frozen=True, slots=True)
class LoadedTable:
    """A table as read from the store (or as this replica has just committed it)."""

    table_id: str
    seq: int
    record: tables_pb2.Table
    state: bytes
    """The game, as GameState bytes."""
    known_turn: game_pb2.Color.ValueType | None = field(default=None, compare=False)
    """The side to move, when the step that made this copy already knew it."""

    @classmethod
    def of(cls, table_id: str, stored: StoredTable) -> LoadedTable:
        return cls(
            table_id,
            stored.seq,
            tables_pb2.Table.FromString(stored.fields["table"]),
            stored.fields["game"],
        )

    def game(self) -> game_pb2.GameState:
        """The game, decoded."""
        return game_pb2.GameState.FromString(self.state)

    @property
    def turn(self) -> game_pb2.Color.ValueType:
        """The side to move."""
        if self.known_turn is not None:
            return self.known_turn
        return self.game().position.turn


@dataclass(frozen=True, slots=True)
class SeatedTable:
    """A table as the API shows it, and the caller's role there."""

    table: tables_pb2.Table
    role: tables_pb2.Role.ValueType


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A table's game record."""

    game: game_pb2.GameView
    pdn: str
    white: tables_pb2.Seat
    black: tables_pb2.Seat


def rating_tags(record: tables_pb2.Table) -> dict[str, str]:
    """The players' ratings as PDN tags, as they were when seated: ``WhiteRating`` and
    ``BlackRating``, with a ``?`` after a provisional one.

    PDN 3.0 (pdn.fmjd.org, "PDN Tags") predefines no rating tag and allows tags of one's
    own; PGN's ``WhiteElo`` and ``BlackElo`` (its section 9.1.2) are FIDE Elo ratings, which
    a Glicko-2 rating is not, so Goti names its own.
    """
    tags: dict[str, str] = {}
    for name, seat in (("White", record.white), ("Black", record.black)):
        if seat.HasField("rating"):
            mark = "?" if seat.rating.provisional else ""
            tags[f"{name}Rating"] = f"{seat.rating.rating}{mark}"
    return tags


def table_not_found(table_id: str, field: str = "table_id") -> CallRefusedError:
    return CallRefusedError.of(
        errors_pb2.ERROR_REASON_TABLE_NOT_FOUND,
        f"no table has the id {table_id!r}: it never existed or was cleared away",
        field=field,
    )


class TableReader:
    """Reads tables from the store and has the referee describe their games."""

    def __init__(self, store: TableStore, referee: Referee, options: TablesOptions) -> None:
        self._store = store
        self._referee = referee
        self._options = options

    @property
    def options(self) -> TablesOptions:
        return self._options

    async def load(self, table_id: str, field: str = "table_id") -> LoadedTable:
        """The table with this id; refuses an unknown one."""
        try:
            return LoadedTable.of(table_id, await self._store.load(table_id))
        except TableNotFoundError:
            raise table_not_found(table_id, field) from None

    async def view(self, state: bytes) -> game_pb2.GameView:
        """The game as players see it."""
        with peer_refusals():
            return await self._referee.describe(state)

    def shown(
        self,
        table_id: str,
        record: tables_pb2.Table,
        view: game_pb2.GameView,
        player_id: str | None,
        *,
        seq: int,
    ) -> SeatedTable:
        """A table as the API shows it, for ``player_id``."""
        table = events.table_message(
            table_id, record, seq=seq, view=view, join_base_url=self._options.join_base_url
        )
        return SeatedTable(table, seating.role_of(record, player_id))

    async def seated(self, loaded: LoadedTable, player_id: str | None) -> SeatedTable:
        """The table as the API shows it, for ``player_id``."""
        view = await self.view(loaded.state)
        return self.shown(loaded.table_id, loaded.record, view, player_id, seq=loaded.seq)

    async def get_table(self, table_id: str, player_id: str | None) -> SeatedTable:
        """A table as of now."""
        return await self.seated(await self.load(table_id), player_id)

    async def get_record(self, table_id: str) -> GameRecord:
        """A table's game, with its PDN."""
        loaded = await self.load(table_id)
        record = loaded.record
        created = record.created_at.ToDatetime()
        tags = {
            "Event": "Goti",
            "Date": created.strftime("%Y.%m.%d"),
            "White": record.white.player.display_name or "?",
            "Black": record.black.player.display_name or "?",
        }
        tags.update(rating_tags(record))
        with peer_refusals():
            view, pdn = await asyncio.gather(
                self._referee.describe(loaded.state),
                self._referee.export_pdn(loaded.state, tags),
            )
        return GameRecord(view, pdn, record.white, record.black)

    async def list_tables(
        self, variant: int, page_size: int, after: tuple[int, str] | None
    ) -> tuple[list[tables_pb2.LobbyTable], str]:
        """A page of open public tables, newest first, and the next page's token."""
        found: list[tables_pb2.LobbyTable] = []
        cursor = after
        last: tuple[int, str] | None = None
        more = False
        # Read on until one more matching table shows that another page follows.
        while not more:
            batch = await self._store.lobby_page(cursor, validation.MAX_PAGE_SIZE)
            for entry in batch:
                listing = tables_pb2.LobbyTable.FromString(entry.listing)
                cursor = (entry.opened_ms, entry.table_id)
                if variant and listing.variant != variant:
                    continue
                if len(found) == page_size:
                    more = True
                    break
                found.append(listing)
                last = cursor
            if len(batch) < validation.MAX_PAGE_SIZE:
                break
        token = validation.next_page_token(*last) if more and last is not None else ""
        return found, token
