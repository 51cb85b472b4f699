// The page's connection to Goti: the tables, players and matchmaking services over Connect
// (or gRPC-Web), from the page's own origin, with the player's token on every call, and
// refusals read as the reasons of errors.proto.

import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { MatchmakingService } from "./gen/goti/api/v1/matchmaking_pb.js";
import { PlayersService } from "./gen/goti/api/v1/players_pb.js";
import { TablesService } from "./gen/goti/api/v1/tables_pb.js";
import type { Reason } from "./words.js";

export type Tables = Client<typeof TablesService>;
export type Players = Client<typeof PlayersService>;
export type Matchmaking = Client<typeof MatchmakingService>;

/** Seconds a unary call may take, as the contract advises (streams have none). */
export const CALL_TIMEOUT_MS = 10_000;
const ERROR_DOMAIN = "goti.api.v1";
const ERROR_INFO_TYPE = "google.rpc.ErrorInfo";

/** What Goti said about a refused call: the ErrorInfo of errors.proto. */
export interface Refusal {
  readonly code: Code;
  readonly reason: Reason | undefined;
  readonly metadata: Readonly<Record<string, string>>;
  readonly message: string;
}

function readErrorInfo(bytes: Uint8Array): { reason: string; domain: string; metadata: Record<string, string> } {
  const reader = new BinaryReader(bytes);
  let reason = "";
  let domain = "";
  const metadata: Record<string, string> = {};
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === WireType.LengthDelimited) {
      reason = reader.string();
    } else if (field === 2 && wireType === WireType.LengthDelimited) {
      domain = reader.string();
    } else if (field === 3 && wireType === WireType.LengthDelimited) {
      const end = reader.uint32() + reader.pos;
      let key = "";
      let value = "";
      while (reader.pos < end) {
        const [entryField, entryType] = reader.tag();
        if (entryField === 1) key = reader.string();
        else if (entryField === 2) value = reader.string();
        else reader.skip(entryType);
      }
      metadata[key] = value;
    } else {
      reader.skip(wireType);
    }
  }
  return { reason, domain, metadata };
}

/** The Goti refusal a failed call carries; the bare status code when it carries none. */
export function refusalOf(error: unknown): Refusal {
  const connectError = ConnectError.from(error);
  for (const detail of connectError.details) {
    if (!("type" in detail) || detail.type !== ERROR_INFO_TYPE) continue;
    try {
      const info = readErrorInfo(detail.value);
      if (info.domain === ERROR_DOMAIN) {
        return {
          code: connectError.code,
          reason: info.reason as Reason,
          metadata: info.metadata,
          message: connectError.rawMessage,
        };
      }
    } catch {
      // A detail that does not decode says nothing the page can use.
    }
  }
  return { code: connectError.code, reason: undefined, metadata: {}, message: connectError.rawMessage };
}

/** A fresh id for a command, unique enough for the server to spot retries (a UUID's worth of
 * randomness; crypto.randomUUID needs HTTPS, which a page on a home network lacks). */
export function requestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

export type Protocol = "connect" | "grpc-web";

export class Goti {
  readonly tables: Tables;
  readonly players: Players;
  readonly matchmaking: Matchmaking;
  private token: string | undefined;

  constructor(baseUrl: string, protocol: Protocol) {
    const withToken: Interceptor = (next) => async (request) => {
      if (this.token !== undefined) request.header.set("authorization", `Bearer ${this.token}`);
      return next(request);
    };
    const options = { baseUrl, useBinaryFormat: true, interceptors: [withToken] };
    const transport =
      protocol === "grpc-web" ? createGrpcWebTransport(options) : createConnectTransport(options);
    this.tables = createClient(TablesService, transport);
    this.players = createClient(PlayersService, transport);
    this.matchmaking = createClient(MatchmakingService, transport);
  }

  /** Act as the player holding ``token`` from now on. */
  signIn(token: string | undefined): void {
    this.token = token;
  }
}

const RETRIES = 3;
const RETRY_PAUSE_MS = 300;

/** Run a command, retrying it (with its same request id) while Goti is unreachable, as the
 * contract asks: the server applies it at most once. */
export async function retrying<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const code = ConnectError.from(error).code;
      const retryable = code === Code.Unavailable || code === Code.DeadlineExceeded;
      if (!retryable || attempt >= RETRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS * attempt * (0.5 + Math.random())));
    }
  }
}

export { Code };
