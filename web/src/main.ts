// Goti's web page: signs in as the guest kept in this browser (a new one the first time),
// then shows what its address asks for: the start screen (`/`), the lobby (`/lobby`), the
// leaderboard (`/leaderboard`), a join link (`/join/CODE`) or a table (`/table/ID`, played or
// watched; a reload comes back here).

import { Code, ConnectError } from "@connectrpc/connect";
import { CALL_TIMEOUT_MS, Goti, refusalOf } from "./api.js";
import { h, replaceChildren } from "./dom.js";
import { Variant } from "./gen/goti/api/v1/game_pb.js";
import type { GetMeResponse } from "./gen/goti/api/v1/players_pb.js";
import type { Role, Table } from "./gen/goti/api/v1/tables_pb.js";
import { LeaderboardView } from "./leaderboardView.js";
import { LobbyView } from "./lobbyView.js";
import type { History, Page, TableOpening, View } from "./page.js";
import { StartView } from "./startView.js";
import {
  chosenProtocol,
  keepLanguage,
  keepPlayer,
  keptLanguage,
  keptPlayer,
  keptTable,
} from "./storage.js";
import { TabStream } from "./stream.js";
import { TableView } from "./tableView.js";
import { browserLanguage, fill, type Language, WORDS, type Words } from "./words.js";

const SIGN_IN_RETRY_MS = 3_000;

class App implements Page {
  readonly goti = new Goti(window.location.origin, chosenProtocol(window.location.search));
  readonly stream = new TabStream();
  me: GetMeResponse | undefined;
  private language: Language = keptLanguage() ?? browserLanguage(navigator.languages);
  private view: View | undefined;
  private readonly header = h("header", { class: "page-header" });
  private readonly body = h("div", { class: "page-body" });

  get words(): Words {
    return WORDS[this.language];
  }

  start(root: HTMLElement): void {
    replaceChildren(root, this.header, this.body);
    this.drawHeader();
    window.addEventListener("popstate", () => void this.route("replace"));
    void this.signIn();
  }

  private drawHeader(): void {
    const words = this.words;
    document.documentElement.lang = this.language;
    document.title = words.title;
    replaceChildren(
      this.header,
      h("h1", {}, h("a", { href: "/", onclick: (event: Event) => { event.preventDefault(); this.showStart(); } }, words.title)),
      h("button", { id: "language", type: "button", lang: this.language === "en" ? "ne" : "en",
        onclick: () => this.switchLanguage() }, words.otherLanguage),
    );
  }

  private switchLanguage(): void {
    this.language = this.language === "en" ? "ne" : "en";
    keepLanguage(this.language);
    this.drawHeader();
    this.view?.redraw();
  }

  // -- the player ---------------------------------------------------------------------

  private async signIn(): Promise<void> {
    this.show(new StartView(this), "replace", undefined);
    for (;;) {
      try {
        await this.becomeKnown();
        break;
      } catch (error) {
        this.say(this.explain(error));
        await new Promise((resolve) => setTimeout(resolve, SIGN_IN_RETRY_MS));
      }
    }
    await this.route("replace");
  }

  /** Sign in as the kept guest; make a new one the first time, or when the kept token is
   * no longer a player's. */
  private async becomeKnown(): Promise<void> {
    const kept = keptPlayer();
    if (kept !== undefined) {
      this.goti.signIn(kept.token);
      try {
        this.me = await this.goti.players.getMe({}, { timeoutMs: CALL_TIMEOUT_MS });
        return;
      } catch (error) {
        if (ConnectError.from(error).code !== Code.Unauthenticated) throw error;
      }
    }
    this.goti.signIn(undefined);
    const guest = await this.goti.players.createGuest({}, { timeoutMs: CALL_TIMEOUT_MS });
    keepPlayer({ token: guest.playerToken, playerId: guest.player?.playerId ?? "" });
    this.goti.signIn(guest.playerToken);
    this.me = await this.goti.players.getMe({}, { timeoutMs: CALL_TIMEOUT_MS });
  }

