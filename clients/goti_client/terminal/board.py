"""The board widget: draws a position with its marks and turns keys and clicks into chosen
squares.  It knows nothing of the rules; the game screen tells it what to mark."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Final

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Offset, Size
from textual.message import Message
from textual.widget import Widget

from goti.rules import Color, Move, Position, Square
from goti_client.terminal.board_layout import SIZE, BoardCursor, BoardLayout, Direction

LIGHT_SQUARE: Final = "#e8d6b3"
DARK_SQUARE: Final = "#8b5a2b"
LAST_MOVE: Final = "#a9773f"
MUST_CAPTURE: Final = "#b03a2e"
SELECTED: Final = "#d4a017"
PATH: Final = "#c79a3b"
TARGET: Final = "#4f8a3a"
CURSOR: Final = "#2f6db5"
LABEL: Final = "#9a9a9a"
PIECE_COLORS: Final = {Color.WHITE: "#fafafa", Color.BLACK: "#141414"}
MAN: Final = "●"
KING: Final = "♛"
JUMPED: Final = "✕"
TARGET_MARK: Final = "·"
TARGET_MARK_COLOR: Final = "#ffffff"
NUMBER_COLOR: Final = "#d8c8a8"


@dataclass(frozen=True, slots=True)
class CellSize:
    """How many terminal cells one square takes."""

    width: int
    height: int


LARGE: Final = CellSize(7, 3)
SMALL: Final = CellSize(3, 1)
LABEL_WIDTH: Final = 3
LARGE_BOARD_MIN_ROWS: Final = 3 * SIZE + 6
"""Terminal rows needed before the board is drawn with large squares."""


@dataclass(frozen=True, slots=True)
class BoardMarks:
    """What to show on the board beside the pieces."""

    must_capture: frozenset[Square] = frozenset()
    path: tuple[Square, ...] = ()
    """The picked piece and the landing squares chosen so far."""
    targets: frozenset[Square] = frozenset()
    jumped: tuple[Square, ...] = ()
    last_move: Move | None = None


class BoardView(Widget, can_focus=True):
    """A checkers board: arrows move the cursor over the dark squares, Enter or Space (or a
    click) chooses a square, Esc cancels."""

    DEFAULT_CSS: ClassVar[str] = """
    BoardView {
        width: auto;
        height: auto;
        padding: 0;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "step('up')", "up", show=False),
        Binding("down", "step('down')", "down", show=False),
        Binding("left", "step('left')", "left", show=False),
        Binding("right", "step('right')", "right", show=False),
        Binding("enter,space", "choose", "choose", show=False),
        Binding("escape", "cancel", "cancel", show=False),
    ]

    class Chosen(Message):
        """The player chose a square."""

        def __init__(self, square: Square) -> None:
            super().__init__()
            self.square = square

    class Cancelled(Message):
        """The player pressed Esc."""

    def __init__(self, position: Position, layout: BoardLayout, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.position = position
        self.board_layout = layout
        self.marks = BoardMarks()
        self.cursor = BoardCursor(layout, self._first_square(layout))

    @staticmethod
    def _first_square(layout: BoardLayout) -> Square:
        square = layout.square_at(SIZE - 1, 0) or layout.square_at(SIZE - 1, 1)
        assert square is not None
        return square

    # -- what to show -----------------------------------------------------------------

    def show(self, position: Position, layout: BoardLayout, marks: BoardMarks) -> None:
        """Draw ``position`` from ``layout``'s side with ``marks``."""
        if layout != self.board_layout:
            self.board_layout = layout
            self.cursor = BoardCursor(layout, self.cursor.square)
        self.position = position
        self.marks = marks
        self.refresh()

    def put_cursor(self, square: Square) -> None:
        """Move the keyboard cursor to ``square``."""
        self.cursor.place(square)
        self.refresh()

    # -- geometry -----------------------------------------------------------------------

    @property
    def cell_size(self) -> CellSize:
        """The size of one square, from the room the terminal gives."""
        return LARGE if self.app.size.height >= LARGE_BOARD_MIN_ROWS else SMALL

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return 2 * LABEL_WIDTH + SIZE * self.cell_size.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return SIZE * self.cell_size.height + 2

    def square_offset(self, square: Square) -> Offset:
        """Where on the widget the middle of ``square`` is (for a click)."""
        cell = self.cell_size
        row, column = self.board_layout.cell(square)
        return Offset(
            LABEL_WIDTH + column * cell.width + cell.width // 2,
            1 + row * cell.height + cell.height // 2,
        )

    def square_at_offset(self, offset: Offset) -> Square | None:
        """The playable square under ``offset``, if any."""
        cell = self.cell_size
        x, y = offset.x - LABEL_WIDTH, offset.y - 1
        if x < 0 or y < 0:
            return None
        return self.board_layout.square_at(y // cell.height, x // cell.width)

    # -- input --------------------------------------------------------------------------

    def action_step(self, direction: str) -> None:
        self.cursor.move(Direction(direction))
        self.refresh()

    def action_choose(self) -> None:
        self.post_message(self.Chosen(self.cursor.square))

    def action_cancel(self) -> None:
        self.post_message(self.Cancelled())

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        square = None if offset is None else self.square_at_offset(offset)
        if square is not None:
            self.focus()
            self.cursor.place(square)
            self.refresh()
            self.post_message(self.Chosen(square))

    # -- drawing ------------------------------------------------------------------------

    def render(self) -> Text:
        cell = self.cell_size
        variant = self.position.variant
        row_labels = self.board_layout.row_labels(variant)
        column_labels = self.board_layout.column_labels(variant)
        label_style = Style(color=LABEL)
        lines: list[Text] = [self._column_line(column_labels, cell, label_style)]
        for row in range(SIZE):
            left, right = row_labels[row]
            for line in range(cell.height):
                middle = line == cell.height // 2
                text = Text(f"{left:>{LABEL_WIDTH - 1}} " if middle else " " * LABEL_WIDTH)
                text.stylize(label_style)
                for column in range(SIZE):
                    text.append_text(self._cell_line(row, column, line, cell))
                text.append(
                    f" {right:<{LABEL_WIDTH - 1}}" if middle else " " * LABEL_WIDTH, label_style
                )
                lines.append(text)
        lines.append(self._column_line(column_labels, cell, label_style))
        return Text("\n").join(lines)

    @staticmethod
    def _column_line(labels: list[str], cell: CellSize, style: Style) -> Text:
        text = " " * LABEL_WIDTH + "".join(label.center(cell.width) for label in labels)
        return Text(text.ljust(2 * LABEL_WIDTH + SIZE * cell.width), style=style)

    def _background(self, square: Square) -> str:
        marks = self.marks
        if square == self.cursor.square and self.has_focus:
            return CURSOR
        if marks.path and square == marks.path[0]:
            return SELECTED
        if square in marks.targets:
            return TARGET
        if square in marks.path:
            return PATH
        if square in marks.must_capture:
            return MUST_CAPTURE
        if marks.last_move is not None and square in marks.last_move.path:
            return LAST_MOVE
        return DARK_SQUARE

    def _glyph(self, square: Square) -> tuple[str, str] | None:
        """What is drawn on ``square``, as (glyph, colour); None for nothing."""
        marks = self.marks
        # Mid-jump the picked piece is drawn where it has got to, not where it started.
        on_its_way = len(marks.path) > 1
        piece = self.position.piece_at(square)
        if on_its_way and square == marks.path[0]:
            piece = None
        if on_its_way and square == marks.path[-1]:
            piece = self.position.piece_at(marks.path[0])
        if piece is not None:
            glyph = JUMPED if square in marks.jumped else KING if piece.king else MAN
            return glyph, PIECE_COLORS[piece.color]
        if square in marks.targets:
            return TARGET_MARK, TARGET_MARK_COLOR
        return None

    def _cell_line(self, row: int, column: int, line: int, cell: CellSize) -> Text:
        square = self.board_layout.square_at(row, column)
        if square is None:
            return Text(" " * cell.width, style=Style(bgcolor=LIGHT_SQUARE))
        background = self._background(square)
        blank = Style(bgcolor=background)
        # English squares carry their numbers, as in the books; Russian ones are named by
        # the files and ranks round the edge.
        if cell.height > 1 and line == 0 and not self.position.variant.algebraic:
            return Text(
                f"{square:<{cell.width}}",
                style=Style(color=NUMBER_COLOR, bgcolor=background, dim=True),
            )
        drawn = self._glyph(square) if line == cell.height // 2 else None
        if drawn is None:
            return Text(" " * cell.width, style=blank)
        glyph, color = drawn
        return Text(
            glyph.center(cell.width), style=Style(color=color, bgcolor=background, bold=True)
        )
