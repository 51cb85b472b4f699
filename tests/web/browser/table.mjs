// What the scenarios do at a table, as a player does it: by clicking squares and buttons.
// The page marks its state on its <main> element (data-status, data-my-turn, data-plies,
// data-sending) and each playable square with data-square, which is what is waited on here.

import assert from "node:assert/strict";

export const TABLE = 'main[data-view="table"]';
const READY = `${TABLE}[data-my-turn="true"]:not([data-sending="true"])`;
const FINISHED = `${TABLE}[data-status="finished"]`;

/** Wait until the page has signed in as its guest (the start screen shows the streaks). */
export async function signedIn(page) {
  await page.waitForSelector('main[data-view="start"] #streaks');
}

/** Two signed-in players on the start screen at ``url``, ``first`` and ``second`` by role. */
export async function twoPlayers(url, newPlayer, first = "host", second = "guest") {
  const pages = [await newPlayer(first), await newPlayer(second)];
  for (const page of pages) await page.goto(url);
  for (const page of pages) await signedIn(page);
  return pages;
}

/** ``host`` creates a table for a person and waits for someone to join; its code. */
export async function openTable(host) {
  await host.click("#create-table");
  await host.waitForSelector(`${TABLE}[data-status="waiting"]`);
  return (await host.textContent("#table-code")).trim();
}

export async function tableAttribute(page, name) {
  return page.locator(TABLE).getAttribute(`data-${name}`);
}

export async function plies(page) {
  return Number(await tableAttribute(page, "plies"));
}

/** Wait for the player's turn, or the end of the game; true when it is the player's turn. */
export async function waitForTurnOrEnd(page, timeout = 60_000) {
  const found = await page.waitForSelector(`${READY}, ${FINISHED}`, { timeout });
  return (await found.getAttribute("data-status")) !== "finished";
}

export async function waitForTurn(page, timeout = 60_000) {
  await page.waitForSelector(READY, { timeout });
}

async function sentOrPlayed(page, before) {
  return page.locator(TABLE).evaluate(
    (main, count) => main.dataset.sending === "true" || Number(main.dataset.plies) > count,
    before,
  );
}

/** Wait until the table shows more than ``before`` plies. */
export async function waitForPlies(page, count, timeout = 30_000) {
  await page.waitForFunction(
    ([selector, wanted]) => Number(document.querySelector(selector)?.dataset.plies ?? -1) >= wanted,
    [TABLE, count],
    { timeout },
  );
}

/** Play one of the player's legal moves by clicks: a piece (unless one is picked already),
 * then landing squares until the move goes. ``pick(n)`` chooses among n options. */
export async function playAnyMove(page, pick = () => 0) {
  await waitForTurn(page);
  const before = await plies(page);
  if ((await page.locator(".cell.selected").count()) === 0) {
    const movable = page.locator(".cell.movable");
    const count = await movable.count();
    assert.ok(count > 0, "no piece can move");
    await movable.nth(pick(count)).click();
  }
  for (let landing = 0; landing < 13; landing++) {
    if (await sentOrPlayed(page, before)) break;
    const targets = page.locator(".cell.target");
    const count = await targets.count();
    assert.ok(count > 0, "a piece is picked but has nowhere to land");
    await targets.nth(pick(count)).click();
  }
  await waitForPlies(page, before + 1);
}

/** Click ``squares`` in turn (a piece, then its landings); the move must then be played. */
export async function playPath(page, squares) {
  await waitForTurn(page);
  const before = await plies(page);
  for (const square of squares) await page.click(`[data-square="${square}"]`);
  await waitForPlies(page, before + 1);
}

/** The moves the page lists, in notation, oldest first. */
export async function shownMoves(page) {
  return page.locator("#moves .ply[data-ply]").allTextContents();
}

/** The table as the server has it now (GetTable over Connect, in JSON, as curl would). */
export async function serverTable(url, tableId) {
  const response = await fetch(new URL("goti.api.v1.TablesService/GetTable", url), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ tableId }),
  });
  assert.equal(response.status, 200, `GetTable answered ${response.status}`);
  const body = await response.json();
  return body.table;
}

/** A seeded choice, so that a failing game can be played again move for move. */
export function seededPick(seed) {
  let state = seed >>> 0 || 1;
  return (count) => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % count;
  };
}
