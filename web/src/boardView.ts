// The board: draws a position with its marks and turns clicks, taps and keys into chosen
// squares. It knows nothing of the rules; the table view tells it what to mark.
//
// Each playable square is a button; the keyboard's cursor is the focused one (arrows move it,
// Enter or Space chooses it as a click would, Esc cancels).

import { type Board, Color, type Move, Variant } from "./gen/goti/api/v1/game_pb.js";
import { BoardCursor, BoardLayout, type Direction, SIZE, squareName } from "./boardLayout.js";
import { h } from "./dom.js";
import { fill, type Words } from "./words.js";

export interface BoardMarks {
  /** The pieces that must capture (one of them must), pulsing. */
  readonly mustCapture: ReadonlySet<number>;
  /** The pieces the player may pick. */
  readonly movable: ReadonlySet<number>;
  /** The picked piece and the landing squares chosen so far: the hops, dotted. */
  readonly path: readonly number[];
  /** Where the picked piece may land next. */
  readonly targets: ReadonlySet<number>;
  /** The pieces the chosen landings jump. */
  readonly jumped: readonly number[];
  readonly lastMove?: Move | undefined;
}

export const NO_MARKS: BoardMarks = {
  mustCapture: new Set(),
  movable: new Set(),
  path: [],
  targets: new Set(),
  jumped: [],
};

const ARROWS: Readonly<Record<string, Direction>> = {
  ArrowUp: "up",
  ArrowDown: "down",
  ArrowLeft: "left",
  ArrowRight: "right",
};

function has(mask: number, square: number): boolean {
  return ((mask >>> (square - 1)) & 1) === 1;
}

export class BoardView {
  readonly element: HTMLElement;
  private layout: BoardLayout | undefined;
  private cursor: BoardCursor | undefined;
  private readonly buttons = new Map<number, HTMLButtonElement>();

  constructor(
    private readonly onChoose: (square: number) => void,
    private readonly onCancel: () => void,
  ) {
    this.element = h("div", { class: "board", role: "group", onkeydown: (event) => this.key(event as KeyboardEvent) });
  }

  /** Draw ``board`` from ``bottom``'s side with ``marks``. */
  show(board: Board, bottom: Color, variant: Variant, marks: BoardMarks, words: Words): void {
    const side = bottom === Color.BLACK ? "black" : "white";
    this.element.setAttribute("aria-label", words.board);
    if (this.layout?.bottom !== side) this.lay(new BoardLayout(side), variant);
    const path = new Set(marks.path);
    const jumped = new Set(marks.jumped);
    const last = new Set(marks.lastMove?.path ?? []);
    for (const [square, button] of this.buttons) {
      const white = has(board.white, square);
      const black = has(board.black, square);
      const king = has(board.kings, square);
      const piece = white || black;
      const classes = button.classList;
      classes.toggle("must-capture", marks.mustCapture.has(square));
      classes.toggle("movable", marks.movable.has(square));
      classes.toggle("selected", marks.path[0] === square);
      classes.toggle("hop", path.has(square) && marks.path[0] !== square);
      classes.toggle("target", marks.targets.has(square));
      classes.toggle("jumped", jumped.has(square));
      classes.toggle("last-move", last.has(square));
      const pieceElement = button.querySelector(".piece");
      if (piece) {
        const kind = `piece ${white ? "white" : "black"}${king ? " king" : ""}`;
        if (pieceElement === null) button.prepend(h("span", { class: kind, "aria-hidden": "true" }));
        else pieceElement.className = kind;
      } else {
        pieceElement?.remove();
      }
      const name = variant === Variant.RUSSIAN ? squareName(square) : String(square);
      let label = fill(words.square, { square: name });
      if (piece) {
        label += `: ${white ? words.white : words.black} ${king ? words.king : words.man}`;
      }
      button.setAttribute("aria-label", label);
      button.dataset["piece"] = piece ? `${white ? "white" : "black"}${king ? "-king" : ""}` : "";
    }
  }

  /** Put the keyboard's cursor on ``square`` (a piece that can move, when a turn starts). */
  putCursor(square: number, focus: boolean): void {
    this.cursor?.place(square);
    this.syncCursor(focus);
  }

  /** Give the keyboard's focus back to the cursor's square (after the page was redrawn). */
  focusCursor(): void {
    this.syncCursor(true);
  }

  get cursorSquare(): number | undefined {
    return this.cursor?.square;
  }

  private lay(layout: BoardLayout, variant: Variant): void {
    this.layout = layout;
    this.buttons.clear();
    const cells: HTMLElement[] = [];
    for (let row = 0; row < SIZE; row++) {
      for (let column = 0; column < SIZE; column++) {
        const square = layout.squareAt(row, column);
        if (square === undefined) {
          cells.push(h("div", { class: "cell light", "aria-hidden": "true" }));
          continue;
        }
        const name = variant === Variant.RUSSIAN ? squareName(square) : String(square);
        const button = h(
          "button",
          {
            class: "cell dark",
            type: "button",
            tabindex: -1,
            "data-square": square,
            onclick: () => {
              this.cursor?.place(square);
              this.syncCursor(false);
              this.onChoose(square);
            },
          },
          h("span", { class: "coordinate", "aria-hidden": "true" }, name),
        );
        this.buttons.set(square, button);
        cells.push(button);
      }
    }
    this.element.replaceChildren(...cells);
    // The bottom-left playable square, where the player's own pieces are.
    const start = layout.squareAt(SIZE - 1, 0) ?? layout.squareAt(SIZE - 1, 1) ?? 1;
    this.cursor = new BoardCursor(layout, this.cursor?.square ?? start);
    this.syncCursor(false);
  }

  private syncCursor(focus: boolean): void {
    const at = this.cursor?.square;
    for (const [square, button] of this.buttons) {
      button.tabIndex = square === at ? 0 : -1;
      button.classList.toggle("cursor", square === at);
    }
    if (focus && at !== undefined) this.buttons.get(at)?.focus();
  }

  private key(event: KeyboardEvent): void {
    const direction = ARROWS[event.key];
    if (direction !== undefined && this.cursor !== undefined) {
      event.preventDefault();
      this.cursor.move(direction);
      this.syncCursor(true);
      return;
    }
    if (event.key === "Escape") {
      event.preventDefault();
      this.onCancel();
    }
    // Enter and Space press the focused square's button, which chooses it.
  }
}
