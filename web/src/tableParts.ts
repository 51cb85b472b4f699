// The parts of a table's screen, each drawn from what it shows: the header, a seat's line,
// the board's marks, the status line, the notices, the buttons, the share panel of a waiting
// table, the move list, the turn timer and the streak. Nothing here keeps state or calls the
// server: the table view (tableView.ts) holds the table, its watch and the commands, and
// hands each part what it needs.

import { type BoardMarks, NO_MARKS } from "./boardView.js";
import { h } from "./dom.js";
import { Level } from "./gen/goti/api/v1/ai_pb.js";
import { Color, GameWarning, type GameView, Variant } from "./gen/goti/api/v1/game_pb.js";
import type { Streaks } from "./gen/goti/api/v1/players_pb.js";
import { Opponent, Role, type Seat, type Table, TableStatus } from "./gen/goti/api/v1/tables_pb.js";
import type { MoveEntry } from "./moveEntry.js";
import { ratingTag } from "./ratings.js";
import { holds, movesBeforeMoveLimit, myTurn, opponentOf, type TableState, turnOf } from "./tableState.js";
import { colorName, fill, type Words } from "./words.js";

export function formatClock(seconds: number): string {
  const whole = Math.max(0, Math.ceil(seconds));
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
}

export function isComputer(opponent: Opponent): boolean {
  return (
    opponent === Opponent.COMPUTER_EASY ||
    opponent === Opponent.COMPUTER_NORMAL ||
    opponent === Opponent.COMPUTER_HARD ||
    opponent === Opponent.COMPUTER_MASTER
  );
}

/** The computer's levels in the order of `words.levels` (the API's numbers leave a gap:
 * LEVEL_QUICK, which only the turn timer plays, comes before LEVEL_MASTER). */
const NAMED_LEVELS: readonly Level[] = [Level.EASY, Level.NORMAL, Level.HARD, Level.MASTER];

function levelName(words: Words, level: Level): string {
  return words.levels[NAMED_LEVELS.indexOf(level)] ?? "";
}

/** What the table view's buttons (and their keys) do. */
export interface TableActions {
  offerDraw(): void;
  answerDraw(accept: boolean): void;
  resign(): void;
  takeBack(): void;
  rematch(): void;
  leave(): void;
}

/** The header's line: the rules, the table's code, and whether it is rated or watched. */
export function headerText(words: Words, state: TableState): string {
  const { table, role } = state;
  const variantName = table.variant === Variant.RUSSIAN ? words.russian : words.english;
  let header = fill(words.tableHeader, { variant: variantName, code: table.code || table.tableId });
  if (table.rated) header += ` · ${words.ratedGame}`;
  if (role === Role.SPECTATOR) header += ` · ${words.watching}`;
  return header;
}

/** The table's status as the view's data-status says it. */
export function statusName(table: Table): "waiting" | "finished" | "playing" {
  if (table.status === TableStatus.WAITING) return "waiting";
  return table.status === TableStatus.FINISHED ? "finished" : "playing";
}

/** One seat's line: its colour, who sits there (and whether it is the player), their
 * rating and the pieces they captured. */
export function seatLine(words: Words, state: TableState, seat: Seat | undefined, id: string): HTMLElement {
  if (seat === undefined) return h("p", { id });
  let name: string;
  if (seat.computer) name = fill(words.computerSeat, { level: levelName(words, seat.computerLevel) });
  else if (seat.player === undefined) name = words.openSeat;
  else name = seat.player.displayName;
  const mine = holds(state.role, seat.color) && state.role !== Role.BOTH;
  const game = state.table.game;
  const captured = seat.color === Color.WHITE ? game?.capturedByWhite : game?.capturedByBlack;
  const toMove = turnOf(state)?.side === seat.color;
  return h("p", { id, class: `seat${toMove ? " to-move" : ""}`, "data-color": seat.color === Color.WHITE ? "white" : "black" },
    h("span", { class: `swatch ${seat.color === Color.WHITE ? "white" : "black"}`, "aria-hidden": "true" }),
    h("strong", {}, `${colorName(words, seat.color)}: `),
    `${name}${mine ? ` (${words.you})` : ""}`,
    ratingTag(words, seat.rating),
    h("span", { class: "captured" }, ` · ${fill(words.captured, { count: captured ?? 0 })}`));
}

