// "Play online now", on the start screen: the player picks a pool (the rules chosen above, a
// turn timer, rated or casual) and waits there while the server tells how the wait goes
// (players waiting in the pool, the range of ratings accepted now, the time waited), with
// Cancel; once paired, the new table opens as any joined table does, both players seated and
// the game under way. The seek is the tab's one stream (stream.ts). Cancel closes it and asks
// the server to take the seek out of its pool (CancelSeek), and shows the choices again only
// once the server has: a seek still in the pool could be paired behind the player's back. If
// a pairing came first, its table opens. Leaving the start screen closes the stream, which
// takes the player out of the pool as soon as the server hears of it. A broken stream is
// opened again with the same request id, which keeps the place and the time waited.

import { Code, type ConnectError } from "@connectrpc/connect";
import { CALL_TIMEOUT_MS, refusalOf, requestId, retrying } from "./api.js";
import { h, radioGroup, replaceChildren } from "./dom.js";
import type { Variant } from "./gen/goti/api/v1/game_pb.js";
import { SeekTimer, type SeekResponse, type SeekWaiting } from "./gen/goti/api/v1/matchmaking_pb.js";
import type { Page } from "./page.js";
import type { Following } from "./stream.js";
import { formatClock } from "./tableParts.js";
import { fill, ratingText, type Words } from "./words.js";

const SEEK_TIMERS = [
  SeekTimer.SEEK_TIMER_NONE,
  SeekTimer.SEEK_TIMER_30_SECONDS,
  SeekTimer.SEEK_TIMER_2_MINUTES,
] as const;
/** What the server writes for a range open to any rating (int32's ends). */
const ANY_RATING_ABOVE = 2 ** 31 - 1;
const TICK_MS = 250;
/** Refusals another attempt cannot mend: another seek of the player's is open, a game is
 * still to finish, too many seeks in a minute. */
const GIVING_UP = [Code.FailedPrecondition, Code.ResourceExhausted];

function timerLabel(words: Words, timer: SeekTimer): string {
  if (timer === SeekTimer.SEEK_TIMER_30_SECONDS) return fill(words.seconds, { count: 30 });
  if (timer === SeekTimer.SEEK_TIMER_2_MINUTES) return fill(words.minutes, { count: 2 });
  return words.noTimer;
}

export class SeekPanel {
  readonly element = h("section", { class: "card", id: "online-section" });
  private timer = 0;
  private rated = false;
  private following: Following | undefined;
  /** The request id of the seek under way, or of the one being cancelled. */
  private seekId = "";
  /** Cancel was pressed and the server has not answered yet. */
  private cancelling = false;
  /** The wait as last heard, and when (Date.now()). */
  private waiting: SeekWaiting | undefined;
  private heardAt = 0;
  private connected = true;
  private ticker: number | undefined;
  /** The unfinished table the server sent the player back to, if it did. */
  private unfinished = "";
  private message = "";

  constructor(
    private readonly page: Page,
    private readonly variant: () => Variant,
  ) {
    this.redraw();
  }

  /** The start screen is leaving: the seek, if any, ends (the player leaves the pool). */
  close(): void {
    if (this.following === undefined) return;
    this.stop();
    // Nobody waits for the answer: the page has moved on, and the closed stream takes the
    // seek out anyway; this only makes it sooner.
    const requestId = this.seekId;
    void this.page.goti.matchmaking.cancelSeek({ requestId }, { timeoutMs: CALL_TIMEOUT_MS }).catch(() => undefined);
  }

  redraw(): void {
    const words = this.page.words;
    const seeking = this.following !== undefined || this.cancelling;
    this.element.dataset["seeking"] = String(seeking);
    replaceChildren(
      this.element,
      h("h2", {}, words.playOnline),
      h("p", { class: "hint" }, words.playOnlineHint),
      seeking ? this.waitPanel(words) : this.choicesPanel(words),
      h("p", { id: "seek-message", class: "message", role: "status" }, this.message),
    );
    this.showWait();
  }

  private choicesPanel(words: Words): HTMLElement {
    return h("div", {},
      h("div", { class: "row" }, h("span", { class: "caption" }, words.turnTimer),
        radioGroup("choose-seek-timer", "seek-timer", SEEK_TIMERS.map((timer) => timerLabel(words, timer)), this.timer,
          (index) => { this.timer = index; })),
      h("div", { class: "row" }, h("span", { class: "caption" }, words.ratedCaption),
        radioGroup("choose-rated", "rated", [words.casualGame, words.ratedGame], this.rated ? 1 : 0,
          (index) => { this.rated = index === 1; })),
      h("div", { class: "row" },
        h("button", { id: "play-online", class: "primary", type: "button", onclick: () => this.start() }, words.playOnline),
        this.unfinished === ""
          ? null
          : h("button", { id: "seek-table", type: "button", onclick: () => this.backToTable() }, words.backToGame)),
    );
  }

