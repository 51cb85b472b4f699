"""The game screen: one table, played or watched; its keys, its buttons and the commands
they send.

The screen is built in layers, one module each: :mod:`~goti_client.terminal.game_view` (the
widgets, drawn from the table's state as :mod:`~goti_client.terminal.game_panels` words it),
:mod:`~goti_client.terminal.game_watch` (following the table, and the connection), and this
one on top (acting on the table), which also holds the style of the whole screen.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Button

from goti.rules import Color, Square
from goti_client.errors import GotiError, Reason, UnavailableError
from goti_client.events import TableEvent
from goti_client.tables import Role, Table, TableStatus
from goti_client.terminal.board import BoardView
from goti_client.terminal.dialogs import Question
from goti_client.terminal.game_panels import square_label
from goti_client.terminal.game_watch import TableFollower
from goti_client.terminal.selection import EntryStep, MoveEntry


class GameScreen(TableFollower):
    """One table, played or watched."""

    DEFAULT_CSS: ClassVar[str] = """
    GameScreen #game-header {
        height: 1;
        padding: 0 1;
        background: $panel;
    }
    GameScreen #connection {
        width: auto;
        margin-right: 2;
    }
    GameScreen #table-header {
        width: 1fr;
        text-style: bold;
    }
    GameScreen #game-body {
        height: 1fr;
        padding: 1 1 0 1;
    }
    GameScreen BoardView {
        margin-right: 2;
    }
    GameScreen #side {
        width: 1fr;
        height: 1fr;
    }
    GameScreen #side > Static {
        margin-bottom: 1;
    }
    GameScreen #status {
        text-style: bold;
        color: $accent;
    }
    GameScreen #notices {
        color: $warning;
    }
    GameScreen #buttons {
        height: auto;
        width: auto;
        margin-bottom: 1;
    }
    GameScreen #buttons Button {
        margin: 0;
        min-width: 8;
    }
    GameScreen #moves-heading {
        text-style: bold;
        margin-bottom: 0;
    }
    GameScreen #message {
        height: 1;
        padding: 0 1;
        color: $error;
    }
    GameScreen #keys {
        height: 1;
        padding: 0 1;
        color: $text-muted;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d", "offer_draw", show=False),
        Binding("y", "answer_draw(True)", show=False),
        Binding("n", "answer_draw(False)", show=False),
        Binding("r", "resign", show=False),
        Binding("ctrl+z", "take_back", show=False),
        Binding("m", "rematch", show=False),
        Binding("q", "leave", show=False),
    ]

    def __init__(self, table: Table) -> None:
        super().__init__(table)
        self.sending = False

    def on_mount(self) -> None:
        self._ready = True
        table = self.state.table
        if table.role is not Role.SPECTATOR and table.status is not TableStatus.FINISHED:
            self.goti_app.files.remember_table(self.goti_app.server, table.table_id)
        self._refresh_entry()
        self._redraw()
        self.board.focus()
        self._start_following()

    # -- moves and commands --------------------------------------------------------------

    def on_board_view_chosen(self, message: BoardView.Chosen) -> None:
        message.stop()
        entry = self.entry
        if entry is None or self.sending:
            return
        result = entry.choose(message.square)
        if result.step is EntryStep.COMPLETED and result.move is not None:
            move = result.move
            self._show_board(pending=move.path)
            self._command(
                lambda goti, side, seq: goti.play(self.table_id, move, side=side, expected_seq=seq)
            )
            return
        if result.step is EntryStep.SELECTED:
            self.say("")
        else:
            self._say_why_it_cannot_move(message.square, entry)
        self._show_board()

    def _say_why_it_cannot_move(self, square: Square, entry: MoveEntry) -> None:
        """When the player chose one of their own pieces that cannot move, say why: another
        must capture, or it is blocked."""
        turn = self.state.my_turn
        piece = self.state.game.position.piece_at(square)
        if turn is None or piece is None or piece.color is not turn.side:
            return
        if square in entry.movable:
            return
        labels = self.goti_app.labels
        if turn.must_capture:
            variant = self.state.game.variant
            squares = ", ".join(square_label(variant, other) for other in turn.must_capture)
            self.say(labels.must_capture_with.format(squares=squares))
        else:
            self.say(labels.piece_cannot_move)

    def on_board_view_cancelled(self, message: BoardView.Cancelled) -> None:
        message.stop()
        if self.entry is not None and not self.sending:
            self.entry.cancel()
            self._show_board()

    def _side(self) -> Color | None:
        """The side a command acts for: in pass-and-play the side to move, else the seat."""
        turn = self.state.turn
        if self.state.table.role is Role.BOTH and turn is not None:
            return turn.side
        return None

    def _command(self, call: Callable[..., Awaitable[Sequence[TableEvent]]]) -> None:
        if self.sending:
            return
        self.sending = True
        self.run_worker(
            self._run_command(call, self._side(), self.state.seq),
            group="command",
            exit_on_error=False,
        )

    async def _run_command(
        self,
        call: Callable[..., Awaitable[Sequence[TableEvent]]],
        side: Color | None,
        seq: int,
    ) -> None:
        try:
            events = await call(self.goti_app.goti, side, seq)
        except GotiError as error:
            self.say(self.goti_app.labels.explain(error))
            if isinstance(error, UnavailableError):
                self._set_connected(False)
            if self.entry is not None:
                self.entry.cancel()
            return
        finally:
            self.sending = False
            self._show_board()
        self.say("")
        for event in events:
            self._apply(event)

    def _refuse(self, reason: Reason) -> None:
        self.say(self.goti_app.labels.refusals[reason])

    def _may_act(self) -> bool:
        """Whether the player may act now; if not, say why."""
        if self.state.table.role is Role.SPECTATOR:
            self._refuse(Reason.NOT_A_PLAYER)
            return False
        if self.state.table.status is TableStatus.FINISHED:
            self._refuse(Reason.GAME_OVER)
            return False
        if self.state.table.status is TableStatus.WAITING:
            self._refuse(Reason.WAITING_FOR_OPPONENT)
            return False
        if self.state.my_turn is None:
            self._refuse(Reason.NOT_YOUR_TURN)
            return False
        return True

    def action_offer_draw(self) -> None:
        if not self._may_act():
            return
        self._command(
            lambda goti, side, seq: goti.offer_draw(self.table_id, side=side, expected_seq=seq)
        )

    def action_answer_draw(self, accept: bool) -> None:
        if not self._may_act():
            return
        if self.state.game.draw_offer is None:
            self._refuse(Reason.NO_DRAW_OFFER)
            return
        self._command(
            lambda goti, side, seq: goti.answer_draw(
                self.table_id, accept, side=side, expected_seq=seq
            )
        )

    def action_resign(self) -> None:
        if not self._may_act():
            return
        labels = self.goti_app.labels

        def answered(resign: bool | None) -> None:
            if resign:
                self._command(
                    lambda goti, side, seq: goti.resign(self.table_id, side=side, expected_seq=seq)
                )

        self.app.push_screen(Question(labels.resign_question, labels.yes, labels.no), answered)

    def action_take_back(self) -> None:
        if self.state.table.role is Role.SPECTATOR:
            self._refuse(Reason.NOT_A_PLAYER)
            return
        if not self.state.table.opponent.is_computer:
            self._refuse(Reason.TAKE_BACK_NOT_ALLOWED)
            return
        self._command(lambda goti, side, seq: goti.take_back(self.table_id, expected_seq=seq))

    def action_rematch(self) -> None:
        table = self.state.table
        if table.status is not TableStatus.FINISHED:
            self._refuse(Reason.GAME_IN_PROGRESS)
            return
        if table.role is Role.SPECTATOR:
            self._refuse(Reason.NOT_A_PLAYER)
            return
        self.run_worker(self._rematch(), group="command", exit_on_error=False)

    async def _rematch(self) -> None:
        app = self.goti_app
        try:
            rematch = await app.goti.rematch(self.table_id, expected_seq=self.state.seq)
        except GotiError as error:
            self.say(app.labels.explain(error))
            return
        for event in rematch.events:
            self._apply(event)
        if rematch.table is not None:
            self._switch_to(rematch.table)

    def action_leave(self) -> None:
        self._leaving = True
        self.app.pop_screen()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        match event.button.id:
            case "offer-draw":
                self.action_offer_draw()
            case "accept-draw":
                self.action_answer_draw(True)
            case "decline-draw":
                self.action_answer_draw(False)
            case "resign":
                self.action_resign()
            case "take-back":
                self.action_take_back()
            case "rematch":
                self.action_rematch()
            case "leave":
                self.action_leave()
        if event.button.id != "leave":
            self.board.focus()
