"""A question with two answers, over whatever screen asked it.

The question is a band across the whole screen, edged above and below only: some terminals
draw Devanagari wider than Textual reckons, and a border after the question's words would
stand out of line.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class Question(ModalScreen[bool]):
    """Asks one question: Y or the first button answers yes, N, Esc or the second no."""

    DEFAULT_CSS: ClassVar[str] = """
    Question {
        align: center middle;
    }
    Question > Vertical {
        width: 100%;
        height: auto;
        border-top: thick $accent;
        border-bottom: thick $accent;
        background: $surface;
        padding: 1 4;
    }
    Question Horizontal {
        height: auto;
        margin-top: 1;
        align-horizontal: center;
    }
    Question Button {
        margin: 0 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", show=False),
        Binding("n,escape", "answer(False)", show=False),
    ]

    def __init__(self, question: str, yes: str, no: str) -> None:
        super().__init__()
        self.question = question
        self._yes = yes
        self._no = no

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, id="question", markup=False)
            with Horizontal():
                yield Button(self._yes, id="yes", variant="primary")
                yield Button(self._no, id="no")

    def on_mount(self) -> None:
        self.query_one("#yes", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
