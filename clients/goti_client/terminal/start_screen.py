"""The start screen: play the computer, play a friend online (create a table or join one by
its code), play online now (paired with a waiting opponent), pass and play at this terminal,
browse the lobby, or watch a table by its id, its code or its join link.

Some terminals (tmux among them) draw Devanagari a cell or two wider than Textual reckons,
moving the rest of its line to the right; so no box border closes a line after a label, and
each choice's name stands on a line of its own above its buttons.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, ClassVar, Final, cast

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Button, Checkbox, Input, RadioButton, RadioSet, Static

from goti.rules import ENGLISH, RUSSIAN, Variant
from goti_client.errors import GotiError, Reason
from goti_client.matchmaking import SEEK_TURN_TIMERS
from goti_client.tables import Level, Opponent, StartingPlayer, Table
from goti_client.terminal.dialogs import Question
from goti_client.terminal.game_panels import rated_name

if TYPE_CHECKING:
    from goti_client.terminal.app import GotiApp

LEVEL_OPPONENTS: Final = {
    Level.EASY: Opponent.COMPUTER_EASY,
    Level.NORMAL: Opponent.COMPUTER_NORMAL,
    Level.HARD: Opponent.COMPUTER_HARD,
    Level.MASTER: Opponent.COMPUTER_MASTER,
}
FIRST_MOVERS: Final = (StartingPlayer.PLAYER_1, StartingPlayer.PLAYER_2, StartingPlayer.RANDOM)
"""In the order of the "who moves first" buttons: the player, the computer, either."""
TURN_TIMERS: Final = (0, 30, 60, 300)
"""Seconds per move offered for a table with a friend (0: no timer)."""
SEEK_TIMERS: Final = tuple(SEEK_TURN_TIMERS)
"""Seconds per move of the pools Play online now pairs in (0: no timer)."""
VARIANTS: Final = (ENGLISH, RUSSIAN)
CODE_LENGTH: Final = 6
"""Characters in a table code (``K7QX2M``), spaces and dashes aside; a table id is longer."""


def table_reference(text: str) -> tuple[str, str]:
    """What the player typed to watch a table, as ``(table_id, code)`` with one of the two
    set: a join link or a code is sent as the code (the server reads either), anything else
    is the table's id.

    >>> table_reference("https://goti.example/join/K7QX2M")
    ('', 'https://goti.example/join/K7QX2M')
    >>> table_reference(" k7qx-2m "), table_reference("Fv3y8_GkQ2-jzX0aT5pP6w")
    (('', 'k7qx-2m'), ('Fv3y8_GkQ2-jzX0aT5pP6w', ''))
    """
    text = text.strip()
    compact = "".join(character for character in text if character not in " -")
    if "/" in text or len(compact) == CODE_LENGTH:
        return "", text
    return text, ""


class StartScreen(Screen[None]):
    """What to play."""

    DEFAULT_CSS: ClassVar[str] = """
    StartScreen {
        align-horizontal: center;
    }
    StartScreen > VerticalScroll {
        width: 100;
        max-width: 100%;
        padding: 0 2;
    }
    StartScreen #title {
        text-style: bold;
        color: $accent;
    }
    StartScreen .section {
        height: auto;
        border-left: thick $primary;
        padding: 0 1;
        margin-top: 1;
    }
    StartScreen .heading {
        text-style: bold;
        color: $primary;
    }
    StartScreen .row {
        height: auto;
    }
    StartScreen .spaced {
        margin: 1 0 0 1;
    }
    StartScreen RadioSet, StartScreen RadioSet:focus {
        layout: horizontal;
        height: auto;
    }
    StartScreen Input {
        width: 30;
        margin-right: 2;
    }
    StartScreen Button {
        margin-right: 2;
    }
    StartScreen #message {
        color: $error;
    }
    StartScreen #hint {
        color: $text-muted;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "ask_to_quit", show=False),
        Binding("r", "retry", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._ready = False
        """Set once the widgets exist: until then there is nothing to show things in."""

    @property
    def goti_app(self) -> GotiApp:
        return cast("GotiApp", self.app)

    def compose(self) -> ComposeResult:
        labels = self.goti_app.labels
        with VerticalScroll():
            yield Static(labels.title, id="title", markup=False)
            yield Static("", id="connection-status", markup=False)
            yield Static("", id="streaks", markup=False)
            # Hidden until the player has a rating, so that connecting moves nothing below.
            ratings = Static("", id="ratings", markup=False)
            ratings.display = False
            yield ratings
            with Vertical(classes="row"):
                yield Static(labels.rules, markup=False)
                with RadioSet(compact=True, id="variant"):
                    for variant in VARIANTS:
                        yield RadioButton(
                            labels.variant(variant),
                            value=variant == self.goti_app.variant,
                            id=f"variant-{variant.name}",
                        )
            with Vertical(classes="section", id="computer-section"):
                yield Static(labels.play_computer, classes="heading", markup=False)
                with Vertical(classes="row"):
                    yield Static(labels.level, markup=False)
                    with RadioSet(compact=True, id="level"):
                        for level in Level:
                            yield RadioButton(
                                labels.levels[level],
                                value=level is Level.EASY,
                                id=f"level-{level.value}",
                            )
                with Vertical(classes="row"):
                    yield Static(labels.who_first, markup=False)
                    with RadioSet(compact=True, id="first"):
                        yield RadioButton(labels.first_me, value=True, id="first-me")
                        yield RadioButton(labels.first_computer, id="first-computer")
                        yield RadioButton(labels.first_random, id="first-random")
                yield Button(labels.play, id="play-computer", variant="primary", compact=True)
            with Vertical(classes="section", id="friend-section"):
                yield Static(labels.play_friend, classes="heading", markup=False)
                yield from self._timer_choice("timer", TURN_TIMERS)
                yield Checkbox(labels.list_in_lobby, id="public", compact=True)
                with Horizontal(classes="row"):
                    yield Button(labels.create_table, id="create-table", compact=True)
                    yield Input(placeholder=labels.code_or_link, id="join-code", compact=True)
                    yield Button(labels.join, id="join", compact=True)
            with Vertical(classes="section", id="online-section"):
                yield Static(labels.play_online, classes="heading", markup=False)
                yield from self._timer_choice("seek-timer", SEEK_TIMERS)
                yield Checkbox(labels.rated_game, value=True, id="rated", compact=True)
                yield Button(labels.find_opponent, id="seek", variant="primary", compact=True)
            with Horizontal(classes="row spaced"):
                yield Button(labels.pass_and_play, id="pass-and-play", compact=True)
                yield Button(labels.browse_lobby, id="lobby", compact=True)
            with Horizontal(classes="row spaced"):
                yield Input(placeholder=labels.watch_what, id="watch-id", compact=True)
                yield Button(labels.watch, id="watch", compact=True)
            yield Static("", id="message", markup=False)
            yield Static(labels.quit_hint, id="hint", markup=False)

    def on_mount(self) -> None:
        self._ready = True
        self.query_one("#play-computer", Button).focus()
        if self.goti_app.connected:
            self.show_connected()

    def on_unmount(self) -> None:
        # A read under way (the player's streaks, say) may answer after the screen is gone.
        self._ready = False

    def _line(self, selector: str) -> Static | None:
        """One of the screen's lines, None while its widgets are not there (being composed
        again or taken down as the app closes): what a late answer would show then is lost
        with the screen."""
        if not self._ready:
            return None
        try:
            return self.query_one(selector, Static)
        except NoMatches:
            return None

    def _timer_choice(self, radio_set_id: str, timers: Sequence[int]) -> ComposeResult:
        """A turn timer to choose among ``timers`` (seconds per move), none at first."""
        labels = self.goti_app.labels
        with Vertical(classes="row"):
            yield Static(labels.turn_timer, markup=False)
            with RadioSet(compact=True, id=radio_set_id):
                for seconds in timers:
                    yield RadioButton(
                        labels.timer_length(seconds),
                        value=seconds == 0,
                        id=f"{radio_set_id}-{seconds}",
                    )

    # -- what the app tells it ----------------------------------------------------------

    def show_connecting(self) -> None:
        """Say the app is connecting."""
        labels = self.goti_app.labels
        self._status(labels.connecting.format(server=self.goti_app.server))
        self.say("")

    def show_unreachable(self, reason: str) -> None:
        """Say the server could not be reached, and how to try again."""
        labels = self.goti_app.labels
        self._status(labels.cannot_connect.format(server=self.goti_app.server, reason=reason))
        self.say(labels.retry_hint)

    def show_connected(self) -> None:
        """Say who the player is on which server."""
        self.show_player()

    def show_player(self) -> None:
        """Show the player's name and streaks."""
        if not self._ready:
            return
        app = self.goti_app
        me = app.me
        if me is None:
            return
        labels = app.labels
        self._status(labels.playing_as.format(name=me.player.display_name, server=app.server))
        streaks = self._line("#streaks")
        if streaks is not None:
            streaks.update(labels.streaks.format(streak=me.win_streak, best=me.best_streak))
        ratings = " · ".join(
            rated_name(labels, labels.variant(rating.variant), rating) for rating in me.ratings
        )
        line = self._line("#ratings")
        if line is not None:
            line.update(labels.your_ratings.format(ratings=ratings) if ratings else "")
            line.display = bool(ratings)

    def _status(self, text: str) -> None:
        line = self._line("#connection-status")
        if line is not None:
            line.update(text)

    def say(self, text: str) -> None:
        """Show one line under the choices (an error, or how to go on)."""
        line = self._line("#message")
        if line is not None:
            line.update(text)

    # -- choices ------------------------------------------------------------------------

    def _chosen(self, radio_set_id: str) -> int:
        index = self.query_one(f"#{radio_set_id}", RadioSet).pressed_index
        return max(index, 0)

    @property
    def variant(self) -> Variant:
        """The rules chosen."""
        return VARIANTS[self._chosen("variant")]

    def action_retry(self) -> None:
        self.goti_app.connect()

    def action_ask_to_quit(self) -> None:
        # One stray key must not end the app: Q asks first (Ctrl+Q quits at once).
        labels = self.goti_app.labels

        def answered(quit_now: bool | None) -> None:
            if quit_now:
                self.app.exit()

        self.app.push_screen(Question(labels.quit_question, labels.yes, labels.no), answered)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        app = self.goti_app
        if not app.connected:
            self.say(app.labels.retry_hint)
            return
        variant = self.variant
        match event.button.id:
            case "play-computer":
                level = list(Level)[self._chosen("level")]
                first = FIRST_MOVERS[self._chosen("first")]
                self._open(
                    lambda: app.goti.create_table(
                        variant=variant, opponent=LEVEL_OPPONENTS[level], starting_player=first
                    )
                )
            case "create-table":
                public = self.query_one("#public", Checkbox).value
                timer = TURN_TIMERS[self._chosen("timer")]
                self._open(
                    lambda: app.goti.create_table(
                        variant=variant,
                        opponent=Opponent.HUMAN,
                        starting_player=StartingPlayer.RANDOM,
                        public=public,
                        turn_timer_seconds=timer,
                    )
                )
            case "join":
                # A join link as pasted is a code too: the server reads the code at its end.
                code = self.query_one("#join-code", Input).value.strip()
                if code:
                    self._open(lambda: app.goti.join_table(code), full=code)
            case "seek":
                from goti_client.terminal.seek_screen import SeekScreen  # noqa: PLC0415

                app.push_screen(
                    SeekScreen(
                        variant,
                        turn_timer=SEEK_TIMERS[self._chosen("seek-timer")],
                        rated=self.query_one("#rated", Checkbox).value,
                    )
                )
            case "pass-and-play":
                self._open(
                    lambda: app.goti.create_table(
                        variant=variant,
                        opponent=Opponent.PASS_AND_PLAY,
                        starting_player=StartingPlayer.PLAYER_1,
                    )
                )
            case "lobby":
                from goti_client.terminal.lobby_screen import LobbyScreen  # noqa: PLC0415

                app.push_screen(LobbyScreen(variant))
            case "watch":
                table_id, code = table_reference(self.query_one("#watch-id", Input).value)
                if table_id or code:
                    self._open(lambda: app.goti.get_table(table_id, code=code))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        button = {"join-code": "#join", "watch-id": "#watch"}.get(event.input.id or "")
        if button is not None:
            self.query_one(button, Button).press()

    def _open(self, call: Callable[[], Awaitable[Table]], *, full: str = "") -> None:
        """Open the table ``call`` returns; when it is a join refused because the table with
        the code ``full`` is full, offer to watch that table instead."""
        self.say("")
        self.run_worker(
            self._open_table(call, full), group="open", exclusive=True, exit_on_error=False
        )

    async def _open_table(self, call: Callable[[], Awaitable[Table]], full: str) -> None:
        app = self.goti_app
        try:
            table = await call()
        except GotiError as error:
            self.say(app.labels.explain(error))
            if full and error.reason is Reason.TABLE_FULL:
                self._offer_to_watch(full)
            return
        app.open_table(table)

    def offer_unfinished_game(self, table_id: str) -> None:
        """Offer to go back to the unfinished game at ``table_id`` (a seek refused for it)."""
        app = self.goti_app
        labels = app.labels

        def answered(go_back: bool | None) -> None:
            if go_back:
                self._open(lambda: app.goti.get_table(table_id))

        question = Question(labels.unfinished_game_question, labels.go_back, labels.no)
        app.push_screen(question, answered)

    def _offer_to_watch(self, code: str) -> None:
        app = self.goti_app
        labels = app.labels

        def answered(watch: bool | None) -> None:
            if watch:
                self._open(lambda: app.goti.get_table(code=code))

        app.push_screen(Question(labels.full_table_question, labels.watch, labels.no), answered)
