"""The ``goti play`` application: one connection to a Goti server, the start screen, and a
game screen per table.

On start it connects as the player kept for that server (a new guest the first time), then
offers to resume the game left unfinished there, if any.
"""

from __future__ import annotations

from typing import ClassVar, Final

from textual.app import App
from textual.binding import Binding, BindingType
from textual.worker import Worker, WorkerState

import goti_client
from goti.rules import ENGLISH, Variant
from goti_client.connection import Backoff
from goti_client.errors import GotiError, TableNotFoundError, UnavailableError
from goti_client.tables import Me, Opponent, Role, Table, TableStatus
from goti_client.terminal.dialogs import Question
from goti_client.terminal.game_screen import GameScreen
from goti_client.terminal.labels import LABELS, Labels, Language, failure_cause
from goti_client.terminal.player_files import PlayerFiles
from goti_client.terminal.start_screen import StartScreen
from goti_client.terminal.table_state import move_number
from goti_client.terminal.terminal_theme import Brightness

DEFAULT_SERVER: Final = "localhost:50051"
PLAYER_STREAM_BACKOFF: Final = Backoff(initial=0.5, maximum=5.0)
"""A person is watching: come back sooner than the SDK's default 30 s ceiling."""


class GotiApp(App[None]):
    """Checkers against the computer, a friend online, or a second player at this terminal."""

    TITLE = "Goti"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        *,
        server: str = DEFAULT_SERVER,
        language: Language = Language.ENGLISH,
        variant: Variant = ENGLISH,
        files: PlayerFiles | None = None,
        brightness: Brightness = Brightness.DARK,
        stream_backoff: Backoff = PLAYER_STREAM_BACKOFF,
    ) -> None:
        super().__init__()
        self.server = server
        self.language = language
        self.labels: Labels = LABELS[language]
        self.variant = variant
        self.files = files or PlayerFiles.for_user()
        self.brightness = brightness
        self._stream_backoff = stream_backoff
        self._goti: goti_client.GotiClient | None = None
        self.me: Me | None = None
        self.start_screen = StartScreen()

    @property
    def goti(self) -> goti_client.GotiClient:
        """The connection to the server (the app connects before anything can be played)."""
        if self._goti is None:
            raise RuntimeError("not connected yet")
        return self._goti

    @property
    def connected(self) -> bool:
        """Whether the app has signed in to the server."""
        return self._goti is not None

    def on_mount(self) -> None:
        self.theme = "textual-light" if self.brightness is Brightness.LIGHT else "textual-dark"
        self.push_screen(self.start_screen)
        self.connect()

    async def on_unmount(self) -> None:
        if self._goti is not None:
            await self._goti.close()
            self._goti = None

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Every expected failure is caught where it happens; anything else still reaches
        # the player as one line rather than ending the game with a traceback.
        error = event.worker.error
        if event.state is WorkerState.ERROR and error is not None:
            line = self.labels.something_went_wrong.format(message=f"{error}".splitlines()[0])
            screen = self.screen
            if isinstance(screen, GameScreen | StartScreen):
                screen.say(line)
            else:
                self.notify(line, severity="error", markup=False)

    # -- connecting ---------------------------------------------------------------------

    def connect(self) -> None:
        """Sign in to the server (again, after a failure) in the background."""
        if self._goti is None:
            self.run_worker(self._connect(), group="connect", exclusive=True, exit_on_error=False)

    async def _connect(self) -> None:
        self.start_screen.show_connecting()
        try:
            client = await goti_client.connect(
                self.server,
                identity_file=self.files.identity_file(self.server),
                stream_backoff=self._stream_backoff,
            )
        except UnavailableError as error:
            self.start_screen.show_unreachable(failure_cause(error.message))
            return
        except GotiError as error:
            self.start_screen.show_unreachable(self.labels.explain(error))
            return
        self._goti = client
        await self.refresh_me()
        self.start_screen.show_connected()
        await self._offer_resume()

    async def refresh_me(self) -> None:
        """Read the player's name and streaks again (after a game against the computer)."""
        try:
            self.me = await self.goti.me()
        except GotiError:
            return
        self.start_screen.show_player()
        if isinstance(self.screen, GameScreen):
            self.screen.show_streak()

    async def _offer_resume(self) -> None:
        table_id = self.files.unfinished_table(self.server)
        if table_id is None:
            return
        try:
            table = await self.goti.get_table(table_id)
        except TableNotFoundError:
            self.files.forget_table(self.server)
            return
        except GotiError:
            return
        if table.status is TableStatus.FINISHED or table.role is Role.SPECTATOR:
            self.files.forget_table(self.server, table_id)
            return
        labels = self.labels
        if table.opponent.is_computer:
            opponent = labels.vs_computer
        elif table.opponent is Opponent.PASS_AND_PLAY:
            opponent = labels.vs_self
        else:
            opponent = labels.vs_person
        question = labels.resume_question.format(opponent=opponent, move=move_number(table.game))

        def answered(resume: bool | None) -> None:
            if resume:
                self.open_table(table)
            else:
                self.files.forget_table(self.server, table_id)

        self.push_screen(Question(question, labels.resume, labels.new_game), answered)

    # -- tables -------------------------------------------------------------------------

    def open_table(self, table: Table, *, replace: bool = False) -> None:
        """Show a table: play it when the player sits there, else watch it."""
        screen = GameScreen(table)
        if replace:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)