/** Whose turn it is, or how the game ended (and, to a seated player, whether they won). */
export function statusText(words: Words, state: TableState): string {
  const { table, role } = state;
  if (table.status === TableStatus.WAITING) return words.waitingForOpponent;
  const outcome = table.game?.outcome;
  if (outcome !== undefined) {
    const why = words.terminations[outcome.termination] ?? "";
    if (outcome.winner === Color.UNSPECIFIED) return fill(words.drawResult, { why });
    let result = fill(words.wins, { side: colorName(words, outcome.winner), why });
    if (role === Role.WHITE || role === Role.BLACK) {
      result = `${holds(role, outcome.winner) ? words.youWon : words.youLost} ${result}`;
    }
    return result;
  }
  const turn = turnOf(state);
  if (turn === undefined) return "";
  if (myTurn(state) !== undefined && role !== Role.BOTH) return words.yourMove;
  const seat = turn.side === Color.WHITE ? table.white : table.black;
  if (seat?.computer) return words.thinking;
  return fill(words.sideToMove, { side: colorName(words, turn.side) });
}

/** What the player should know now: a capture to make, the game's warnings, a draw offer
 * and what comes next with it, a rematch asked for. */
export function notices(words: Words, state: TableState): string[] {
  const game = state.table.game;
  const turn = myTurn(state);
  const found: string[] = [];
  if (game === undefined) return found;
  if (turn !== undefined && turn.mustCapture.length > 0) found.push(words.mustCapture);
  for (const warning of [...game.warnings].sort()) {
    if (warning === GameWarning.REPETITION) found.push(words.warnings[warning]);
    if (warning === GameWarning.MOVE_LIMIT_NEAR) {
      found.push(fill(words.warnings[warning], { count: movesBeforeMoveLimit(game) }));
    }
  }
  const offer = drawOfferNotice(words, state, game);
  if (offer !== undefined) found.push(offer);
  const { table, role } = state;
  const asked = table.rematchOfferedBy;
  if (table.status === TableStatus.FINISHED && asked !== Color.UNSPECIFIED && table.rematchTableId === "") {
    if (holds(role, asked) && role !== Role.BOTH) found.push(words.youAskedRematch);
    else found.push(fill(words.rematchOffered, { side: colorName(words, asked) }));
  }
  return found;
}

/** The open draw offer, told to each side as what comes next for them. */
function drawOfferNotice(words: Words, state: TableState, game: GameView): string | undefined {
  const offer = game.drawOffer;
  if (offer === Color.UNSPECIFIED || state.table.status !== TableStatus.PLAYING) return undefined;
  // The offer is made before the offerer's move and answered on the opponent's turn, after
  // it: each side is told what comes next.
  const { role } = state;
  const turn = myTurn(state);
  const side = colorName(words, offer);
  const other = colorName(words, opponentOf(offer));
  const seated = role === Role.WHITE || role === Role.BLACK;
  if (turn !== undefined && turn.side === opponentOf(offer)) return fill(words.drawOffered, { side });
  if (seated && holds(role, offer)) {
    const stillToMove = turnOf(state)?.side === offer;
    return fill(stillToMove ? words.youOfferedDrawMove : words.youOfferedDrawWait, { side: other });
  }
  if (seated) return fill(words.drawOfferComing, { side });
  return fill(words.drawOfferOpen, { side, other });
}

/** The buttons the player may use now, each with its key; disabled while a command is on
 * its way. */
export function buttons(words: Words, state: TableState, sending: boolean, actions: TableActions): HTMLElement {
  const { table, role } = state;
  const game = table.game;
  const turn = myTurn(state);
  const offer = game?.drawOffer ?? Color.UNSPECIFIED;
  const answering = turn !== undefined && offer !== Color.UNSPECIFIED && offer === opponentOf(turn.side);
  const button = (id: string, label: string, shown: boolean, action: () => void, kind = "", keys = ""): HTMLElement | null =>
    shown
      ? h("button", { id, type: "button", class: kind, "aria-keyshortcuts": keys || undefined, disabled: sending, onclick: action }, label)
      : null;
  return h("div", { class: "buttons" },
    button("offer-draw", words.offerDraw, turn !== undefined && turn.mayOfferDraw && offer === Color.UNSPECIFIED, () => actions.offerDraw(), "", "D"),
    button("accept-draw", words.acceptDraw, answering, () => actions.answerDraw(true), "primary", "Y"),
    button("decline-draw", words.declineDraw, answering, () => actions.answerDraw(false), "", "N"),
    button("resign", words.resign, turn !== undefined, () => actions.resign(), "danger", "R"),
    button("take-back", words.takeBack, table.status === TableStatus.PLAYING && isComputer(table.opponent) && role !== Role.SPECTATOR && (game?.moves.length ?? 0) > 0, () => actions.takeBack(), "", "Control+Z"),
    button("rematch", words.rematch, table.status === TableStatus.FINISHED && role !== Role.SPECTATOR && table.rematchTableId === "", () => actions.rematch(), "primary", "M"),
    button("leave", words.leave, true, () => actions.leave()),
  );
}

