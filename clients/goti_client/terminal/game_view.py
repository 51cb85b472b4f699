"""The game screen's widgets: the board, and beside it the seats, whose turn, the turn timer,
notices, the streak, the buttons and the move list, drawn from the table's state.

What each panel says is worked out in :mod:`goti_client.terminal.game_panels`; this layer
only composes the widgets and puts the text on them.  Following the table and acting on it
are the layers above (:mod:`~goti_client.terminal.game_watch`,
:mod:`~goti_client.terminal.game_screen`).

Some terminals (tmux among them) give Devanagari vowel signs a cell each where Textual reckons
none, so the rest of a line after Nepali words moves right: nothing that must line up with
other rows follows words on its line.  The connection status comes first in the header, and
the buttons stand one under the other (which also keeps each whole in a narrow terminal).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Static

from goti.rules import Square
from goti_client.tables import Table
from goti_client.terminal import game_panels
from goti_client.terminal.board import BoardView
from goti_client.terminal.board_layout import BoardLayout
from goti_client.terminal.selection import MoveEntry
from goti_client.terminal.table_state import TableState

if TYPE_CHECKING:
    from goti_client.terminal.app import GotiApp


class GameView(Screen[None]):
    """One table's widgets, and drawing them from :attr:`state`."""

    def __init__(self, table: Table) -> None:
        super().__init__()
        self.state = TableState(table)
        self.entry: MoveEntry | None = None
        self._ready = False
        """Set once the widgets exist: until then there is nothing to draw on."""

    @property
    def goti_app(self) -> GotiApp:
        return cast("GotiApp", self.app)

    @property
    def table_id(self) -> str:
        """The table shown."""
        return self.state.table.table_id

    @property
    def board(self) -> BoardView:
        """The board widget."""
        return self.query_one(BoardView)

    def compose(self) -> ComposeResult:
        labels = self.goti_app.labels
        with Horizontal(id="game-header"):
            yield Static(labels.connected, id="connection", markup=False)
            yield Static(id="table-header", markup=False)
        with Horizontal(id="game-body"):
            yield BoardView(
                self.state.game.position, BoardLayout(self.state.seat_at_bottom), id="board"
            )
            with VerticalScroll(id="side"):
                yield Static(id="seat-top", markup=False)
                yield Static(id="seat-bottom", markup=False)
                yield Static(id="status", markup=False)
                yield Static(id="timer", markup=False)
                yield Static(id="notices", markup=False)
                yield Static(id="streak", markup=False)
                with Vertical(id="buttons"):
                    yield Button(labels.offer_draw, id="offer-draw", compact=True)
                    yield Button(
                        labels.accept_draw, id="accept-draw", variant="success", compact=True
                    )
                    yield Button(labels.decline_draw, id="decline-draw", compact=True)
                    yield Button(labels.resign, id="resign", variant="error", compact=True)
                    yield Button(labels.take_back, id="take-back", compact=True)
                    yield Button(labels.rematch, id="rematch", variant="primary", compact=True)
                    yield Button(labels.leave, id="leave", compact=True)
                yield Static(labels.moves, id="moves-heading", markup=False)
                yield Static(id="moves", markup=False)
        yield Static("", id="message", markup=False)
        yield Static(f"{labels.board_keys} · {labels.legend}", id="keys", markup=False)

    def say(self, text: str) -> None:
        """Show one line under the board (an error from the server, in the player's words)."""
        if self._ready:
            self.query_one("#message", Static).update(text)

    def _redraw(self) -> None:
        if not self._ready:
            return
        labels = self.goti_app.labels
        state = self.state
        table = state.table
        self.query_one("#table-header", Static).update(game_panels.table_header(state, labels))
        bottom = state.seat_at_bottom
        self.query_one("#seat-top", Static).update(
            game_panels.seat_line(state, labels, table.seat(bottom.opponent))
        )
        self.query_one("#seat-bottom", Static).update(
            game_panels.seat_line(state, labels, table.seat(bottom))
        )
        self.query_one("#status", Static).update(game_panels.status_text(state, labels))
        self._show_line("#notices", "\n".join(game_panels.notices(state, labels)))
        self.query_one("#moves", Static).update(game_panels.move_list(state))
        self._show_buttons()
        self._show_timer()
        self.show_streak()
        self._show_board()

    def _show_board(self, pending: tuple[Square, ...] = ()) -> None:
        if not self._ready:
            return
        marks = game_panels.board_marks(self.state, self.entry, pending)
        self.board.show(self.state.game.position, BoardLayout(self.state.seat_at_bottom), marks)

    def _show_buttons(self) -> None:
        for button_id, visible in game_panels.shown_buttons(self.state).items():
            self.query_one(f"#{button_id}", Button).display = visible

    def _show_timer(self) -> None:
        if not self._ready:
            return
        self._show_line("#timer", game_panels.timer_text(self.state, self.goti_app.labels))

    def show_streak(self) -> None:
        """Show the win streak against the computer, at a table against the computer."""
        if not self._ready:
            return
        app = self.goti_app
        self._show_line("#streak", game_panels.streak_text(self.state, app.labels, app.me))

    def _show_line(self, selector: str, text: str) -> None:
        """Show a line beside the board, or hide it while empty: a short terminal has no row
        to spare for it."""
        line = self.query_one(selector, Static)
        line.update(text)
        line.display = bool(text)