  private waitPanel(words: Words): HTMLElement {
    return h("div", { id: "seek-wait" },
      h("p", { id: "seek-status", class: "status", "aria-live": "polite" },
        this.cancelling ? words.cancellingSeek : this.connected ? words.seeking : words.reconnecting),
      h("p", { id: "seek-count" }),
      h("p", { id: "seek-range" }),
      h("p", { id: "seek-rating" }),
      h("p", { id: "seek-waited" }),
      h("button", { id: "cancel-seek", type: "button", disabled: this.cancelling, onclick: () => void this.cancel() },
        words.cancelSeek),
    );
  }

  private start(): void {
    if (this.following !== undefined || this.cancelling) return;
    if (this.page.me === undefined) {
      this.say(this.page.words.connecting);
      return;
    }
    // One request id for the whole seek: a stream opened again resumes the same wait.
    const request = {
      requestId: requestId(),
      variant: this.variant(),
      timer: SEEK_TIMERS[this.timer] ?? SeekTimer.SEEK_TIMER_NONE,
      rated: this.rated,
    };
    this.seekId = request.requestId;
    this.message = "";
    this.unfinished = "";
    this.waiting = undefined;
    this.connected = true;
    this.following = this.page.stream.follow(
      (signal) => this.page.goti.matchmaking.seek(request, { signal }),
      {
        message: (response) => {
          this.take(response);
          return "go on";
        },
        status: (status) => this.setConnected(status === "connected"),
        final: (error) => GIVING_UP.includes(error.code),
        refused: (error) => {
          this.refused(error);
          return false;
        },
      },
    );
    this.ticker = window.setInterval(() => this.showWaited(), TICK_MS);
    this.redraw();
  }

  private stop(): void {
    this.following?.close();
    this.following = undefined;
    window.clearInterval(this.ticker);
    this.ticker = undefined;
    this.waiting = undefined;
    delete this.element.dataset["seekersInPool"];
  }

  private async cancel(): Promise<void> {
    if (this.cancelling) return;
    this.stop();
    this.cancelling = true;
    this.redraw();
    const words = this.page.words;
    try {
      const answer = await retrying(() =>
        this.page.goti.matchmaking.cancelSeek({ requestId: this.seekId }, { timeoutMs: CALL_TIMEOUT_MS }),
      );
      this.cancelling = false;
      const table = answer.paired?.table;
      if (answer.paired !== undefined && table !== undefined) {
        this.page.showTable(table, answer.paired.yourRole);
        return;
      }
      this.message = words.seekCancelled;
    } catch (error) {
      this.cancelling = false;
      this.message = this.page.explain(error);
    }
    this.redraw();
  }

  private take(response: SeekResponse): void {
    const progress = response.progress;
    if (progress.case === "waiting") {
      this.waiting = progress.value;
      this.heardAt = Date.now();
      this.showWait();
    } else if (progress.case === "paired") {
      const { table, yourRole } = progress.value;
      this.stop();
      if (table !== undefined) this.page.showTable(table, yourRole);
    }
  }

  private refused(error: ConnectError): void {
    this.stop();
    const refusal = refusalOf(error);
    this.unfinished = refusal.reason === "ALREADY_AT_TABLE" ? (refusal.metadata["tableId"] ?? "") : "";
    this.message = this.page.explain(error);
    this.redraw();
  }

  private backToTable(): void {
    void this.page.showTableById(this.unfinished, { failed: (message) => this.say(message) });
  }

  private setConnected(connected: boolean): void {
    if (connected === this.connected) return;
    this.connected = connected;
    const words = this.page.words;
    const line = this.element.querySelector("#seek-status");
    if (line !== null) line.textContent = connected ? words.seeking : words.reconnecting;
  }

  private say(text: string): void {
    this.message = text;
    const line = this.element.querySelector("#seek-message");
    if (line !== null) line.textContent = text;
  }

  /** Write the wait as last heard into the wait panel. */
  private showWait(): void {
    const waiting = this.waiting;
    const words = this.page.words;
    const text = (id: string, value: string): void => {
      const line = this.element.querySelector(`#${id}`);
      if (line !== null) line.textContent = value;
    };
    if (waiting === undefined) return;
    this.element.dataset["seekersInPool"] = String(waiting.seekersInPool);
    text("seek-count", fill(words.seekersInPool, { count: waiting.seekersInPool }));
    text(
      "seek-range",
      waiting.maxRating >= ANY_RATING_ABOVE
        ? words.anyRating
        : fill(words.ratingRange, { low: waiting.minRating, high: waiting.maxRating }),
    );
    text("seek-rating", waiting.rating === undefined ? "" : fill(words.yourRating, { rating: ratingText(waiting.rating) }));
    this.showWaited();
  }

  /** The time waited: what the server said, plus the time since it said it. */
  private showWaited(): void {
    const line = this.element.querySelector("#seek-waited");
    if (line === null || this.waiting === undefined) return;
    const waited = this.waiting.waited;
    const told = waited === undefined ? 0 : Number(waited.seconds) + waited.nanos / 1e9;
    const seconds = told + (Date.now() - this.heardAt) / 1000;
    line.textContent = fill(this.page.words.waited, { time: formatClock(Math.floor(seconds)) });
  }
}
