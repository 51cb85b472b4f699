// A table kept current from its watch: each snapshot or event folded into the Table the page
// draws, with the last move played. An event at or below the table's seq is already folded
// in and is skipped, so a command's own reply and the watch that brings the same events later
// never apply a change twice.

import { Color, type GameView, type Move, type Turn } from "./gen/goti/api/v1/game_pb.js";
import { Role, type Table, type TableEvent, TableStatus } from "./gen/goti/api/v1/tables_pb.js";

const MOVE_LIMIT_PLIES = 80;

export interface TableState {
  readonly table: Table;
  readonly role: Role;
  /** The latest move played, to mark on the board; undefined after a snapshot or take-back. */
  readonly lastMove?: Move | undefined;
}

export function holds(role: Role, color: Color): boolean {
  return (
    role === Role.BOTH ||
    (role === Role.WHITE && color === Color.WHITE) ||
    (role === Role.BLACK && color === Color.BLACK)
  );
}

export function opponentOf(color: Color): Color {
  return color === Color.WHITE ? Color.BLACK : Color.WHITE;
}

/** The side to move and its legal moves, while the game goes on. */
export function turnOf(state: TableState): Turn | undefined {
  if (state.table.status !== TableStatus.PLAYING) return undefined;
  return state.table.game?.turn;
}

/** The turn, when the page's player holds the seat of the side to move. */
export function myTurn(state: TableState): Turn | undefined {
  const turn = turnOf(state);
  return turn !== undefined && holds(state.role, turn.side) ? turn : undefined;
}

/** The side drawn at the bottom: the player's own, else White as in the diagrams. */
export function seatAtBottom(state: TableState): Color {
  return state.role === Role.BLACK ? Color.BLACK : Color.WHITE;
}

/** Moves each before the forty-move draw (counting the side to move's next). */
export function movesBeforeMoveLimit(game: GameView): number {
  return Math.max(0, Math.floor((MOVE_LIMIT_PLIES - game.quietPlies + 1) / 2));
}

function has(mask: number, square: number): boolean {
  return ((mask >>> (square - 1)) & 1) === 1;
}

/** The state after a snapshot (the whole table, as the watcher's role sees it). */
export function foldSnapshot(state: TableState | undefined, table: Table, role: Role): TableState {
  if (state !== undefined && state.table.tableId === table.tableId && table.seq < state.table.seq) {
    return state;
  }
  return { table, role };
}

/** The state after ``event``; ``state`` itself when the event is already folded in. */
export function foldEvent(state: TableState, event: TableEvent): TableState {
  if (event.seq <= state.table.seq) return state;
  let table: Table = { ...state.table, seq: event.seq, turnDeadline: event.turnDeadline };
  let game = table.game;
  let lastMove = state.lastMove;
  if (game === undefined) return { ...state, table };
  const kind = event.kind;
  switch (kind.case) {
    case "movePlayed": {
      const played = kind.value;
      const move = played.record?.move;
      const origin = move?.path[0] ?? 0;
      const board = game.board;
      const kingMoved = board !== undefined && has(board.kings, origin);
      const quiet = kingMoved && (move?.captured.length ?? 0) === 0;
      game = {
        ...game,
        board: played.board,
        moves: [...game.moves, move?.notation ?? "?"],
        capturedByWhite: played.capturedByWhite,
        capturedByBlack: played.capturedByBlack,
        drawOffer: played.record?.declinedDrawOffer ? Color.UNSPECIFIED : game.drawOffer,
        warnings: played.record?.warnings ?? [],
        outcome: played.record?.outcome,
        turn: played.next,
        quietPlies: quiet ? game.quietPlies + 1 : 0,
      };
      lastMove = move;
      break;
    }
    case "drawOffered": {
      const turn = game.turn === undefined ? undefined : { ...game.turn, mayOfferDraw: false };
      game = { ...game, drawOffer: kind.value.by, turn };
      break;
    }
    case "drawDeclined":
    case "drawAccepted":
      game = { ...game, drawOffer: Color.UNSPECIFIED };
      break;
    case "movesTakenBack":
      game = kind.value.game ?? game;
      lastMove = undefined;
      break;
    case "gameOver":
      game = { ...game, outcome: kind.value.outcome, turn: undefined, drawOffer: Color.UNSPECIFIED };
      table = { ...table, status: TableStatus.FINISHED, turnDeadline: undefined };
      break;
    case "playerJoined": {
      const seat = { $typeName: "goti.api.v1.Seat" as const, color: kind.value.color, player: kind.value.player, computer: false, computerLevel: 0 };
      table =
        kind.value.color === Color.WHITE ? { ...table, white: seat } : { ...table, black: seat };
      table = { ...table, status: TableStatus.PLAYING };
      break;
    }
    case "rematchOffered":
      table = { ...table, rematchOfferedBy: kind.value.by };
      break;
    case "rematchStarted":
      table = { ...table, rematchTableId: kind.value.tableId };
      break;
    default:
      // Kinds this page does not know yet change nothing it draws.
      break;
  }
  if (game.outcome !== undefined) {
    table = { ...table, status: TableStatus.FINISHED, turnDeadline: undefined };
  }
  return { table: { ...table, game }, role: state.role, lastMove };
}
