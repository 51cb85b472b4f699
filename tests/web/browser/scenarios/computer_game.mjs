// A whole game against the computer at Easy, by clicks: the player moves first and plays
// (seeded) random legal moves until the game ends or the ply limit, then resigns. On the way
// the player takes a move back with Ctrl+Z. The page's move list must be the server's.

import assert from "node:assert/strict";
import {
  playAnyMove,
  plies,
  seededPick,
  serverTable,
  shownMoves,
  signedIn,
  TABLE,
  tableAttribute,
  waitForPlies,
  waitForTurnOrEnd,
} from "../table.mjs";

export async function run({ url, newPlayer, parameters }) {
  const moveLimit = parameters.moveLimit ?? 40;
  const pick = seededPick(parameters.seed ?? 7);
  const page = await newPlayer("player");
  await page.goto(url);
  await signedIn(page);
  // Easy and "you move first" are the choices already made.
  assert.ok(await page.isChecked('#choose-level input[value="0"]'));
  await page.click("#play-computer");
  await page.waitForSelector(`${TABLE}[data-status="playing"]`);
  const tableId = await tableAttribute(page, "table-id");
  assert.match(await page.textContent("#seat-top"), /Computer · Easy/);

  let myMoves = 0;
  let tookBack = false;
  let resigned = false;
  while (await waitForTurnOrEnd(page)) {
    if (myMoves === 3 && !tookBack) {
      const before = await plies(page);
      await page.keyboard.press("Control+z");
      await page.waitForFunction(
        ([selector, wanted]) => Number(document.querySelector(selector)?.dataset.plies) === wanted,
        [TABLE, before - 2],
      );
      tookBack = true;
      continue;
    }
    if (myMoves >= moveLimit) {
      await page.click("#resign");
      await page.click("#resign-yes");
      await page.waitForSelector(`${TABLE}[data-status="finished"]`);
      resigned = true;
      break;
    }
    await playAnyMove(page, pick);
    myMoves += 1;
  }

  const status = await page.textContent("#status");
  if (resigned) assert.match(status, /You lost\. White wins: resignation|You lost\. Black wins: resignation/);
  const shown = await shownMoves(page);
  const server = await serverTable(url, tableId);
  assert.deepEqual(shown, server.game.moves ?? [], "the page lists the server's moves");
  assert.equal(server.status, "TABLE_STATUS_FINISHED");
  // The captured counts beside the board are the server's.
  for (const [color, count] of [["white", server.game.capturedByWhite], ["black", server.game.capturedByBlack]]) {
    const line = await page.textContent(`.seat[data-color="${color}"] .captured`);
    assert.match(line, new RegExp(`captured ${count ?? 0}$`), `${color}: ${line}`);
  }
  // The streak against the computer, as the server counts it after the game.
  await page.waitForSelector("#streak:has-text('Win streak')");
  await waitForPlies(page, shown.length);
  return { tableId, plies: shown.length, myMoves, tookBack, resigned, status };
}
