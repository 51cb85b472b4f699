"""The game screen: the board, and beside it the seats, whose turn, the turn timer, warnings,
draw offers, the result, the streak against the computer and the move list.

Some terminals (tmux among them) give Devanagari vowel signs a cell each where Textual reckons
none, so the rest of a line after Nepali words moves right: nothing that must line up with
other rows follows words on its line.  The connection status comes first in the header, and
the buttons stand one under the other (which also keeps each whole in a narrow terminal).

The table's watch is the screen's source of truth; a command's own events are folded in too,
as soon as its reply comes, and the watch skips them later by seq.  When the watch loses its
stream the screen says it is reconnecting and reads the table directly until the server
answers again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, ClassVar, Final, cast

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Static

from goti.rules import Color, GameWarning, Square, Variant, square_name
from goti_client.errors import GotiError, Reason, UnavailableError
from goti_client.events import DrawDeclined, Snapshot, TableEvent, TableUpdate
from goti_client.tables import Role, Seat, Table, TableStatus
from goti_client.terminal.board import BoardMarks, BoardView
from goti_client.terminal.board_layout import BoardLayout
from goti_client.terminal.dialogs import Question
from goti_client.terminal.selection import EntryStep, MoveEntry
from goti_client.terminal.table_state import TableState, plies_before_first

if TYPE_CHECKING:
    from goti_client.terminal.app import GotiApp
    from goti_client.watches import TableWatch

TICK_SECONDS: Final = 0.25
PROBE_RETRY_SECONDS: Final = 1.0
STREAK_SETTLE_SECONDS: Final = 1.0
"""The server counts a finished game in the streaks a moment after it ends."""


def square_label(variant: Variant, square: Square) -> str:
    """A square as the variant's players name it: ``c3`` in Russian, ``22`` in English.

    >>> from goti.rules import ENGLISH, RUSSIAN
    >>> square_label(RUSSIAN, Square(22)), square_label(ENGLISH, Square(22))
    ('c3', '22')
    """
    return square_name(square) if variant.algebraic else str(square)


def format_clock(seconds: float) -> str:
    """Seconds left as ``m:ss``.

    >>> format_clock(75.2)
    '1:16'
    """
    whole = max(0, int(seconds + 0.999))
    return f"{whole // 60}:{whole % 60:02d}"


class GameScreen(Screen[None]):
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
        super().__init__()
        self.state = TableState(table)
        self.entry: MoveEntry | None = None
        self.sending = False
        self.connected = True
        self._watch: TableWatch | None = None
        self._reconnects_seen = 0
        self._leaving = False
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

    # -- layout ---------------------------------------------------------------------------

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

    def on_mount(self) -> None:
        self._ready = True
        table = self.state.table
        if table.role is not Role.SPECTATOR and table.status is not TableStatus.FINISHED:
            self.goti_app.files.remember_table(self.goti_app.server, table.table_id)
        self._refresh_entry()
        self._redraw()
        self.board.focus()
        self.set_interval(TICK_SECONDS, self._tick)
        self.run_worker(self._follow(), group="watch", exclusive=True, exit_on_error=False)

    # -- following the table ------------------------------------------------------------

    async def _follow(self) -> None:
        watch = self.goti_app.goti.watch(self.table_id, after_seq=self.state.seq)
        self._watch = watch
        try:
            async for update in watch:
                self._set_connected(True)
                self._apply(update)
        except GotiError as error:
            self.say(self.goti_app.labels.explain(error))
        finally:
            await watch.aclose()

    def _apply(self, update: TableUpdate) -> None:
        before = self.state
        after = before.fold(update)
        if after is before:
            return
        self.state = after
        self._refresh_entry()
        finished_now = (
            after.table.status is TableStatus.FINISHED
            and before.table.status is not TableStatus.FINISHED
        )
        if finished_now:
            self._game_finished()
        if isinstance(update, DrawDeclined):
            self.say(self.goti_app.labels.draw_declined)
        rematch = after.table.rematch_table_id
        if rematch and rematch != before.table.rematch_table_id:
            self._go_to_rematch(rematch)
        self._redraw()

    def _refresh_entry(self) -> None:
        turn = self.state.my_turn
        if turn is None:
            self.entry = None
            return
        if self.entry is not None and self.entry.legal_moves == turn.legal_moves:
            return
        self.entry = MoveEntry(turn.legal_moves)
        if self._ready:
            self._bring_cursor(self.entry)

    def _bring_cursor(self, entry: MoveEntry) -> None:
        """Put the keyboard cursor on a piece that can move, the nearest one, unless it is on
        one already."""
        board = self.board
        if board.cursor.square in entry.movable or not entry.movable:
            return
        layout = board.board_layout
        row, column = layout.cell(board.cursor.square)

        def distance(square: Square) -> tuple[int, int]:
            other_row, other_column = layout.cell(square)
            return abs(other_row - row) + abs(other_column - column), square

        board.put_cursor(min(entry.movable, key=distance))

    def _game_finished(self) -> None:
        app = self.goti_app
        if self.state.table.role is not Role.SPECTATOR:
            app.files.forget_table(app.server, self.table_id)
        if self.state.table.opponent.is_computer:
            self.run_worker(self._settle_streak(), group="streak", exit_on_error=False)

    async def _settle_streak(self) -> None:
        await self.goti_app.refresh_me()
        await asyncio.sleep(STREAK_SETTLE_SECONDS)
        await self.goti_app.refresh_me()

    def _go_to_rematch(self, table_id: str) -> None:
        if self._leaving or self.state.table.role is Role.SPECTATOR:
            return
        self.run_worker(self._open_rematch(table_id), group="rematch", exit_on_error=False)

    async def _open_rematch(self, table_id: str) -> None:
        try:
            table = await self.goti_app.goti.get_table(table_id)
        except GotiError as error:
            self.say(self.goti_app.labels.explain(error))
            return
        self._switch_to(table)

    def _switch_to(self, table: Table) -> None:
        if self._leaving:
            return
        self._leaving = True
        self.goti_app.open_table(table, replace=True)

    # -- connection -----------------------------------------------------------------------

    def _tick(self) -> None:
        watch = self._watch
        if watch is not None and watch.reconnects > self._reconnects_seen:
            self._reconnects_seen = watch.reconnects
            self._set_connected(False)
        self._show_timer()

    def _set_connected(self, connected: bool) -> None:
        if connected == self.connected:
            return
        self.connected = connected
        labels = self.goti_app.labels
        self.query_one("#connection", Static).update(
            labels.connected if connected else labels.reconnecting
        )
        if not connected:
            self.run_worker(self._probe(), group="probe", exclusive=True, exit_on_error=False)

    async def _probe(self) -> None:
        """Read the table until the server answers: then the screen is current again, even
        while the watch waits out its backoff."""
        while not self.connected:
            try:
                table = await self.goti_app.goti.get_table(self.table_id)
            except GotiError:
                await asyncio.sleep(PROBE_RETRY_SECONDS)
                continue
            self._apply(Snapshot(table))
            self._set_connected(True)

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

    # -- drawing -------------------------------------------------------------------------

    def say(self, text: str) -> None:
        """Show one line under the board (an error from the server, in the player's words)."""
        if self._ready:
            self.query_one("#message", Static).update(text)

    def _redraw(self) -> None:
        if not self._ready:
            return
        labels = self.goti_app.labels
        table = self.state.table
        code = table.code or table.table_id
        header = labels.table_header.format(variant=labels.variant(table.variant), code=code)
        if table.role is Role.SPECTATOR:
            header += f" · {labels.watching}"
        self.query_one("#table-header", Static).update(header)
        bottom = self.state.seat_at_bottom
        self.query_one("#seat-top", Static).update(self._seat_line(table.seat(bottom.opponent)))
        self.query_one("#seat-bottom", Static).update(self._seat_line(table.seat(bottom)))
        self.query_one("#status", Static).update(self._status_text())
        self._show_line("#notices", "\n".join(self._notices()))
        self.query_one("#moves", Static).update(self._move_list())
        self._show_buttons()
        self._show_timer()
        self.show_streak()
        self._show_board()

    def _show_board(self, pending: tuple[Square, ...] = ()) -> None:
        if not self._ready:
            return
        entry = self.entry
        turn = self.state.my_turn
        if pending:
            marks = BoardMarks(path=pending, last_move=self.state.last_move)
        elif entry is not None and turn is not None:
            marks = BoardMarks(
                must_capture=frozenset(turn.must_capture),
                path=entry.path,
                targets=entry.targets,
                jumped=entry.jumped,
                last_move=self.state.last_move,
            )
        else:
            marks = BoardMarks(last_move=self.state.last_move)
        self.board.show(self.state.game.position, BoardLayout(self.state.seat_at_bottom), marks)

    def _seat_line(self, seat: Seat) -> str:
        labels = self.goti_app.labels
        table = self.state.table
        if seat.computer_level is not None:
            name = labels.computer_seat.format(level=labels.levels[seat.computer_level])
        elif seat.player is None:
            name = labels.open_seat
        else:
            name = seat.player.display_name
        mine = table.role.holds(seat.color) and table.role is not Role.BOTH
        you = f" ({labels.you})" if mine else ""
        captured = labels.captured.format(count=self.state.captured_by(seat.color))
        to_move = self.state.turn is not None and self.state.turn.side is seat.color
        marker = "▶ " if to_move else "  "
        return f"{marker}{labels.color(seat.color)}: {name}{you} · {captured}"

    def _status_text(self) -> str:
        labels = self.goti_app.labels
        table = self.state.table
        game = self.state.game
        if table.status is TableStatus.WAITING:
            return "\n".join(
                (
                    labels.waiting_for_opponent,
                    labels.share_code.format(code=table.code),
                    labels.share_link.format(link=table.join_url),
                )
            )
        outcome = game.outcome
        if outcome is not None:
            why = labels.terminations[outcome.termination]
            if outcome.winner is None:
                return labels.draw_result.format(why=why)
            result = labels.wins.format(side=labels.color(outcome.winner), why=why)
            if table.role in (Role.WHITE, Role.BLACK):
                mine = table.role.holds(outcome.winner)
                result = (labels.you_won if mine else labels.you_lost).format(result=result)
            return result
        turn = self.state.turn
        if turn is None:
            return ""
        if self.state.my_turn is not None and table.role is not Role.BOTH:
            return labels.your_move
        if table.seat(turn.side).is_computer:
            return labels.thinking
        return labels.side_to_move.format(side=labels.color(turn.side))

    def _notices(self) -> list[str]:
        labels = self.goti_app.labels
        game = self.state.game
        table = self.state.table
        turn = self.state.my_turn
        notices = []
        if turn is not None and turn.must_capture:
            notices.append(labels.must_capture)
        for warning in sorted(game.warnings, key=lambda w: w.value):
            text = labels.warnings[warning]
            if warning is GameWarning.MOVE_LIMIT_NEAR:
                text = text.format(count=self.state.moves_before_move_limit)
            notices.append(text)
        offer = game.draw_offer
        if offer is not None:
            side = labels.color(offer)
            if turn is not None and turn.side is offer.opponent:
                notices.append(labels.draw_offered.format(side=side))
            elif table.role.holds(offer) and table.role is not Role.BOTH:
                notices.append(labels.you_offered_draw)
            else:
                notices.append(labels.draw_offer_open.format(side=side))
        asked = table.rematch_offered_by
        if table.status is TableStatus.FINISHED and asked is not None:
            if table.role.holds(asked) and table.role is not Role.BOTH:
                notices.append(labels.you_asked_rematch)
            else:
                notices.append(labels.rematch_offered.format(side=labels.color(asked)))
        return notices

    def _move_list(self) -> str:
        game = self.state.game
        lines = []
        plies = ["…"] * plies_before_first(game) + list(game.moves)
        for index in range(0, len(plies), 2):
            pair = plies[index : index + 2]
            lines.append(f"{index // 2 + 1:>3}. " + "  ".join(f"{move:<9}" for move in pair))
        return "\n".join(lines)

    def _show_buttons(self) -> None:
        table = self.state.table
        game = self.state.game
        turn = self.state.my_turn
        playing = table.status is TableStatus.PLAYING
        shown = {
            "offer-draw": turn is not None and turn.may_offer_draw and game.draw_offer is None,
            "accept-draw": turn is not None and game.draw_offer is turn.side.opponent,
            "decline-draw": turn is not None and game.draw_offer is turn.side.opponent,
            "resign": turn is not None,
            "take-back": playing and table.opponent.is_computer and bool(game.moves),
            "rematch": table.status is TableStatus.FINISHED
            and table.role is not Role.SPECTATOR
            and table.rematch_table_id is None,
            "leave": True,
        }
        for button_id, visible in shown.items():
            self.query_one(f"#{button_id}", Button).display = visible

    def _show_timer(self) -> None:
        if not self._ready:
            return
        deadline = self.state.table.turn_deadline
        text = ""
        if deadline is not None and self.state.turn is not None:
            left = (deadline - datetime.now(UTC)).total_seconds()
            text = "⏱ " + self.goti_app.labels.time_left.format(time=format_clock(left))
        self._show_line("#timer", text)

    def show_streak(self) -> None:
        """Show the win streak against the computer, at a table against the computer."""
        if not self._ready:
            return
        me = self.goti_app.me
        text = ""
        if me is not None and self.state.table.opponent.is_computer:
            text = self.goti_app.labels.win_streak.format(streak=me.win_streak, best=me.best_streak)
        self._show_line("#streak", text)

    def _show_line(self, selector: str, text: str) -> None:
        """Show a line beside the board, or hide it while empty: a short terminal has no row
        to spare for it."""
        line = self.query_one(selector, Static)
        line.update(text)
        line.display = bool(text)
