// The lobby, live: the open public tables of one variant, updated as they open and fill (the
// tab's one stream follows the lobby while it is shown); a table is joined with one click.

import { CALL_TIMEOUT_MS, requestId, retrying } from "./api.js";
import { h, replaceChildren } from "./dom.js";
import { Variant } from "./gen/goti/api/v1/game_pb.js";
import type { LobbyTable, WatchLobbyResponse } from "./gen/goti/api/v1/tables_pb.js";
import type { Page, View } from "./page.js";
import { ratingTag } from "./ratings.js";
import type { Following } from "./stream.js";
import { colorName, fill } from "./words.js";

export class LobbyView implements View {
  readonly element = h("main", { class: "lobby", "data-view": "lobby" });
  private readonly tables = new Map<string, LobbyTable>();
  private connected = false;
  private message = "";
  private readonly following: Following;

  constructor(
    private readonly page: Page,
    private readonly variant: Variant,
  ) {
    this.redraw();
    this.following = page.stream.follow(
      (signal) => page.goti.tables.watchLobby({ variant }, { signal }),
      {
        message: (response) => {
          this.take(response);
          return "go on";
        },
        status: (status) => {
          this.connected = status === "connected";
          this.element.dataset["connected"] = String(this.connected);
        },
        refused: (error) => {
          this.say(page.explain(error));
          return true;
        },
      },
    );
  }

  close(): void {
    this.following.close();
  }

  private take(response: WatchLobbyResponse): void {
    const message = response.message;
    switch (message.case) {
      case "snapshot":
        this.tables.clear();
        for (const table of message.value.tables) this.tables.set(table.tableId, table);
        break;
      case "tableOpened":
        this.tables.set(message.value.tableId, message.value);
        break;
      case "tableClosed":
        this.tables.delete(message.value);
        break;
      default:
        return;
    }
    this.drawTables();
  }

  private say(text: string): void {
    this.message = text;
    const line = this.element.querySelector("#message");
    if (line !== null) line.textContent = text;
  }

  redraw(): void {
    const words = this.page.words;
    const variantName = this.variant === Variant.RUSSIAN ? words.russian : words.english;
    replaceChildren(
      this.element,
      h("div", { class: "row" },
        h("button", { id: "back", type: "button", onclick: () => this.page.showStart() }, words.back),
        h("h2", {}, `${words.lobbyTitle} · ${variantName}`)),
      h("table", { class: "lobby-tables" },
        h("thead", {}, h("tr", {},
          h("th", {}, words.lobbyHost), h("th", {}, words.lobbyYouPlay),
          h("th", {}, words.lobbyTimer), h("th", {}, words.lobbyCode), h("th", {}))),
        h("tbody", { id: "lobby-rows" })),
      h("p", { id: "lobby-empty" }),
      h("p", { id: "message", class: "message", role: "status" }, this.message),
    );
    this.drawTables();
  }

  private drawTables(): void {
    const words = this.page.words;
    const rows = this.element.querySelector("#lobby-rows");
    const empty = this.element.querySelector("#lobby-empty");
    if (rows === null || empty === null) return;
    const newestFirst = [...this.tables.values()].sort((a, b) =>
      Number((b.createdAt?.seconds ?? 0n) - (a.createdAt?.seconds ?? 0n)),
    );
    replaceChildren(
      rows as HTMLElement,
      ...newestFirst.map((table) =>
        h("tr", { "data-code": table.code, "data-table-id": table.tableId },
          h("td", {}, table.host?.displayName ?? "", ratingTag(words, table.hostRating)),
          h("td", {}, colorName(words, table.openColor)),
          h("td", {}, table.turnTimerSeconds ? fill(words.seconds, { count: table.turnTimerSeconds }) : words.noTimer),
          h("td", { class: "code" }, table.code),
          h("td", {}, h("button", { type: "button", class: "primary", onclick: () => this.join(table) }, words.join))),
      ),
    );
    empty.textContent = this.tables.size === 0 ? words.lobbyEmpty : "";
  }

  private join(table: LobbyTable): void {
    const id = requestId();
    void (async () => {
      try {
        const reply = await retrying(() =>
          this.page.goti.tables.joinTable({ requestId: id, code: table.code }, { timeoutMs: CALL_TIMEOUT_MS }),
        );
        if (reply.table !== undefined) this.page.showTable(reply.table, reply.yourRole, "replace");
      } catch (error) {
        this.say(this.page.explain(error));
      }
    })();
  }
}
