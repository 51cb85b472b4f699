// One table, played or watched: the board, and beside it (below it on a phone) the seats,
// whose turn, the turn timer, warnings, draw offers, the result, the streak against the
// computer and the move list.
//
// The table's watch is the view's source of truth; a command's own events are folded in as
// soon as its reply comes, and the watch skips them later by seq. The table as of its last
// seq is kept in the browser, so a reload draws it at once and the watch resumes from there.
// The view holds that state, the watch and the commands; what each part of the screen shows
// is drawn by tableParts.ts.

import { Code } from "@connectrpc/connect";
import { CALL_TIMEOUT_MS, refusalOf, requestId, retrying } from "./api.js";
import { BoardView } from "./boardView.js";
import { h, replaceChildren } from "./dom.js";
import { Color, type Move } from "./gen/goti/api/v1/game_pb.js";
import {
  Role,
  type Table,
  type TableEvent,
  TableStatus,
  type WatchTableResponse,
} from "./gen/goti/api/v1/tables_pb.js";
import { MoveEntry } from "./moveEntry.js";
import type { Page, View } from "./page.js";
import { keepTable, keptTable } from "./storage.js";
import type { Following } from "./stream.js";
import {
  boardMarks,
  buttons,
  headerText,
  isComputer,
  moveList,
  notices,
  seatLine,
  statusName,
  statusText,
  streakText,
  type TableActions,
  timerText,
  waitingPanel,
} from "./tableParts.js";
import {
  foldEvent,
  foldSnapshot,
  holds,
  myTurn,
  seatAtBottom,
  type TableState,
  turnOf,
} from "./tableState.js";
import type { Reason } from "./words.js";

const TICK_MS = 250;
/** The server counts a finished game in the streaks a moment after it ends. */
const STREAK_SETTLE_MS = 1_000;

type Reply = { events: TableEvent[] };
type Command = (side: Color, seq: bigint, requestId: string) => Promise<Reply>;

function sameMoves(one: readonly Move[], other: readonly Move[]): boolean {
  return (
    one.length === other.length &&
    one.every((move, index) => move.notation === other[index]?.notation)
  );
}

export class TableView implements View {
  readonly element = h("main", { class: "table", "data-view": "table" });
  private state: TableState;
  private entry: MoveEntry | undefined;
  private entryMoves: readonly Move[] | undefined;
  private pending: readonly number[] = [];
  private sending = false;
  private connected = true;
  private message = "";
  private leaving = false;
  private following: Following | undefined;
  /** The plies the move list showed when last drawn. */
  private listedPlies = -1;
  /** Where the player scrolled the move list to, reading older moves; undefined at its end. */
  private readingBack: number | undefined;
  private readonly board: BoardView;
  private readonly ticker: number;
  private readonly keys = (event: KeyboardEvent): void => this.shortcut(event);
  private readonly actions: TableActions = {
    offerDraw: () => this.offerDraw(),
    answerDraw: (accept) => this.answerDraw(accept),
    resign: () => this.resign(),
    takeBack: () => this.takeBack(),
    rematch: () => this.rematch(),
    leave: () => this.leave(),
  };

  constructor(
    private readonly page: Page,
    table: Table,
    role: Role,
  ) {
    const kept = keptTable();
    // A reload: the browser's copy is newer than the link's, or the same table as of later.
    this.state =
      kept !== undefined && kept.table.tableId === table.tableId && kept.table.seq >= table.seq
        ? { table: kept.table, role: kept.role }
        : { table, role };
    this.board = new BoardView(
      (square) => this.choose(square),
      () => this.cancel(),
    );
    this.redraw();
    this.keep();
    this.ticker = window.setInterval(() => this.showTimer(), TICK_MS);
    document.addEventListener("keydown", this.keys);
    this.follow();
  }

  get tableId(): string {
    return this.state.table.tableId;
  }

