// Entering a move square by square, over the legal moves the server sent.
//
// The player picks a piece, then each landing square in turn. A multiple jump is entered one
// landing at a time and finishes by itself as soon as only one way is left; choosing a square
// that is neither a landing square nor another piece that can move drops the selection. When
// only one piece can move it is picked from the start. The page knows no rules beyond this:
// every move it can send is one of the server's.

import type { Move } from "./gen/goti/api/v1/game_pb.js";

export type EntryStep =
  /** A piece that can move was picked (or replaced the one picked before). */
  | "selected"
  /** A landing square was added to a multiple jump that has more than one way on. */
  | "extended"
  /** The move is whole: play it. */
  | "completed"
  /** The selection was dropped. */
  | "cancelled"
  /** Nothing changed. */
  | "ignored";

export interface EntryResult {
  readonly step: EntryStep;
  /** The move, when the step completed one. */
  readonly move?: Move;
}

function continues(path: readonly number[], chosen: readonly number[]): boolean {
  return chosen.every((square, index) => path[index] === square);
}

export class MoveEntry {
  readonly legalMoves: readonly Move[];
  /** The squares of the pieces that can move (when a capture is possible, only captures). */
  readonly movable: ReadonlySet<number>;
  private chosen: readonly number[] = [];

  constructor(legalMoves: readonly Move[]) {
    this.legalMoves = legalMoves;
    this.movable = new Set(legalMoves.map((move) => move.path[0] ?? 0));
    this.restart();
  }

  /** The only piece that can move, when just one can: it stays picked. */
  get forcedPiece(): number | undefined {
    if (this.movable.size !== 1) return undefined;
    return this.movable.values().next().value;
  }

  /** The picked piece's square and the landing squares chosen since; empty before a pick. */
  get path(): readonly number[] {
    return this.chosen;
  }

  get selected(): number | undefined {
    return this.chosen[0];
  }

  /** The legal moves that go the way chosen so far (all of them before a pick). */
  get candidates(): Move[] {
    return this.legalMoves.filter((move) => continues(move.path, this.chosen));
  }

  /** The squares the picked piece may land on next; empty before a pick. */
  get targets(): ReadonlySet<number> {
    const depth = this.chosen.length;
    if (depth === 0) return new Set();
    const next = new Set<number>();
    for (const move of this.candidates) {
      const square = move.path[depth];
      if (square !== undefined) next.add(square);
    }
    return next;
  }

  /** The pieces captured by the landings chosen so far, in order. */
  get jumped(): readonly number[] {
    const jumps = this.chosen.length - 1;
    const first = this.candidates[0];
    if (jumps <= 0 || first === undefined || first.captured.length === 0) return [];
    return first.captured.slice(0, jumps);
  }

  /** Choose a square: pick a piece, land on a square, or drop the selection. */
  choose(square: number): EntryResult {
    if (this.targets.has(square)) return this.land(square);
    if (this.movable.has(square) && square !== this.selected) {
      this.chosen = [square];
      return { step: "selected" };
    }
    if (square === this.selected && this.chosen.length === 1) {
      // A second choice of the picked piece lets it go, unless it is the only one.
      return this.cancel();
    }
    if (this.chosen.length === 0) return { step: "ignored" };
    return this.cancel();
  }

  /** Drop the selection (the only piece that can move stays picked). */
  cancel(): EntryResult {
    const before = this.chosen;
    this.restart();
    const same =
      before.length === this.chosen.length &&
      before.every((square, index) => this.chosen[index] === square);
    return { step: same ? "ignored" : "cancelled" };
  }

  private land(square: number): EntryResult {
    this.chosen = [...this.chosen, square];
    const candidates = this.candidates;
    const ways = new Set(candidates.map((move) => move.path.join(",")));
    const whole = candidates.find((move) => move.path.length === this.chosen.length);
    if (ways.size === 1 || whole !== undefined) {
      const move = whole ?? candidates[0];
      this.restart();
      return { step: "completed", move };
    }
    return { step: "extended" };
  }

  private restart(): void {
    const forced = this.forcedPiece;
    this.chosen = forced === undefined ? [] : [forced];
  }
}
