"""The game screen following its table: the watch's updates folded into the state, what a
finished game or a rematch brings, and the connection.

The table's watch is the screen's source of truth; a command's own events are folded in too
(:meth:`TableFollower._apply`), as soon as its reply comes, and the watch skips them later by
seq.  When the watch loses its stream the screen says it is reconnecting and reads the table
directly until the server answers again.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final

from textual.widgets import Static

from goti.rules import Square
from goti_client.errors import GotiError
from goti_client.events import DrawDeclined, PlayerJoined, Snapshot, TableUpdate
from goti_client.tables import Role, Table, TableStatus
from goti_client.terminal.game_view import GameView
from goti_client.terminal.selection import MoveEntry

if TYPE_CHECKING:
    from goti_client.terminal.app import GotiApp
    from goti_client.watches import TableWatch

TICK_SECONDS: Final = 0.25
PROBE_RETRY_SECONDS: Final = 1.0
STREAK_SETTLE_SECONDS: Final = 1.0
"""The server counts a finished game in the streaks and ratings a moment after it ends."""


class TableFollower(GameView):
    """A game view kept current from the table's watch."""

    def __init__(self, table: Table) -> None:
        super().__init__(table)
        self.connected = True
        self._watch: TableWatch | None = None
        self._reconnects_seen = 0
        self._leaving = False

    def _start_following(self) -> None:
        """Start the turn timer's tick and the watch: once the widgets exist."""
        self.set_interval(TICK_SECONDS, self._tick)
        self.run_worker(self._follow(), group="watch", exclusive=True, exit_on_error=False)

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
        if isinstance(update, PlayerJoined):
            # The event names the newcomer; their rating comes with the table.
            self.run_worker(self._read_table(), group="seats", exit_on_error=False)
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

    async def _read_table(self) -> None:
        try:
            table = await self.goti_app.goti.get_table(self.table_id)
        except GotiError:
            return  # the names stand without ratings until the next snapshot
        self._apply(Snapshot(table))

    def _game_finished(self) -> None:
        app = self.goti_app
        if self.state.table.role is not Role.SPECTATOR:
            app.files.forget_table(app.server, self.table_id)
        if self.state.table.opponent.is_computer or self.state.table.rated:
            # The streaks, or the new ratings, for the start screen: read by the app, not by
            # this screen, which the player may leave before the answer comes.
            app.run_worker(_settle_me(app), group="me", exit_on_error=False)

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


async def _settle_me(app: GotiApp) -> None:
    """Read the player's streaks and ratings now, and once more when the server has surely
    counted the game."""
    await app.refresh_me()
    await asyncio.sleep(STREAK_SETTLE_SECONDS)
    await app.refresh_me()
