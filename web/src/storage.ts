// What the browser keeps for the page (localStorage, per origin): the guest player's token,
// the unfinished game as of its last seq (so a reload shows it at once and resumes the watch
// from there), and the chosen language.

import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { base64Decode, base64Encode } from "@bufbuild/protobuf/wire";
import { type Table, TableSchema, Role } from "./gen/goti/api/v1/tables_pb.js";
import type { Language } from "./words.js";

const PLAYER_KEY = "goti.player";
const TABLE_KEY = "goti.table";
const LANGUAGE_KEY = "goti.language";
const PROTOCOL_KEY = "goti.protocol";

export interface KeptPlayer {
  readonly token: string;
  readonly playerId: string;
}

export interface KeptTable {
  readonly table: Table;
  readonly role: Role;
}

function read(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    // Storage refused (a private window with storage off): the page still plays, forgetting.
    return null;
  }
}

function write(key: string, value: string | null): void {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // As above: nothing is kept, nothing breaks.
  }
}

export function keptPlayer(): KeptPlayer | undefined {
  const text = read(PLAYER_KEY);
  if (text === null) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<KeptPlayer>;
    if (typeof parsed.token === "string" && typeof parsed.playerId === "string") {
      return { token: parsed.token, playerId: parsed.playerId };
    }
  } catch {
    // A damaged entry: a new guest will replace it.
  }
  return undefined;
}

export function keepPlayer(player: KeptPlayer | undefined): void {
  write(PLAYER_KEY, player === undefined ? null : JSON.stringify(player));
}

export function keptTable(): KeptTable | undefined {
  const text = read(TABLE_KEY);
  if (text === null) return undefined;
  try {
    const parsed = JSON.parse(text) as { table?: string; role?: number };
    if (typeof parsed.table !== "string" || typeof parsed.role !== "number") return undefined;
    return { table: fromBinary(TableSchema, base64Decode(parsed.table)), role: parsed.role as Role };
  } catch {
    return undefined;
  }
}

export function keepTable(kept: KeptTable | undefined): void {
  if (kept === undefined) {
    write(TABLE_KEY, null);
    return;
  }
  const table = base64Encode(toBinary(TableSchema, kept.table));
  write(TABLE_KEY, JSON.stringify({ table, role: kept.role }));
}

export function keptLanguage(): Language | undefined {
  const text = read(LANGUAGE_KEY);
  return text === "en" || text === "ne" ? text : undefined;
}

export function keepLanguage(language: Language): void {
  write(LANGUAGE_KEY, language);
}

/** The protocol a page was told to use (`?protocol=grpc-web`), kept for the tab's later
 * pages. */
export function chosenProtocol(search: string): "connect" | "grpc-web" {
  const asked = new URLSearchParams(search).get("protocol");
  try {
    if (asked === "grpc-web" || asked === "connect") sessionStorage.setItem(PROTOCOL_KEY, asked);
    return sessionStorage.getItem(PROTOCOL_KEY) === "grpc-web" ? "grpc-web" : "connect";
  } catch {
    return asked === "grpc-web" ? "grpc-web" : "connect";
  }
}
