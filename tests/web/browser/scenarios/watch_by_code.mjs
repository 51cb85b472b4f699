// Watching a table from what a player's screen shows: two people play; one watcher types the
// table's code (in lower case, with a dash), another pastes its join link into the Watch box,
// and a third opens the join link of the now full table, is told it is full and offered to
// watch, and takes the offer. Each sees the table as a spectator, with the moves so far, and
// then the next move as it is played.

import assert from "node:assert/strict";
import { openTable, playAnyMove, serverTable, shownMoves, signedIn, TABLE, tableAttribute, twoPlayers, waitForPlies } from "../table.mjs";

async function watching(page, tableId) {
  await page.waitForSelector(`${TABLE}[data-role="spectator"][data-table-id="${tableId}"]`);
  assert.match(await page.textContent("#table-header"), /Watching$/);
  assert.equal(new URL(page.url()).pathname, `/table/${tableId}`);
}

export async function run({ url, newPlayer }) {
  const [host, guest] = await twoPlayers(url, newPlayer);
  const code = await openTable(host);
  const link = await host.getAttribute("#join-link", "href");
  await guest.goto(link);
  await guest.waitForSelector(`${TABLE}[data-status="playing"]`);
  await host.waitForSelector(`${TABLE}[data-status="playing"]`);
  const tableId = await tableAttribute(host, "table-id");
  const moverOf = async () => ((await tableAttribute(host, "my-turn")) === "true" ? host : guest);
  await playAnyMove(await moverOf());

  const byCode = await newPlayer("by-code");
  const byLink = await newPlayer("by-link");
  for (const [page, typed] of [
    [byCode, `${code.slice(0, 3)}-${code.slice(3)}`.toLowerCase()],
    [byLink, link],
  ]) {
    await page.goto(url);
    await signedIn(page);
    await page.fill("#watch-id", typed);
    await page.click("#watch");
    await watching(page, tableId);
    await waitForPlies(page, 1);
  }

  // The join link of the full table: told so, and offered to watch.
  const late = await newPlayer("late");
  await late.goto(link);
  await late.waitForSelector("#full-table:has-text('That table is full')");
  await late.click("#watch-full-table");
  await watching(late, tableId);
  assert.equal(await late.locator("#resign").count(), 0);

  // The next move reaches every watcher live.
  await playAnyMove(await moverOf());
  for (const page of [byCode, byLink, late]) await waitForPlies(page, 2);
  const server = (await serverTable(url, tableId)).game.moves;
  for (const page of [byCode, byLink, late]) assert.deepEqual(await shownMoves(page), server);
  // The refused join, as the browser logs it.
  const expectedErrors = ["late: console error: Failed to load resource: the server responded with a status of 400"];
  return { tableId, code, moves: server, expectedErrors };
}