  close(): void {
    this.leaving = true;
    window.clearInterval(this.ticker);
    document.removeEventListener("keydown", this.keys);
    this.following?.close();
  }

  // -- following the table -------------------------------------------------------------

  private follow(): void {
    const tables = this.page.goti.tables;
    this.following = this.page.stream.follow(
      (signal) =>
        tables.watchTable({ tableId: this.tableId, afterSeq: this.state.table.seq }, { signal }),
      {
        message: (response) => this.take(response),
        status: (status) => this.setConnected(status === "connected"),
        refused: (error) => {
          this.say(this.page.explain(error));
          return error.code !== Code.NotFound;
        },
      },
    );
  }

  private take(response: WatchTableResponse): "go on" | "reconnect" {
    const message = response.message;
    switch (message.case) {
      case "snapshot":
        if (message.value.table !== undefined) {
          this.apply(foldSnapshot(this.state, message.value.table, message.value.yourRole));
        }
        return "go on";
      case "event":
        this.takeEvents([message.value]);
        return "go on";
      case "heartbeat":
        // The table is further on than what the stream brought: something was missed.
        return message.value.seq > this.state.table.seq ? "reconnect" : "go on";
      default:
        return "go on";
    }
  }

  /** Fold in events from the watch or a command's reply (those already in are skipped). */
  private takeEvents(events: readonly TableEvent[]): void {
    let state = this.state;
    for (const event of events) {
      if (event.seq === state.table.seq + 1n && event.kind.case === "drawDeclined") {
        this.say(this.page.words.drawDeclined);
      }
      state = foldEvent(state, event);
    }
    this.apply(state);
  }

  private apply(after: TableState): void {
    const before = this.state;
    if (after === before) return;
    this.state = after;
    this.keep();
    const finishedNow =
      after.table.status === TableStatus.FINISHED && before.table.status !== TableStatus.FINISHED;
    // The streaks, or the ratings, change with the game's end: read them again.
    if (finishedNow && (isComputer(after.table.opponent) || after.table.rated)) void this.settleStreak();
    const rematch = after.table.rematchTableId;
    if (rematch !== "" && rematch !== before.table.rematchTableId) void this.goToRematch(rematch);
    this.redraw();
  }

  /** Keep the unfinished game in the browser; forget it once it is over. */
  private keep(): void {
    const { table, role } = this.state;
    if (role === Role.SPECTATOR || role === Role.UNSPECIFIED) return;
    if (table.status === TableStatus.FINISHED) {
      if (keptTable()?.table.tableId === table.tableId) keepTable(undefined);
      return;
    }
    keepTable({ table, role });
  }

  private async settleStreak(): Promise<void> {
    await this.page.refreshMe();
    await new Promise((resolve) => setTimeout(resolve, STREAK_SETTLE_MS));
    await this.page.refreshMe();
    if (!this.leaving) this.showStreak();
  }

  private async goToRematch(tableId: string): Promise<void> {
    if (this.leaving || this.state.role === Role.SPECTATOR) return;
    await this.page.showTableById(tableId, {
      history: "replace",
      stillWanted: () => !this.leaving,
      failed: (message) => this.say(message),
    });
  }

  private setConnected(connected: boolean): void {
    if (connected === this.connected) return;
    this.connected = connected;
    const words = this.page.words;
    const indicator = this.element.querySelector("#connection");
    if (indicator !== null) indicator.textContent = connected ? words.connected : words.reconnecting;
    this.element.dataset["connected"] = String(connected);
  }

  // -- moves and commands --------------------------------------------------------------