/** A waiting table's code and join link to share, with a button that copies the link. */
export function waitingPanel(words: Words, table: Table, copy: (link: string) => void): HTMLElement | null {
  if (table.status !== TableStatus.WAITING) return null;
  const link = table.joinUrl;
  return h("div", { class: "card share" },
    h("p", {}, words.shareCode.replace("{code}", ""), h("strong", { id: "table-code" }, table.code)),
    h("p", {}, words.shareLink.replace("{link}", ""), h("a", { id: "join-link", href: link }, link)),
    h("button", { id: "copy-link", type: "button", onclick: () => copy(link) }, words.copyLink));
}

/** A move's notation with a line-break opportunity after each hop, so that a long capture
 * (`h4:f6:d4:b6:d8:f6:h8`) wraps inside its column. */
function breakable(notation: string): (string | HTMLElement)[] {
  const parts: (string | HTMLElement)[] = [];
  for (const piece of notation.split(/(?<=[:x-])/)) {
    if (parts.length > 0) parts.push(h("wbr"));
    parts.push(piece);
  }
  return parts;
}

/** What the board marks: the last move; while a move is on its way, its path; else, on the
 * player's turn, what the move entry offers (the pieces that may move or must capture, the
 * landings chosen and those left). */
export function boardMarks(
  state: TableState,
  entry: MoveEntry | undefined,
  pending: readonly number[],
  sending: boolean,
): BoardMarks {
  const marks: BoardMarks = { ...NO_MARKS, lastMove: state.lastMove };
  if (pending.length > 0) return { ...marks, path: pending };
  const turn = myTurn(state);
  if (entry === undefined || turn === undefined || sending) return marks;
  return {
    mustCapture: new Set(turn.mustCapture),
    movable: entry.movable,
    path: entry.path,
    targets: entry.targets,
    jumped: entry.jumped,
    lastMove: state.lastMove,
  };
}

/** The moves played, two plies to a row, numbered from the side that moved first. */
export function moveList(game: GameView | undefined): HTMLElement {
  const moves = game?.moves ?? [];
  // Number full moves from the side that moved first in this game.
  const firstToMove = game?.variant === Variant.RUSSIAN ? "W" : "B";
  const offset = game !== undefined && game.startFen !== "" && !game.startFen.startsWith(firstToMove) ? 1 : 0;
  const rows: HTMLElement[] = [];
  const plies: (string | undefined)[] = [...Array<undefined>(offset).fill(undefined), ...moves];
  for (let index = 0; index < plies.length; index += 2) {
    const pair = plies.slice(index, index + 2);
    rows.push(
      h("li", {},
        ...pair.map((notation, half) =>
          notation === undefined
            ? h("span", { class: "ply" }, "…")
            : h("span", { class: "ply", "data-ply": index + half - offset }, ...breakable(notation)))),
    );
  }
  return h("ol", { id: "moves", class: "moves" }, ...rows);
}

/** The time left for the move at ``now`` (ms since the epoch); empty without a timer. */
export function timerText(words: Words, state: TableState, now: number): string {
  const deadline = state.table.turnDeadline;
  if (deadline === undefined || turnOf(state) === undefined) return "";
  const left = Number(deadline.seconds) + deadline.nanos / 1e9 - now / 1000;
  return fill(words.timeLeft, { time: formatClock(left) });
}

/** The player's streak against the computer, at a table against it; else empty. */
export function streakText(words: Words, table: Table, streaks: Streaks | undefined): string {
  return streaks !== undefined && isComputer(table.opponent)
    ? fill(words.winStreak, { streak: streaks.winStreak, best: streaks.bestStreak })
    : "";
}
