"""The lobby, live: the open public tables, updated as they open and fill; Enter joins one."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Static

from goti.rules import Variant
from goti_client.errors import GotiError
from goti_client.tables import LobbyTable
from goti_client.terminal.game_panels import rated_name

if TYPE_CHECKING:
    from goti_client.terminal.app import GotiApp


class LobbyScreen(Screen[None]):
    """The open public tables of one variant."""

    DEFAULT_CSS: ClassVar[str] = """
    LobbyScreen > Vertical {
        padding: 1 2;
    }
    LobbyScreen #lobby-title {
        text-style: bold;
        color: $accent;
    }
    LobbyScreen DataTable {
        height: 1fr;
        margin: 1 0;
    }
    LobbyScreen #message {
        color: $error;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", show=False),
    ]

    def __init__(self, variant: Variant) -> None:
        super().__init__()
        self.variant = variant
        self.tables: list[LobbyTable] = []

    @property
    def goti_app(self) -> GotiApp:
        return cast("GotiApp", self.app)

    def compose(self) -> ComposeResult:
        labels = self.goti_app.labels
        with Vertical():
            yield Static(
                f"{labels.lobby_title} · {labels.variant(self.variant)}",
                id="lobby-title",
                markup=False,
            )
            yield DataTable(id="tables", cursor_type="row", zebra_stripes=True)
            yield Static("", id="message", markup=False)
            yield Static(labels.lobby_keys, id="hint", markup=False)

    def on_mount(self) -> None:
        labels = self.goti_app.labels
        grid = self.query_one(DataTable)
        grid.add_columns(
            labels.lobby_host, labels.lobby_you_play, labels.lobby_timer, labels.lobby_code
        )
        grid.focus()
        self.run_worker(self._follow(), group="lobby", exclusive=True, exit_on_error=False)

    async def _follow(self) -> None:
        watch = self.goti_app.goti.watch_lobby(self.variant)
        try:
            async for _update in watch:
                self._show(sorted(watch.tables.values(), key=lambda t: t.created_at, reverse=True))
        except GotiError as error:
            self._say(self.goti_app.labels.explain(error))
        finally:
            await watch.aclose()

    def _show(self, tables: list[LobbyTable]) -> None:
        labels = self.goti_app.labels
        self.tables = tables
        grid = self.query_one(DataTable)
        grid.clear()
        for table in tables:
            timer = f"{table.turn_timer_seconds} s" if table.turn_timer_seconds else labels.no_timer
            # Text, not str: a str cell is read as markup, and a name may hold brackets.
            grid.add_row(
                Text(rated_name(labels, table.host.display_name, table.host_rating)),
                Text(labels.color(table.open_color)),
                Text(timer),
                Text(table.code),
                key=table.table_id,
            )
        self._say("" if tables else labels.lobby_empty)

    def _say(self, text: str) -> None:
        self.query_one("#message", Static).update(text)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        chosen = [table for table in self.tables if table.table_id == event.row_key.value]
        if chosen:
            self.run_worker(
                self._join(chosen[0]), group="join", exclusive=True, exit_on_error=False
            )

    async def _join(self, table: LobbyTable) -> None:
        app = self.goti_app
        try:
            joined = await app.goti.join_table(table.code)
        except GotiError as error:
            self._say(app.labels.explain(error))
            return
        app.open_table(joined, replace=True)