  private refreshEntry(): void {
    const turn = myTurn(this.state);
    if (turn === undefined) {
      this.entry = undefined;
      this.entryMoves = undefined;
      return;
    }
    // A snapshot of the same position (a reconnect) keeps the selection under way.
    if (this.entry !== undefined && this.entryMoves !== undefined && sameMoves(this.entryMoves, turn.legalMoves)) return;
    this.entry = new MoveEntry(turn.legalMoves);
    this.entryMoves = turn.legalMoves;
    const cursor = this.board.cursorSquare;
    if (cursor === undefined || this.entry.movable.has(cursor)) return;
    // The keyboard's cursor goes to the nearest piece that can move.
    let nearest: number | undefined;
    let best = Infinity;
    for (const square of this.entry.movable) {
      const distance = Math.abs(square - cursor);
      if (distance < best) [best, nearest] = [distance, square];
    }
    if (nearest !== undefined) this.board.putCursor(nearest, this.element.contains(document.activeElement));
  }

  private choose(square: number): void {
    const entry = this.entry;
    if (entry === undefined || this.sending) return;
    const result = entry.choose(square);
    if (result.step === "completed" && result.move !== undefined) {
      const path = result.move.path;
      this.pending = path;
      this.command((side, seq, id) =>
        this.page.goti.tables.play(
          {
            tableId: this.tableId,
            requestId: id,
            expectedSeq: seq,
            side,
            move: { case: "path", value: { squares: path } },
          },
          { timeoutMs: CALL_TIMEOUT_MS },
        ),
      );
      return;
    }
    this.showBoard();
  }

  private cancel(): void {
    if (this.entry !== undefined && !this.sending) {
      this.entry.cancel();
      this.showBoard();
    }
  }

  /** The side a command acts for: in pass-and-play the side to move, else the seat's. */
  private side(): Color {
    const turn = turnOf(this.state);
    return this.state.role === Role.BOTH && turn !== undefined ? turn.side : Color.UNSPECIFIED;
  }

  private command(call: Command): void {
    if (this.sending) return;
    this.sending = true;
    this.element.dataset["sending"] = "true";
    this.showBoard();
    const side = this.side();
    const seq = this.state.table.seq;
    const id = requestId();
    void (async () => {
      try {
        const reply = await retrying(() => call(side, seq, id));
        this.say("");
        this.sending = false;
        this.pending = [];
        this.takeEvents(reply.events);
      } catch (error) {
        this.say(this.page.explain(error));
        this.entry?.cancel();
        if (refusalOf(error).reason === "STALE_SEQ") void this.catchUp();
      } finally {
        this.sending = false;
        this.pending = [];
        this.element.dataset["sending"] = "false";
        this.redraw();
      }
    })();
  }

  /** Read the table now: the player acted on a position that had moved on. */
  private async catchUp(): Promise<void> {
    try {
      const reply = await this.page.goti.tables.getTable({ tableId: this.tableId }, { timeoutMs: CALL_TIMEOUT_MS });
      if (reply.table !== undefined) this.apply(foldSnapshot(this.state, reply.table, reply.yourRole));
    } catch {
      // The watch will bring the table as soon as the server answers again.
    }
  }

  private refuse(reason: Reason): void {
    this.say(this.page.words.refusals[reason]);
  }

  /** Whether the player may act now; if not, say why. */
  private mayAct(): boolean {
    const { table, role } = this.state;
    if (role === Role.SPECTATOR) this.refuse("NOT_A_PLAYER");
    else if (table.status === TableStatus.FINISHED) this.refuse("GAME_OVER");
    else if (table.status === TableStatus.WAITING) this.refuse("WAITING_FOR_OPPONENT");
    else if (myTurn(this.state) === undefined) this.refuse("NOT_YOUR_TURN");
    else return true;
    return false;
  }

  private offerDraw(): void {
    if (!this.mayAct()) return;
    this.command((side, seq, id) =>
      this.page.goti.tables.offerDraw(
        { tableId: this.tableId, requestId: id, expectedSeq: seq, side },
        { timeoutMs: CALL_TIMEOUT_MS },
      ),
    );
  }

