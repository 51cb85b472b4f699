"""Play online now: the wait for an opponent, then the table.

The screen seeks as soon as it shows, and says how the wait goes: the players waiting in the
pool, the ratings accepted now (the range widens with the wait), the time waited (counted on
here between the server's messages) and the player's own rating.  Esc cancels the seek and
goes back once the server has taken the player out of the pool (or opens the table of a
pairing that came first).  Once paired it gives way to the new table's game screen, the
opponent's name and rating shown there.  A seek refused goes back to the start screen, which
says why; a player with a paired game to finish is offered to go back to it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, ClassVar, Final, cast

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Static

from goti.rules import Variant
from goti_client.errors import AlreadyAtTableError, GotiError
from goti_client.matchmaking import Seek, SeekPaired, SeekWaiting
from goti_client.terminal.game_panels import format_clock, rated_name

if TYPE_CHECKING:
    from goti_client.terminal.app import GotiApp

TICK_SECONDS: Final = 0.5


class SeekScreen(Screen[None]):
    """Waiting to be paired with an opponent."""

    DEFAULT_CSS: ClassVar[str] = """
    SeekScreen > Vertical {
        padding: 1 2;
    }
    SeekScreen #seek-title {
        text-style: bold;
        color: $accent;
        margin-bottom: 1;
    }
    SeekScreen #seek-connection {
        color: $text-muted;
    }
    SeekScreen #seek-keys {
        margin-top: 1;
        color: $text-muted;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", show=False),
    ]

    def __init__(self, variant: Variant, *, turn_timer: int, rated: bool) -> None:
        super().__init__()
        self.variant = variant
        self.turn_timer = turn_timer
        self.rated = rated
        self.seek: Seek | None = None
        self.waiting: SeekWaiting | None = None
        """The server's latest word on the wait."""
        self._waiting_since = 0.0
        """When it came (``time.monotonic()``): the time waited counts on from there."""
        self._reconnects_heard = 0
        """The seek's reconnects as of its latest word: more since means it is trying again."""
        self._cancelled = False

    @property
    def goti_app(self) -> GotiApp:
        return cast("GotiApp", self.app)

    def compose(self) -> ComposeResult:
        labels = self.goti_app.labels
        kind = labels.rated if self.rated else labels.casual
        title = labels.seek_title.format(
            variant=labels.variant(self.variant),
            timer=labels.timer_length(self.turn_timer),
            kind=kind,
        )
        with Vertical():
            yield Static(title, id="seek-title", markup=False)
            yield Static(labels.connected, id="seek-connection", markup=False)
            yield Static("", id="seekers", markup=False)
            yield Static("", id="rating-range", markup=False)
            yield Static("", id="waited", markup=False)
            yield Static("", id="own-rating", markup=False)
            yield Static(labels.seek_keys, id="seek-keys", markup=False)

    def on_mount(self) -> None:
        self.set_interval(TICK_SECONDS, self._tick)
        self.run_worker(self._seek(), group="seek", exclusive=True, exit_on_error=False)

    async def _seek(self) -> None:
        app = self.goti_app
        try:
            seek = self.seek = app.goti.seek(
                self.variant, turn_timer=self.turn_timer, rated=self.rated
            )
            async with seek:
                async for progress in seek:
                    if isinstance(progress, SeekWaiting):
                        self._show_waiting(progress)
                    else:
                        self._paired(progress)
        except GotiError as error:
            self._refused(error)

    def _show_waiting(self, waiting: SeekWaiting) -> None:
        labels = self.goti_app.labels
        self.waiting, self._waiting_since = waiting, time.monotonic()
        self._reconnects_heard = self.seek.reconnects if self.seek is not None else 0
        self.query_one("#seekers", Static).update(
            labels.seekers_waiting.format(count=waiting.seekers_in_pool)
        )
        if waiting.min_rating is None or waiting.max_rating is None:
            accepted = labels.any_rating
        else:
            accepted = labels.rating_range.format(low=waiting.min_rating, high=waiting.max_rating)
        self.query_one("#rating-range", Static).update(accepted)
        self.query_one("#own-rating", Static).update(
            labels.your_rating.format(rating=waiting.rating)
        )
        self._tick()

    def _tick(self) -> None:
        labels = self.goti_app.labels
        seek, waiting = self.seek, self.waiting
        if waiting is not None:
            waited = waiting.waited_seconds + time.monotonic() - self._waiting_since
            self.query_one("#waited", Static).update(
                labels.waited.format(time=format_clock(waited))
            )
        if self._cancelled:
            return
        reconnecting = seek is not None and seek.reconnects > self._reconnects_heard
        self.query_one("#seek-connection", Static).update(
            labels.reconnecting if reconnecting else labels.connected
        )

    def _paired(self, paired: SeekPaired) -> None:
        if self._cancelled:
            return
        self._open(paired)

    def _open(self, paired: SeekPaired) -> None:
        app = self.goti_app
        name = rated_name(app.labels, paired.opponent.display_name, paired.opponent_rating)
        app.notify(app.labels.paired_with.format(name=name), markup=False)
        app.open_table(paired.table, replace=True)

    def _refused(self, error: GotiError) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        app = self.goti_app
        labels = app.labels
        app.pop_screen()
        app.start_screen.say(labels.explain(error))
        table_id = error.table_id if isinstance(error, AlreadyAtTableError) else None
        if table_id:
            app.start_screen.offer_unfinished_game(table_id)

    async def action_cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        app = self.goti_app
        said = app.labels.seek_cancelled
        if self.seek is not None:
            # The start screen comes back only once the server has the player out of the
            # pool: a seek still waiting there could be paired behind the player's back.
            self.query_one("#seek-connection", Static).update(app.labels.cancelling_seek)
            try:
                paired = await self.seek.cancel()
            except GotiError as error:
                said = app.labels.explain(error)
            else:
                if paired is not None:
                    self._open(paired)
                    return
        app.pop_screen()
        app.start_screen.say(said)
