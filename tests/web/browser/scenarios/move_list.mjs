// The move list on a long game, in Russian draughts on one device: a known opening leads to a
// six-hop capture (b4:d6:f8:h6:f4:c7:a5, White's, so Black's reply stands beside it), then the
// game goes on for many moves. The list keeps its newest move in sight (it scrolls by itself),
// after a reload too; and the long capture stays inside its column, on a wide screen and on a
// phone: it wraps rather than pushing the reply out of line or running past the list.

import assert from "node:assert/strict";
import { playAnyMove, plies, seededPick, signedIn, TABLE, waitForPlies, waitForTurn } from "../table.mjs";

// Found by playing random games with goti.rules until one gave White a capture of six hops.
const OPENING = [
  [24, 19], [10, 15], [19, 10], [6, 15], [23, 18], [12, 16],
  [27, 24], [7, 10], [24, 20], [3, 7], [21, 17], [10, 14],
];
const LONG_CAPTURE = [17, 10, 3, 12, 19, 6, 13];
const LONG_NOTATION = "b4:d6:f8:h6:f4:c7:a5";

/** Click ``squares`` (a piece, then its landings) until the move goes: the page finishes a
 * capture by itself once only one way is left. */
async function playSquares(page, squares) {
  await waitForTurn(page);
  const before = await plies(page);
  for (const square of squares) {
    const gone = await page.locator(TABLE).evaluate(
      (main, count) => main.dataset.sending === "true" || Number(main.dataset.plies) > count,
      before,
    );
    if (gone) break;
    await page.click(`[data-square="${square}"]`);
  }
  await waitForPlies(page, before + 1);
}

/** Where the list's newest move is, against the list's visible box. */
async function newestMove(page) {
  return page.evaluate(() => {
    const list = document.querySelector("#moves");
    const shown = list.querySelectorAll(".ply[data-ply]");
    const newest = shown[shown.length - 1];
    const box = list.getBoundingClientRect();
    const move = newest.getBoundingClientRect();
    return {
      count: shown.length,
      scrolls: list.scrollHeight > list.clientHeight,
      inSight: move.top >= box.top - 1 && move.bottom <= box.bottom + 1,
    };
  });
}

/** The long capture's text, its column and its row's reply, and the other rows' replies. */
async function captureLayout(page, notation) {
  return page.evaluate((wanted) => {
    const list = document.querySelector("#moves");
    const ply = [...list.querySelectorAll(".ply[data-ply]")].find((span) => span.textContent === wanted);
    const range = document.createRange();
    range.selectNodeContents(ply);
    const lines = [...range.getClientRects()];
    const column = ply.getBoundingClientRect();
    const reply = ply.nextElementSibling.getBoundingClientRect();
    const replies = [...list.querySelectorAll("li")]
      .map((row) => row.children[1])
      .filter((span) => span !== undefined)
      .map((span) => span.getBoundingClientRect().left);
    return {
      textRight: Math.max(...lines.map((line) => line.right)),
      textLeft: Math.min(...lines.map((line) => line.left)),
      lines: new Set(lines.map((line) => Math.round(line.top))).size,
      column: { left: column.left, right: column.right },
      replyLeft: reply.left,
      replyColumns: [Math.min(...replies), Math.max(...replies)],
      listRight: list.getBoundingClientRect().right,
      overflows: list.scrollWidth > list.clientWidth,
    };
  }, notation);
}

function assertInColumn(layout, where) {
  assert.ok(layout.textLeft >= layout.column.left - 0.5, `${where}: the capture starts in its column`);
  assert.ok(layout.textRight <= layout.column.right + 0.5, `${where}: the capture ends in its column`);
  assert.ok(layout.column.right <= layout.replyLeft + 0.5, `${where}: the capture stops before the reply`);
  assert.ok(
    layout.replyColumns[1] - layout.replyColumns[0] < 1,
    `${where}: every reply starts in the same column (${layout.replyColumns})`,
  );
  assert.ok(layout.textRight <= layout.listRight + 0.5 && !layout.overflows, `${where}: nothing runs past the list`);
}

export async function run({ url, newPlayer, parameters }) {
  const plyCount = parameters.plies ?? 40;
  const pick = seededPick(parameters.seed ?? 5);
  // A screen of 700 pixels: the list (40% of it high) holds about 14 full moves.
  const page = await newPlayer("player", { viewport: { width: 1280, height: 700 } });
  await page.goto(url);
  await signedIn(page);
  await page.check('#choose-variant input[value="1"]');
  await page.click("#pass-and-play");
  await page.waitForSelector(`${TABLE}[data-status="playing"][data-role="both"]`);

  for (const path of OPENING) await playSquares(page, path);
  await playSquares(page, LONG_CAPTURE);
  const moves = await page.locator("#moves .ply[data-ply]").allTextContents();
  assert.equal(moves.at(-1), LONG_NOTATION);

  while ((await plies(page)) < plyCount) {
    if ((await page.locator(`${TABLE}[data-status="playing"]`).count()) === 0) break;
    await playAnyMove(page, pick);
    const newest = await newestMove(page);
    assert.ok(newest.inSight, `after ${newest.count} moves the newest is out of sight`);
  }
  const played = await newestMove(page);
  assert.ok(played.scrolls, `${played.count} moves fill more than the list's height`);

  // A reload draws the kept game at once, its list at the newest move.
  await page.reload();
  await page.waitForSelector(`${TABLE}[data-plies="${played.count}"]`);
  await page.waitForFunction(() => {
    const list = document.querySelector("#moves");
    return list !== null && list.scrollTop > 0;
  });
  assert.ok((await newestMove(page)).inSight, "after a reload the newest move is in sight");

  const wide = await captureLayout(page, LONG_NOTATION);
  assertInColumn(wide, "wide");
  await page.setViewportSize({ width: 390, height: 844 });
  const phone = await captureLayout(page, LONG_NOTATION);
  assertInColumn(phone, "phone");
  assert.ok(phone.lines > 1, "on a phone the long capture wraps");
  return { plies: played.count, wide, phone };
}