  private answerDraw(accept: boolean): void {
    const offer = this.state.table.game?.drawOffer ?? Color.UNSPECIFIED;
    const { role } = this.state;
    const seated = role === Role.WHITE || role === Role.BLACK;
    if (seated && offer !== Color.UNSPECIFIED && !holds(role, offer) && myTurn(this.state) === undefined) {
      this.say(this.page.words.drawAnswerOnYourTurn);
      return;
    }
    if (!this.mayAct()) return;
    if (this.state.table.game?.drawOffer === Color.UNSPECIFIED) {
      this.refuse("NO_DRAW_OFFER");
      return;
    }
    this.command((side, seq, id) =>
      this.page.goti.tables.answerDraw(
        { tableId: this.tableId, requestId: id, expectedSeq: seq, side, accept },
        { timeoutMs: CALL_TIMEOUT_MS },
      ),
    );
  }

  private resign(): void {
    if (!this.mayAct()) return;
    const words = this.page.words;
    const dialog = h("dialog", { class: "question", id: "resign-question" },
      h("p", {}, words.resignQuestion),
      h("form", { method: "dialog", class: "row" },
        h("button", { value: "yes", id: "resign-yes", class: "danger" }, words.yes),
        h("button", { value: "no", id: "resign-no", autofocus: true }, words.no)));
    dialog.addEventListener("close", () => {
      dialog.remove();
      if (dialog.returnValue !== "yes") return;
      this.command((side, seq, id) =>
        this.page.goti.tables.resign(
          { tableId: this.tableId, requestId: id, expectedSeq: seq, side },
          { timeoutMs: CALL_TIMEOUT_MS },
        ),
      );
    });
    this.element.append(dialog);
    dialog.showModal();
  }

  private takeBack(): void {
    const { table, role } = this.state;
    if (role === Role.SPECTATOR) {
      this.refuse("NOT_A_PLAYER");
      return;
    }
    if (!isComputer(table.opponent)) {
      this.refuse("TAKE_BACK_NOT_ALLOWED");
      return;
    }
    this.command((_side, seq, id) =>
      this.page.goti.tables.takeBack(
        { tableId: this.tableId, requestId: id, expectedSeq: seq },
        { timeoutMs: CALL_TIMEOUT_MS },
      ),
    );
  }

  private rematch(): void {
    const { table, role } = this.state;
    if (table.status !== TableStatus.FINISHED) {
      this.refuse("GAME_IN_PROGRESS");
      return;
    }
    if (role === Role.SPECTATOR) {
      this.refuse("NOT_A_PLAYER");
      return;
    }
    const id = requestId();
    const seq = table.seq;
    void (async () => {
      try {
        const reply = await retrying(() =>
          this.page.goti.tables.rematch(
            { tableId: this.tableId, requestId: id, expectedSeq: seq },
            { timeoutMs: CALL_TIMEOUT_MS },
          ),
        );
        this.takeEvents(reply.events);
        if (reply.rematchTable !== undefined && !this.leaving) {
          this.page.showTable(reply.rematchTable, reply.yourRole, "replace");
        }
      } catch (error) {
        this.say(this.page.explain(error));
      }
    })();
  }

  private leave(): void {
    this.page.showStart();
  }

  private shortcut(event: KeyboardEvent): void {
    const target = event.target as HTMLElement | null;
    if (target !== null && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) return;
    if (this.element.querySelector("dialog[open]") !== null) return;
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "z") {
      event.preventDefault();
      this.takeBack();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const actions: Record<string, () => void> = {
      d: () => this.offerDraw(),
      y: () => this.answerDraw(true),
      n: () => this.answerDraw(false),
      r: () => this.resign(),
      m: () => this.rematch(),
    };
    const action = actions[event.key.toLowerCase()];
    if (action !== undefined) {
      event.preventDefault();
      action();
    }
  }

  // -- drawing -------------------------------------------------------------------------

  private say(text: string): void {
    this.message = text;
    const line = this.element.querySelector("#message");
    if (line !== null) line.textContent = text;
  }

