// Move entry on a pass-and-play table (one player moving both sides), through two known
// openings:
//  - a selection dropped by tapping elsewhere; a move entered with the keyboard;
//  - the pieces that must capture pulse; the only piece that can move is picked from the start;
//  - a double jump with one way on finishes by itself at its first landing (23x14x5);
//  - a double jump with two ways on is chosen landing by landing (24x15, then x8), its hop
//    dotted and the jumped piece marked, and tapping elsewhere mid-way starts it again.

import assert from "node:assert/strict";
import { playPath, shownMoves, signedIn, TABLE, waitForTurn } from "../table.mjs";

async function newPassAndPlay(page) {
  await page.click("#pass-and-play");
  await page.waitForSelector(`${TABLE}[data-status="playing"][data-role="both"]`);
}

async function classesOf(page, square) {
  return (await page.getAttribute(`[data-square="${square}"]`, "class")).split(/\s+/);
}

export async function run({ url, newPlayer }) {
  const page = await newPlayer("player");
  await page.goto(url);
  await signedIn(page);

  // -- one way on: the move finishes at its first landing ---------------------------
  await newPassAndPlay(page);
  await waitForTurn(page);
  // Tapping a piece picks it; tapping elsewhere drops it.
  await page.click('[data-square="9"]');
  assert.ok((await classesOf(page, 9)).includes("selected"));
  assert.deepEqual(
    (await page.locator(".cell.target").evaluateAll((cells) => cells.map((c) => c.dataset.square))).sort(),
    ["13", "14"],
  );
  await page.click('[data-square="1"]');
  assert.equal(await page.locator(".cell.selected").count(), 0, "tapping elsewhere cancels");
  assert.equal(await page.locator(".cell.target").count(), 0);

  // The first move by keyboard: Black's 9-13, from the cursor.
  await page.click('[data-square="9"]');
  await page.keyboard.press("Escape");
  assert.equal(await page.locator(".cell.selected").count(), 0, "Esc cancels");
  await page.focus('[data-square="9"]');
  await page.keyboard.press("Enter");
  assert.ok((await classesOf(page, 9)).includes("selected"), "Enter picks the piece");
  const focused = () => page.evaluate(() => document.activeElement?.dataset.square);
  await page.keyboard.press("ArrowDown");
  assert.equal(await focused(), "14", "down goes straight down the column band");
  await page.keyboard.press("ArrowLeft");
  assert.equal(await focused(), "13", "left steps along the row");
  await page.keyboard.press("Space");
  await page.waitForFunction((selector) => document.querySelector(selector)?.dataset.plies === "1", TABLE);

  for (const path of [[22, 18], [5, 9], [18, 15]]) await playPath(page, path);
  // Black must capture, with 10 or 11: both pulse, neither is picked for the player.
  await waitForTurn(page);
  for (const square of [10, 11]) {
    assert.ok((await classesOf(page, square)).includes("must-capture"), `${square} must capture`);
  }
  assert.equal(await page.locator(".cell.selected").count(), 0);
  assert.equal(await page.locator(".cell.must-capture").count(), 2);
  await playPath(page, [11, 18]);
  // White's 23 alone can move, so it is picked; it must jump twice, with one way on from 14,
  // so landing there plays the whole move.
  await waitForTurn(page);
  assert.ok((await classesOf(page, 23)).includes("selected"), "the only piece that can move is picked");
  await playPath(page, [14]);
  let moves = await shownMoves(page);
  assert.deepEqual(moves, ["9-13", "22-18", "5-9", "18-15", "11x18", "23x14x5"]);

  // -- two ways on: landing by landing --------------------------------------------------
  await page.click("#leave");
  await page.waitForSelector('main[data-view="start"]');
  await newPassAndPlay(page);
  for (const path of [[11, 16], [24, 19], [8, 11], [19, 15], [10, 19], [27, 24], [6, 10]]) {
    await playPath(page, path);
  }
  await waitForTurn(page);
  assert.ok((await classesOf(page, 24)).includes("selected"), "White's 24 alone can move");
  assert.ok((await classesOf(page, 24)).includes("must-capture"));
  await page.click('[data-square="15"]');
  assert.ok((await classesOf(page, 15)).includes("hop"), "the first landing is dotted");
  assert.ok((await classesOf(page, 19)).includes("jumped"), "the jumped piece is marked");
  const targets = await page.locator(".cell.target").evaluateAll((cells) => cells.map((c) => c.dataset.square));
  assert.deepEqual(targets.sort(), ["6", "8"], "two ways on from 15");
  // Tapping elsewhere drops the landings; the forced piece stays picked.
  await page.click('[data-square="32"]');
  assert.equal(await page.locator(".cell.hop").count(), 0);
  assert.ok((await classesOf(page, 24)).includes("selected"));
  await page.click('[data-square="15"]');
  await playPath(page, [8]);
  moves = await shownMoves(page);
  assert.equal(moves.at(-1), "24x15x8");
  // Black's answer is forced too: 4x11.
  await waitForTurn(page);
  assert.ok((await classesOf(page, 4)).includes("selected"));
  await playPath(page, [11]);
  moves = await shownMoves(page);
  assert.equal(moves.at(-1), "4x11");
  return { moves };
}
