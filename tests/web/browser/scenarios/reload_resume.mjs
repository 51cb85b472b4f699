// A reload in the middle of a game against the computer comes back to the same table with no
// move missing: the page draws the game kept in the browser at once and resumes the table's
// stream from its last seq (WatchTable's after_seq), so the computer's reply, played while the
// page was reloading, arrives as an event. Then the page goes on playing, comes back the same
// way from a connection the server dropped, and the start screen offers to resume the game.

import assert from "node:assert/strict";
import {
  playAnyMove,
  plies,
  serverTable,
  shownMoves,
  signedIn,
  TABLE,
  tableAttribute,
  waitForPlies,
  waitForTurn,
} from "../table.mjs";

/** WatchTable requests' after_seq, read from their Connect envelopes. */
function afterSeqOf(body) {
  // The envelope: one flags byte, four length bytes; then WatchTableRequest (field 2 varint).
  const message = body.subarray(5);
  let position = 0;
  let afterSeq = 0n;
  const varint = () => {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = message[position++];
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
    }
  };
  while (position < message.length) {
    const tag = Number(varint());
    if (tag >> 3 === 2 && (tag & 7) === 0) afterSeq = varint();
    else if ((tag & 7) === 2) {
      const length = Number(varint());
      position += length;
    }
    else varint();
  }
  return afterSeq;
}

export async function run({ url, newPlayer, ask }) {
  const page = await newPlayer("player");
  const watches = [];
  page.on("request", (request) => {
    if (request.url().endsWith("/goti.api.v1.TablesService/WatchTable")) {
      watches.push(afterSeqOf(request.postDataBuffer()));
    }
  });
  await page.goto(url);
  await signedIn(page);
  await page.click("#play-computer");
  for (let move = 0; move < 3; move++) await playAnyMove(page);
  await waitForTurn(page);
  const tableId = await tableAttribute(page, "table-id");

  // Play, and reload at once: the computer answers while the page is away.
  const before = await plies(page);
  await playAnyMove(page);
  const keptSeq = BigInt(await tableAttribute(page, "seq"));
  watches.length = 0;
  await page.reload();
  await page.waitForSelector(`${TABLE}[data-table-id="${tableId}"]`);
  assert.equal(new URL(page.url()).pathname, `/table/${tableId}`);
  await waitForPlies(page, before + 2);
  await waitForTurn(page);
  assert.ok(watches.length >= 1, "the page watches the table again");
  assert.ok(watches[0] > 0n, `the watch resumes from a seq, not from a snapshot: ${watches}`);
  assert.ok(watches[0] <= keptSeq + 1n, `resumed from ${watches[0]}, last seen ${keptSeq}`);
  let server = await serverTable(url, tableId);
  assert.deepEqual(await shownMoves(page), server.game.moves, "no move is missing");

  // And the game goes on.
  await playAnyMove(page);
  await waitForPlies(page, before + 4);
  server = await serverTable(url, tableId);
  assert.deepEqual(await shownMoves(page), server.game.moves);

  // A lost connection comes back too: the server drops every connection, as a network
  // failure would, and the page opens the stream again from its last seq.
  await ask("drop connections");
  await page.waitForSelector(`${TABLE}[data-connected="false"]`);
  await page.waitForSelector(`${TABLE}[data-connected="true"]`);
  await playAnyMove(page);
  await waitForPlies(page, before + 6);
  server = await serverTable(url, tableId);
  assert.deepEqual(await shownMoves(page), server.game.moves);
  // The start screen offers the unfinished game kept in this browser.
  await page.goto(url);
  await page.waitForSelector("#resume-game");
  assert.match(await page.textContent("#resume"), /against the computer/);
  await page.click("#resume-game");
  await page.waitForSelector(`${TABLE}[data-table-id="${tableId}"]`);
  return {
    tableId,
    resumedFrom: String(watches[0]),
    keptSeq: String(keptSeq),
    plies: server.game.moves.length,
    // The browser logs the stream the server cut.
    expectedErrors: ["net::ERR_INCOMPLETE_CHUNKED_ENCODING"],
  };
}
