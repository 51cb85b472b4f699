// The leaderboard of one variant: the best-rated players, each with their place, name and
// rating (with its deviation), the player's own row marked; and under it the player's own
// place, or why they have none yet (a rating still provisional, or no rating). The server
// lists only settled ratings. Read once when shown (GetLeaderboard, which says the caller's
// place when the call carries the player's token); Back returns to the start screen.

import { CALL_TIMEOUT_MS, retrying } from "./api.js";
import { h, replaceChildren } from "./dom.js";
import { Variant } from "./gen/goti/api/v1/game_pb.js";
import type { GetLeaderboardResponse, LeaderboardEntry } from "./gen/goti/api/v1/matchmaking_pb.js";
import type { Page, View } from "./page.js";
import { ratingWithDeviation } from "./ratings.js";
import { fill, ratingText, type Words } from "./words.js";

export class LeaderboardView implements View {
  readonly element = h("main", { class: "leaderboard", "data-view": "leaderboard" });
  private board: GetLeaderboardResponse | undefined;
  private message = "";
  private leaving = false;

  constructor(
    private readonly page: Page,
    private readonly variant: Variant,
  ) {
    this.redraw();
    void this.load();
  }

  close(): void {
    this.leaving = true;
  }

  private async load(): Promise<void> {
    try {
      // The player's own rating is read again too: it says why they are not on the board.
      const [board] = await Promise.all([
        retrying(() =>
          this.page.goti.matchmaking.getLeaderboard({ variant: this.variant }, { timeoutMs: CALL_TIMEOUT_MS }),
        ),
        this.page.refreshMe(),
      ]);
      this.board = board;
    } catch (error) {
      this.message = this.page.explain(error);
    }
    if (!this.leaving) this.redraw();
  }

  redraw(): void {
    const words = this.page.words;
    const board = this.board;
    const variantName = this.variant === Variant.RUSSIAN ? words.russian : words.english;
    this.element.dataset["loaded"] = String(board !== undefined);
    replaceChildren(
      this.element,
      h("div", { class: "row" },
        h("button", { id: "back", type: "button", onclick: () => this.page.showStart() }, words.back),
        h("h2", {}, `${words.leaderboardTitle} · ${variantName}`)),
      board === undefined ? h("p", { id: "leaderboard-loading" }, this.message === "" ? words.loading : "") : this.places(words, board),
      board === undefined ? null : h("p", { id: "your-place", class: "status" }, this.yourPlace(words, board)),
      h("p", { id: "message", class: "message", role: "status" }, this.message),
    );
  }

  private places(words: Words, board: GetLeaderboardResponse): HTMLElement {
    if (board.entries.length === 0) return h("p", { id: "leaderboard-empty" }, words.leaderboardEmpty);
    const mine = board.you?.player?.playerId ?? this.page.me?.player?.playerId;
    const row = (entry: LeaderboardEntry): HTMLElement => {
      const playerId = entry.player?.playerId ?? "";
      const yours = playerId !== "" && playerId === mine;
      return h("tr", { class: yours ? "you" : undefined, "data-rank": entry.rank, "data-player-id": playerId },
        h("td", { class: "rank" }, String(entry.rank)),
        h("td", {}, `${entry.player?.displayName ?? ""}${yours ? ` (${words.you})` : ""}`),
        h("td", {}, entry.rating === undefined ? null : ratingWithDeviation(words, entry.rating)));
    };
    return h("table", { class: "leaderboard-places" },
      h("thead", {}, h("tr", {},
        h("th", {}, words.leaderboardRank), h("th", {}, words.leaderboardPlayer), h("th", {}, words.leaderboardRating))),
      h("tbody", { id: "leaderboard-rows" }, ...board.entries.map(row)));
  }

  /** The player's place; when they have none, why: their rating is provisional, or missing. */
  private yourPlace(words: Words, board: GetLeaderboardResponse): string {
    if (board.you !== undefined) return fill(words.yourPlace, { rank: board.you.rank });
    const own = this.page.me?.ratings.find((rating) => rating.variant === this.variant);
    if (own === undefined || !own.provisional) return words.unratedOffBoard;
    return fill(words.provisionalOffBoard, { rating: ratingText(own) });
  }
}
