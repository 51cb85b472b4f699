// The tab's one event stream. Chromium opens at most six connections per site over HTTP/1.1,
// and a seventh call waits for one of them: so a tab follows the lobby, one table or its
// player's seek, one at a time, and opening a new stream closes the old one. Each watch is closed through its own
// handle, so a view leaving the screen closes its watch and never the next view's. A broken
// stream is opened again after a short, jittered pause (0.5 s doubling to 5 s: a person is
// waiting), and a stream that says nothing for three heartbeats is taken for dead and opened
// again too.

import { ConnectError, Code } from "@connectrpc/connect";

const FIRST_PAUSE_MS = 500;
const LONGEST_PAUSE_MS = 5_000;
const SILENCE_MS = 45_000;

export type StreamStatus = "connected" | "reconnecting";

export interface StreamHandlers<T> {
  /** A message arrived; "reconnect" ends this stream and opens it again at once. */
  message(message: T): "go on" | "reconnect";
  /** The stream came up, or went down and is being opened again. */
  status(status: StreamStatus): void;
  /** The stream was refused: true to keep trying, false to give up (nothing can change). */
  refused(error: ConnectError): boolean;
  /** Refusals of this stream that opening it again cannot mend, besides those of every
   * stream (a seek told that another is open): these go to ``refused`` too. */
  final?(error: ConnectError): boolean;
}

/** Errors that opening the stream again cannot mend. */
function isFinal(error: ConnectError): boolean {
  return [Code.NotFound, Code.InvalidArgument, Code.PermissionDenied, Code.Unauthenticated].includes(
    error.code,
  );
}

/** One watch the tab follows; closing it twice, or after the tab moved on, does nothing. */
export interface Following {
  close(): void;
}

export class TabStream {
  private current: AbortController | undefined;

  /** Follow the stream ``open`` makes, closing the tab's other stream first. */
  follow<T>(open: (signal: AbortSignal) => AsyncIterable<T>, handlers: StreamHandlers<T>): Following {
    this.current?.abort();
    const following = new AbortController();
    this.current = following;
    void this.run(following.signal, open, handlers);
    return {
      close: () => {
        following.abort();
        if (this.current === following) this.current = undefined;
      },
    };
  }

  private async run<T>(
    following: AbortSignal,
    open: (signal: AbortSignal) => AsyncIterable<T>,
    handlers: StreamHandlers<T>,
  ): Promise<void> {
    let pause = FIRST_PAUSE_MS;
    while (!following.aborted) {
      const attempt = new AbortController();
      const stop = (): void => attempt.abort();
      following.addEventListener("abort", stop);
      let silence = setTimeout(stop, SILENCE_MS);
      try {
        for await (const message of open(attempt.signal)) {
          clearTimeout(silence);
          silence = setTimeout(stop, SILENCE_MS);
          pause = FIRST_PAUSE_MS;
          handlers.status("connected");
          if (handlers.message(message) === "reconnect") break;
        }
      } catch (error) {
        if (following.aborted) return;
        const refusal = ConnectError.from(error);
        const final = isFinal(refusal) || handlers.final?.(refusal) === true;
        if (final && !handlers.refused(refusal)) return;
      } finally {
        clearTimeout(silence);
        following.removeEventListener("abort", stop);
        attempt.abort();
      }
      if (following.aborted) return;
      handlers.status("reconnecting");
      await new Promise((resolve) => setTimeout(resolve, pause * (0.5 + Math.random() / 2)));
      pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
    }
  }
}
