// Where the 32 playable squares sit on screen, seen from one side's seat, and the keyboard's
// cursor over them. White sits at the bottom of the usual diagram (square 1 at b8, top left);
// a player of Black sees the board turned half round.

export const SIZE = 8;
const FILES = "abcdefgh";

export type Bottom = "white" | "black";
export type Direction = "up" | "down" | "left" | "right";

/** The (row, column) of a square in the diagram from White's side. */
function diagramCell(square: number): [number, number] {
  const row = Math.floor((square - 1) / 4);
  const inRow = (square - 1) % 4;
  return [row, row % 2 === 0 ? 2 * inRow + 1 : 2 * inRow];
}

/** A square's algebraic name (square 22 is c3). */
export function squareName(square: number): string {
  const [row, column] = diagramCell(square);
  return `${FILES[column]}${SIZE - row}`;
}

export class BoardLayout {
  constructor(readonly bottom: Bottom) {}

  /** The (row, column) on screen of a playable square, rows top to bottom. */
  cell(square: number): [number, number] {
    const [row, column] = diagramCell(square);
    return this.bottom === "black" ? [SIZE - 1 - row, SIZE - 1 - column] : [row, column];
  }

  /** The playable square at (row, column) on screen; undefined on a light square or off the
   * board. */
  squareAt(row: number, column: number): number | undefined {
    if (row < 0 || row >= SIZE || column < 0 || column >= SIZE) return undefined;
    if (this.bottom === "black") {
      row = SIZE - 1 - row;
      column = SIZE - 1 - column;
    }
    if ((row + column) % 2 === 0) return undefined;
    return row * 4 + Math.floor(column / 2) + 1;
  }

  /** Every playable square in screen order, top row first. */
  squares(): number[] {
    const found: number[] = [];
    for (let row = 0; row < SIZE; row++) {
      for (let column = 0; column < SIZE; column++) {
        const square = this.squareAt(row, column);
        if (square !== undefined) found.push(square);
      }
    }
    return found;
  }
}

/**
 * The keyboard's place on the board: always a playable square. Left and right step two
 * columns along the row; up and down step one row and stay in the same column band, so that
 * holding a key goes straight up the board rather than drifting along a diagonal.
 */
export class BoardCursor {
  private band: number;

  constructor(
    readonly layout: BoardLayout,
    public square: number,
  ) {
    this.band = this.column() + 0.5;
  }

  private column(): number {
    return this.layout.cell(this.square)[1];
  }

  place(square: number): void {
    this.square = square;
    this.band = this.column() + 0.5;
  }

  move(direction: Direction): number {
    const [row, column] = this.layout.cell(this.square);
    if (direction === "left" || direction === "right") {
      const square = this.layout.squareAt(row, column + (direction === "left" ? -2 : 2));
      if (square !== undefined) this.place(square);
      return this.square;
    }
    const nextRow = direction === "up" ? row - 1 : row + 1;
    let best: [number, number] | undefined;
    for (const candidate of [column - 1, column + 1]) {
      const square = this.layout.squareAt(nextRow, candidate);
      if (square === undefined) continue;
      const distance = Math.abs(candidate - this.band);
      if (best === undefined || distance < best[0]) best = [distance, square];
    }
    if (best !== undefined) this.square = best[1];
    return this.square;
  }
}