  redraw(): void {
    this.refreshEntry();
    const words = this.page.words;
    const { table, role } = this.state;
    const game = table.game;
    const bottom = seatAtBottom(this.state);
    Object.assign(this.element.dataset, {
      tableId: table.tableId,
      seq: String(table.seq),
      status: statusName(table),
      myTurn: String(myTurn(this.state) !== undefined),
      role: Role[role].toLowerCase(),
      plies: String(game?.moves.length ?? 0),
    });
    const boardFocused = this.board.element.contains(document.activeElement);
    const list = moveList(game);
    list.addEventListener("scroll", () => this.noteMoveListScroll(list), { passive: true });
    replaceChildren(
      this.element,
      h("header", { class: "table-header" },
        h("h2", { id: "table-header" }, headerText(words, this.state)),
        h("span", { id: "connection", "aria-live": "polite" }, this.connected ? words.connected : words.reconnecting)),
      h("div", { class: "table-body" },
        h("div", { class: "board-column" },
          seatLine(words, this.state, bottom === Color.WHITE ? table.black : table.white, "seat-top"),
          this.board.element,
          seatLine(words, this.state, bottom === Color.WHITE ? table.white : table.black, "seat-bottom"),
          h("p", { class: "hint" }, words.boardKeys)),
        h("aside", { class: "side" },
          h("p", { id: "status", class: "status", "aria-live": "polite" }, statusText(words, this.state)),
          h("p", { id: "timer", class: "timer" }),
          h("ul", { id: "notices", class: "notices" }, ...notices(words, this.state).map((notice) => h("li", {}, notice))),
          h("p", { id: "streak", class: "streak" }),
          buttons(words, this.state, this.sending, this.actions),
          waitingPanel(words, table, (link) => void this.copy(link)),
          h("p", { id: "message", class: "message", role: "status" }, this.message),
          h("h3", {}, words.moves),
          list)),
    );
    this.showBoard();
    if (boardFocused) this.board.focusCursor();
    this.showTimer();
    this.showStreak();
    this.scrollMoveList(game?.moves.length ?? 0);
  }

  /** Scroll the move list, just drawn again, to its newest move; or, when the player has
   * scrolled back to read older moves and no move came since, to where they were. */
  private scrollMoveList(plies: number): void {
    const list = this.element.querySelector<HTMLElement>("#moves");
    if (list === null) return;
    if (plies !== this.listedPlies) this.readingBack = undefined;
    this.listedPlies = plies;
    const top = this.readingBack;
    // In a microtask: a view drawn before it is shown is on the page by then.
    queueMicrotask(() => {
      list.scrollTop = top ?? list.scrollHeight;
    });
  }

  private noteMoveListScroll(list: HTMLElement): void {
    const atEnd = list.scrollTop + list.clientHeight >= list.scrollHeight - 2;
    this.readingBack = atEnd ? undefined : list.scrollTop;
  }

  private showBoard(): void {
    const board = this.state.table.game?.board;
    if (board === undefined) return;
    const marks = boardMarks(this.state, this.entry, this.pending, this.sending);
    this.board.show(board, seatAtBottom(this.state), this.state.table.variant, marks, this.page.words);
  }

  private async copy(link: string): Promise<void> {
    try {
      await navigator.clipboard.writeText(link);
      this.say(this.page.words.linkCopied);
    } catch {
      // No clipboard without HTTPS: select the link so the player can copy it.
      const anchor = this.element.querySelector("#join-link");
      if (anchor !== null) window.getSelection()?.selectAllChildren(anchor);
    }
  }

  private showTimer(): void {
    const line = this.element.querySelector("#timer");
    if (line !== null) line.textContent = timerText(this.page.words, this.state, Date.now());
  }

  private showStreak(): void {
    const line = this.element.querySelector("#streak");
    if (line !== null) line.textContent = streakText(this.page.words, this.state.table, this.page.me?.streaks);
  }
}
