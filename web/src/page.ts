// What every view of the page shares: the connection, the tab's stream, the player, the
// words, and the ways to move between views.

import type { Goti } from "./api.js";
import type { GetMeResponse } from "./gen/goti/api/v1/players_pb.js";
import type { Role, Table } from "./gen/goti/api/v1/tables_pb.js";
import type { Variant } from "./gen/goti/api/v1/game_pb.js";
import type { TabStream } from "./stream.js";
import type { Words } from "./words.js";

export interface View {
  readonly element: HTMLElement;
  /** Draw again (after the language changed). */
  redraw(): void;
  /** Stop whatever the view follows; it is leaving the screen. */
  close(): void;
}

export type History = "push" | "replace";

/** How a table fetched by its id is shown. */
export interface TableOpening {
  history?: History;
  /** Whether it is still to be shown once fetched: no when the view that asked has left. */
  stillWanted?: () => boolean;
  /** Told, in a line for the player, why the table could not be fetched. */
  failed: (message: string) => void;
}

export interface Page {
  readonly goti: Goti;
  readonly stream: TabStream;
  readonly words: Words;
  /** The player and their streaks, once signed in. */
  readonly me: GetMeResponse | undefined;
  /** Read the player's streaks again (after a game against the computer). */
  refreshMe(): Promise<void>;
  /** One line for the player about a failed call. */
  explain(error: unknown): string;
  /** Show the start screen, with a line to say. */
  showStart(message?: string, history?: History): void;
  showLobby(variant: Variant, history?: History): void;
  /** Show the leaderboard of ``variant``. */
  showLeaderboard(variant: Variant, history?: History): void;
  /** Show a table: played when the player sits there, else watched. */
  showTable(table: Table, role: Role, history?: History): void;
  /** Fetch the table ``tableId`` and show it. */
  showTableById(tableId: string, opening: TableOpening): Promise<void>;
}
