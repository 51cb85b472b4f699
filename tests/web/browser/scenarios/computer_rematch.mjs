// A game against the computer at Master, its strongest level, then a rematch: the page offers
// every level, Master's seat says so, and after the rematch the page follows the new table: the
// computer, moving first there (colours swap), plays its move, and its reply to the player's
// move comes in too, both on the page's stream with no reload.

import assert from "node:assert/strict";
import { playAnyMove, serverTable, shownMoves, signedIn, TABLE, tableAttribute, waitForPlies } from "../table.mjs";

export async function run({ url, newPlayer }) {
  const page = await newPlayer("player");
  await page.goto(url);
  await signedIn(page);
  const levels = await page.locator("#choose-level label").allTextContents();
  assert.deepEqual(levels, ["Easy", "Normal", "Hard", "Master"]);
  await page.check('#choose-level input[value="3"]');
  await page.click("#play-computer");
  await page.waitForSelector(`${TABLE}[data-status="playing"][data-my-turn="true"]`);
  const firstId = await tableAttribute(page, "table-id");
  assert.match(await page.textContent("#seat-top"), /Computer · Master/);
  await playAnyMove(page);
  await waitForPlies(page, 2);
  await page.click("#resign");
  await page.click("#resign-yes");
  await page.waitForSelector(`${TABLE}[data-status="finished"]`);

  await page.click("#rematch");
  await page.waitForFunction(
    ([selector, old]) => {
      const main = document.querySelector(selector);
      return main !== null && main.dataset.tableId !== old && main.dataset.status === "playing";
    },
    [TABLE, firstId],
  );
  const rematchId = await tableAttribute(page, "table-id");
  assert.equal(await tableAttribute(page, "role"), "white", "colours swapped: the computer moves first");
  assert.match(await page.textContent("#seat-top"), /Computer · Master/);
  // The computer's first move, then its reply to the player's.
  await waitForPlies(page, 1);
  await playAnyMove(page);
  await waitForPlies(page, 3);
  const rematch = await serverTable(url, rematchId);
  assert.equal(rematch.black.computerLevel, "LEVEL_MASTER", "the rematch keeps the level");
  const server = rematch.game.moves;
  assert.deepEqual((await shownMoves(page)).slice(0, 3), server.slice(0, 3));
  return { firstId, rematchId, moves: server };
}