  async refreshMe(): Promise<void> {
    try {
      this.me = await this.goti.players.getMe({}, { timeoutMs: CALL_TIMEOUT_MS });
    } catch {
      // Streaks are shown again at the next chance.
    }
  }

  explain(error: unknown): string {
    const words = this.words;
    const refusal = refusalOf(error);
    const reason: string | undefined = refusal.reason;
    if (reason === "RATE_LIMITED") {
      const wait = Number(refusal.metadata["retryAfterMs"] ?? "1000") / 1000;
      return fill(words.rateLimited, { seconds: Math.max(1, Math.round(wait)) });
    }
    if (reason === "DRAW_OFFER_TOO_SOON") {
      return fill(words.drawWait, { count: refusal.metadata["movesToWait"] ?? "?" });
    }
    if (refusal.reason !== undefined && refusal.reason in words.refusals) {
      return words.refusals[refusal.reason];
    }
    if (refusal.code === Code.Unavailable || refusal.code === Code.DeadlineExceeded) {
      return words.unreachable;
    }
    return fill(words.somethingWentWrong, { message: refusal.message.split("\n")[0] ?? "" });
  }

  // -- views ------------------------------------------------------------------------------

  private show(view: View, history: History, path: string | undefined): void {
    this.view?.close();
    this.view = view;
    replaceChildren(this.body, view.element);
    if (path !== undefined && path !== window.location.pathname) {
      if (history === "push") window.history.pushState(null, "", path);
      else window.history.replaceState(null, "", path);
    }
  }

  private say(text: string): void {
    const line = this.body.querySelector("#message");
    if (line !== null) line.textContent = text;
  }

  showStart(message = "", history: History = "push"): void {
    const view = new StartView(this, message);
    this.show(view, history, "/");
    view.signedIn();
  }

  showLobby(variant: Variant, history: History = "push"): void {
    const path = variant === Variant.RUSSIAN ? "/lobby?variant=russian" : "/lobby";
    this.show(new LobbyView(this, variant), history, path);
  }

  showLeaderboard(variant: Variant, history: History = "push"): void {
    const path = variant === Variant.RUSSIAN ? "/leaderboard?variant=russian" : "/leaderboard";
    this.show(new LeaderboardView(this, variant), history, path);
  }

  showTable(table: Table, role: Role, history: History = "push"): void {
    this.show(new TableView(this, table, role), history, `/table/${encodeURIComponent(table.tableId)}`);
  }

  async showTableById(tableId: string, opening: TableOpening): Promise<void> {
    const { history = "push", stillWanted = () => true, failed } = opening;
    try {
      const reply = await this.goti.tables.getTable({ tableId }, { timeoutMs: CALL_TIMEOUT_MS });
      if (reply.table !== undefined && stillWanted()) this.showTable(reply.table, reply.yourRole, history);
    } catch (error) {
      failed(this.explain(error));
    }
  }

  /** Show what the address asks for. */
  private async route(history: History): Promise<void> {
    const path = window.location.pathname;
    const [, first = "", second = ""] = path.split("/");
    const rest = decodeURIComponent(second);
    const russian = new URLSearchParams(window.location.search).get("variant") === "russian";
    const variant = russian ? Variant.RUSSIAN : Variant.ENGLISH;
    if (first === "lobby") {
      this.showLobby(variant, history);
    } else if (first === "leaderboard") {
      this.showLeaderboard(variant, history);
    } else if (first === "join" && rest !== "") {
      const start = new StartView(this);
      this.show(start, history, "/");
      start.join(rest);
    } else if (first === "table" && rest !== "") {
      await this.openTable(rest, history);
    } else {
      this.showStart("", history);
    }
  }

  private async openTable(tableId: string, history: History): Promise<void> {
    const kept = keptTable();
    if (kept !== undefined && kept.table.tableId === tableId) {
      // Drawn at once from the browser's copy; the watch resumes from its seq.
      this.showTable(kept.table, kept.role, history);
      return;
    }
    await this.showTableById(tableId, { history, failed: (message) => this.showStart(message, "replace") });
  }
}

const root = document.getElementById("goti");
if (root !== null) new App().start(root);
