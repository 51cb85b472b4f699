// Two people tap "Play online now" with the same choices (English, 30 s a move, rated), one
// over Connect and one over gRPC-Web. The first sees the wait (alone in the pool, the range of
// ratings accepted, the time waited ticking, a new player's provisional rating) until the
// second comes; then both pages open the same table, playing, each seat showing its player's
// provisional rating. The player to move plays, the other page sees it and replies, and the
// first page sees the reply: the game goes on live on both, as at any joined table. Then the
// side to move resigns, and each player's start screen shows their rating after the game.

import assert from "node:assert/strict";
import { ONLINE, seek, shownWait, waitedPast } from "../seek.mjs";
import { playAnyMove, serverTable, shownMoves, signedIn, TABLE, tableAttribute, waitForPlies } from "../table.mjs";

export async function run({ url, newPlayer }) {
  const first = await newPlayer("first");
  const second = await newPlayer("second");
  await first.goto(url);
  await second.goto(new URL("/?protocol=grpc-web", url).href);
  await signedIn(first);
  await signedIn(second);

  await seek(first, { rated: true });
  const wait = await shownWait(first, 1);
  assert.match(wait.count, /\b1\b/);
  assert.match(wait.range, /\d+ to \d+/);
  assert.match(wait.rating, /1500\?/, "a new player's rating is provisional");
  await waitedPast(first, wait.waited);

  await seek(second, { rated: true });
  for (const page of [first, second]) await page.waitForSelector(`${TABLE}[data-status="playing"]`);
  const tableId = await tableAttribute(first, "table-id");
  assert.equal(await tableAttribute(second, "table-id"), tableId, "both pages are at one table");
  assert.notEqual(await tableAttribute(first, "role"), await tableAttribute(second, "role"));
  assert.equal(new URL(first.url()).pathname, `/table/${tableId}`);
  const table = await serverTable(url, tableId);
  assert.equal(table.turnTimerSeconds, 30);
  assert.equal(table.rated, true);
  assert.match(await first.textContent("#table-header"), /· Rated/);
  for (const page of [first, second]) {
    assert.deepEqual(await page.locator(".seat .rating").allTextContents(), ["1500?", "1500?"]);
    // The seek is over: the start screen and its panel are gone with it.
    assert.equal(await page.locator(ONLINE).count(), 0);
  }

  const moves = [];
  for (let ply = 0; ply < 2; ply++) {
    const mover = (await tableAttribute(first, "my-turn")) === "true" ? first : second;
    const other = mover === first ? second : first;
    await playAnyMove(mover);
    // The move reaches the other page on its stream.
    await waitForPlies(other, ply + 1);
    moves.push(mover === first ? "first" : "second");
  }
  assert.notEqual(moves[0], moves[1], "each player moved once");
  const server = (await serverTable(url, tableId)).game.moves;
  assert.deepEqual(await shownMoves(first), server);
  assert.deepEqual(await shownMoves(second), server);

  const resigning = (await tableAttribute(first, "my-turn")) === "true" ? first : second;
  await resigning.click("#resign");
  await resigning.click("#resign-yes");
  const ratings = {};
  for (const [name, page] of [["first", first], ["second", second]]) {
    await page.waitForSelector(`${TABLE}[data-status="finished"]`);
    // One rated game played: a rating that moved from 1500, still provisional.
    ratings[name] = await ratingAfterTheGame(page, url);
    assert.match(ratings[name], /^Ratings: English draughts \d+\?$/);
  }
  return { tableId, moves: server, wait, ratings };
}

// The start screen's ratings once the game has been counted in them: the server rates a game
// just after its end is seen, so a page opened at once may still show the rating before it.
async function ratingAfterTheGame(page, url) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    await page.goto(url);
    await signedIn(page);
    const shown = page.locator("#ratings");
    if ((await shown.count()) > 0) {
      const text = (await shown.textContent()).trim();
      if (!/ 1500\?$/.test(text)) return text;
    }
    assert.ok(Date.now() < deadline, "the start screen never showed the rating after the game");
    // The poll's pace, between two reloads: what it waits for is the rating above.
    await page.waitForTimeout(200);
  }
}
