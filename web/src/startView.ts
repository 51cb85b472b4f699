// The start screen: play online now (paired with a waiting player), play the computer, play a
// friend online (create a table or join one by its code or link), pass and play on this
// device, browse the lobby, see the leaderboard, or watch a table; and, when a game was left
// unfinished here, the offer to resume it.

import { Code } from "@connectrpc/connect";
import { CALL_TIMEOUT_MS, refusalOf, requestId, retrying } from "./api.js";
import { h, radioGroup, replaceChildren } from "./dom.js";
import { Variant } from "./gen/goti/api/v1/game_pb.js";
import {
  Opponent,
  Role,
  StartingPlayer,
  type Table,
  TableStatus,
  Visibility,
} from "./gen/goti/api/v1/tables_pb.js";
import type { Page, View } from "./page.js";
import { SeekPanel } from "./seekPanel.js";
import { keepTable, keptTable } from "./storage.js";
import { fill, ratingText, type Words } from "./words.js";

/** The computer's levels in the order of the Level buttons (and of `words.levels`). */
const LEVELS = [
  Opponent.COMPUTER_EASY,
  Opponent.COMPUTER_NORMAL,
  Opponent.COMPUTER_HARD,
  Opponent.COMPUTER_MASTER,
] as const;
const FIRST_MOVERS = [
  StartingPlayer.PLAYER_1,
  StartingPlayer.PLAYER_2,
  StartingPlayer.RANDOM,
] as const;
const TURN_TIMERS = [0, 30, 60, 300] as const;
const VARIANTS = [Variant.ENGLISH, Variant.RUSSIAN] as const;

const CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ";
const CODE_LENGTH = 6;

/** Whether ``text`` reads as a table code as people type it (case, spaces and dashes aside). */
function looksLikeCode(text: string): boolean {
  const code = text.replace(/[\s-]+/g, "").toUpperCase();
  return code.length === CODE_LENGTH && [...code].every((character) => CODE_ALPHABET.includes(character));
}

/** Which table the Watch box names: a table's address on this page (`/table/ID`) or its id
 * by the id; a code, or a join link (`/join/CODE`), by the code, which GetTable reads as it
 * is. */
export function watchedTable(text: string): { tableId: string } | { code: string } | undefined {
  const typed = text.trim();
  if (typed === "") return undefined;
  if (typed.includes("/")) {
    const segments = typed.split(/[?#]/, 1)[0]?.replace(/\/+$/, "").split("/") ?? [];
    const last = segments.at(-1) ?? "";
    if (segments.at(-2) === "table" && last !== "") return { tableId: decodeURIComponent(last) };
    return { code: typed };
  }
  return looksLikeCode(typed) ? { code: typed } : { tableId: typed };
}

function timerLabel(words: Words, seconds: number): string {
  if (seconds === 0) return words.noTimer;
  if (seconds < 60) return fill(words.seconds, { count: seconds });
  return fill(words.minutes, { count: seconds / 60 });
}

interface Choices {
  variant: number;
  level: number;
  first: number;
  timer: number;
  listed: boolean;
}

export class StartView implements View {
  readonly element = h("main", { class: "start", "data-view": "start" });
  private readonly choices: Choices = { variant: 0, level: 0, first: 0, timer: 0, listed: false };
  private busy = false;
  /** The code or link of a table the player could not join, being full: offered to watch. */
  private fullTable: string | undefined;
  private readonly online: SeekPanel;

  constructor(
    private readonly page: Page,
    private message = "",
  ) {
    this.online = new SeekPanel(page, () => this.variant());
    this.redraw();
    void this.offerResume();
  }

  close(): void {
    this.online.close();
  }

  redraw(): void {
    const words = this.page.words;
    const watchInput = h("input", {
      id: "watch-id",
      type: "text",
      autocomplete: "off",
      placeholder: words.watchWhich,
      "aria-label": words.watchWhich,
    });
    replaceChildren(
      this.element,
      this.playerPanel(words),
      h("div", { id: "resume" }),
      this.fullTablePanel(),
      h("section", { class: "row" }, h("span", { class: "caption" }, words.rules),
        this.radios("variant", [words.english, words.russian])),
      this.online.element,
      this.computerPanel(words),
      this.friendPanel(words),
      h("section", { class: "row" },
        h("button", { id: "pass-and-play", type: "button", onclick: () => this.passAndPlay() }, words.passAndPlay),
        h("button", { id: "lobby", type: "button", onclick: () => this.page.showLobby(this.variant()) }, words.browseLobby),
        h("button", { id: "leaderboard", type: "button", onclick: () => this.page.showLeaderboard(this.variant()) }, words.leaderboard),
      ),
      h("form", { class: "row", onsubmit: (event: Event) => { event.preventDefault(); this.watch(watchInput.value); } },
        watchInput, h("button", { id: "watch", type: "submit" }, words.watch)),
      h("p", { id: "message", class: "message", role: "status" }, this.message),
    );
    this.online.redraw();
    this.showResume();
  }

  private radios(name: keyof Choices, labels: readonly string[]): HTMLElement {
    return radioGroup(`choose-${name}`, name, labels, this.choices[name] as number, (index) => {
      (this.choices[name] as number) = index;
    });
  }

  /** Who the player is (their streaks and ratings), with their name to change. */
  private playerPanel(words: Words): HTMLElement {
    const me = this.page.me;
    const nameInput = h("input", {
      id: "display-name",
      type: "text",
      maxlength: 24,
      value: me?.player?.displayName ?? "",
      "aria-label": words.yourName,
    });
    return h("section", { class: "who" },
      me === undefined
        ? h("p", { id: "player" }, words.connecting)
        : h("p", { id: "player" }, fill(words.playingAs, { name: me.player?.displayName ?? "" })),
      me?.streaks === undefined
        ? null
        : h("p", { id: "streaks" }, fill(words.streaks, { streak: me.streaks.winStreak, best: me.streaks.bestStreak })),
      me === undefined || me.ratings.length === 0
        ? null
        : h("p", { id: "ratings" }, fill(words.ratings, {
            ratings: me.ratings
              .map((rating) => `${rating.variant === Variant.RUSSIAN ? words.russian : words.english} ${ratingText(rating)}`)
              .join(" · "),
          })),
      h("form", { class: "row", onsubmit: (event: Event) => { event.preventDefault(); void this.rename(nameInput.value); } },
        h("label", { for: "display-name" }, words.yourName), nameInput,
        h("button", { type: "submit", id: "save-name" }, words.saveName)),
    );
  }

  private computerPanel(words: Words): HTMLElement {
    return h("section", { class: "card", id: "computer-section" },
      h("h2", {}, words.playComputer),
      h("div", { class: "row" }, h("span", { class: "caption" }, words.level), this.radios("level", words.levels)),
      h("div", { class: "row" }, h("span", { class: "caption" }, words.whoFirst),
        this.radios("first", [words.firstMe, words.firstComputer, words.firstRandom])),
      h("button", { id: "play-computer", class: "primary", type: "button", onclick: () => this.playComputer() }, words.play),
    );
  }

  /** A table for a friend: its turn timer, whether the lobby lists it; or join one. */
  private friendPanel(words: Words): HTMLElement {
    const codeInput = h("input", {
      id: "join-code",
      type: "text",
      autocomplete: "off",
      placeholder: words.codeOrLink,
      "aria-label": words.codeOrLink,
    });
    return h("section", { class: "card", id: "friend-section" },
      h("h2", {}, words.playFriend),
      h("div", { class: "row" }, h("span", { class: "caption" }, words.turnTimer),
        this.radios("timer", TURN_TIMERS.map((seconds) => timerLabel(words, seconds)))),
      h("label", { class: "row" },
        h("input", { type: "checkbox", id: "public", checked: this.choices.listed,
          onchange: (event: Event) => { this.choices.listed = (event.target as HTMLInputElement).checked; } }),
        words.listInLobby),
      h("div", { class: "row" },
        h("button", { id: "create-table", type: "button", onclick: () => this.createForFriend() }, words.createTable)),
      h("form", { class: "row", onsubmit: (event: Event) => { event.preventDefault(); this.join(codeInput.value); } },
        codeInput, h("button", { id: "join", type: "submit" }, words.join)),
    );
  }

  private variant(): Variant {
    return VARIANTS[this.choices.variant] ?? Variant.ENGLISH;
  }

  private say(text: string): void {
    this.message = text;
    const line = this.element.querySelector("#message");
    if (line !== null) line.textContent = text;
  }

  /** Open the table ``call`` answers with; a refusal is said, unless ``refused`` takes it. */
  private open(
    call: () => Promise<{ table?: Table | undefined; yourRole: Role }>,
    refused: (error: unknown) => boolean = () => false,
  ): void {
    if (this.busy) return;
    if (this.page.me === undefined) {
      this.say(this.page.words.connecting);
      return;
    }
    this.busy = true;
    this.say("");
    void (async () => {
      try {
        const reply = await call();
        if (reply.table !== undefined) this.page.showTable(reply.table, reply.yourRole);
      } catch (error) {
        if (!refused(error)) this.say(this.page.explain(error));
      } finally {
        this.busy = false;
      }
    })();
  }

  private create(opponent: Opponent, startingPlayer: StartingPlayer, visibility = Visibility.PRIVATE, timer = 0): void {
    const id = requestId();
    const variant = this.variant();
    this.open(() =>
      retrying(() =>
        this.page.goti.tables.createTable(
          { requestId: id, variant, opponent, startingPlayer, visibility, turnTimerSeconds: timer },
          { timeoutMs: CALL_TIMEOUT_MS },
        ),
      ),
    );
  }

  private playComputer(): void {
    this.create(LEVELS[this.choices.level] ?? Opponent.COMPUTER_EASY, FIRST_MOVERS[this.choices.first] ?? StartingPlayer.PLAYER_1);
  }

  private createForFriend(): void {
    this.create(
      Opponent.HUMAN,
      StartingPlayer.RANDOM,
      this.choices.listed ? Visibility.PUBLIC : Visibility.PRIVATE,
      TURN_TIMERS[this.choices.timer] ?? 0,
    );
  }

  private passAndPlay(): void {
    this.create(Opponent.PASS_AND_PLAY, StartingPlayer.PLAYER_1);
  }

  /** Join by a code or a link: also what a join link opens. */
  join(text: string): void {
    // A join link as pasted is a code too: the server reads the code at its end.
    const code = text.trim();
    if (code === "") return;
    const id = requestId();
    this.fullTable = undefined;
    this.showFullTable();
    this.open(
      () => retrying(() => this.page.goti.tables.joinTable({ requestId: id, code }, { timeoutMs: CALL_TIMEOUT_MS })),
      (error) => {
        if (refusalOf(error).reason !== "TABLE_FULL") return false;
        this.fullTable = code;
        this.showFullTable();
        return true;
      },
    );
  }

  /** Watch the table a code, a join link, a table's address or its id names. */
  private watch(text: string): void {
    const table = watchedTable(text);
    if (table === undefined) return;
    this.open(() => this.page.goti.tables.getTable(table, { timeoutMs: CALL_TIMEOUT_MS }));
  }

  private fullTablePanel(): HTMLElement {
    const code = this.fullTable;
    const words = this.page.words;
    return h("div", { id: "full-table" },
      code === undefined
        ? null
        : h("div", { class: "card notice" },
            h("p", {}, words.tableFullWatch),
            h("button", { id: "watch-full-table", class: "primary", type: "button", onclick: () => this.watch(code) }, words.watch)));
  }

  private showFullTable(): void {
    this.element.querySelector("#full-table")?.replaceWith(this.fullTablePanel());
  }

  private async rename(name: string): Promise<void> {
    const displayName = name.trim();
    if (displayName === "" || this.page.me === undefined) return;
    try {
      await this.page.goti.players.setDisplayName({ displayName }, { timeoutMs: CALL_TIMEOUT_MS });
      await this.page.refreshMe();
      this.redraw();
    } catch (error) {
      this.say(this.page.explain(error));
    }
  }

  /** Once signed in: offer the game left unfinished in this browser, if it still is. */
  private async offerResume(): Promise<void> {
    const kept = keptTable();
    if (kept === undefined || this.page.me === undefined) return;
    try {
      const reply = await this.page.goti.tables.getTable(
        { tableId: kept.table.tableId },
        { timeoutMs: CALL_TIMEOUT_MS },
      );
      const table = reply.table;
      if (table === undefined || table.status === TableStatus.FINISHED || reply.yourRole === Role.SPECTATOR) {
        keepTable(undefined);
        return;
      }
      this.resumable = { table, role: reply.yourRole };
      this.showResume();
    } catch (error) {
      const code = (error as { code?: Code }).code;
      if (code === Code.NotFound) keepTable(undefined);
    }
  }

  private resumable: { table: Table; role: Role } | undefined;

  private showResume(): void {
    const place = this.element.querySelector("#resume");
    const found = this.resumable;
    if (place === null || found === undefined) return;
    const words = this.page.words;
    const opponent = found.table.opponent;
    const against =
      opponent === Opponent.PASS_AND_PLAY
        ? words.vsSelf
        : opponent === Opponent.HUMAN || opponent === Opponent.UNSPECIFIED
          ? words.vsPerson
          : words.vsComputer;
    replaceChildren(
      place as HTMLElement,
      h("div", { class: "card notice" },
        h("p", {}, fill(words.resumeQuestion, { opponent: against, moves: found.table.game?.moves.length ?? 0 })),
        h("button", { id: "resume-game", class: "primary", type: "button", onclick: () => this.page.showTable(found.table, found.role) }, words.resume),
        h("button", { id: "new-game", type: "button", onclick: () => { keepTable(undefined); this.resumable = undefined; replaceChildren(place as HTMLElement); } }, words.newGame)),
    );
  }

  /** Signed in now: show who, and offer to resume. */
  signedIn(): void {
    this.redraw();
    void this.offerResume();
  }
}
