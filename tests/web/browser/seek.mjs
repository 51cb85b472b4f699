// "Play online now" as a player does it on the start screen: pick the pool's turn timer and
// rated or casual (the rules are the start screen's own choice), tap the button, and watch the
// wait the page shows. The seek panel marks its state on #online-section (data-seeking, and
// data-seekers-in-pool as the server last said).

import assert from "node:assert/strict";
import { TABLE } from "./table.mjs";

export const ONLINE = "#online-section";
/** The turn timers of the pools, as the panel offers them. */
export const SEEK_TIMERS = { none: 0, "30 s": 1, "2 min": 2 };

/** Choose the pool and tap "Play online now"; returns once the page shows the wait, or the
 * table when a waiting seeker paired it at once (the wait may then never be drawn). Every
 * count of seekers in the pool the page then shows is noted, for ``countsShown``. */
export async function seek(page, { timer = "30 s", rated = false } = {}) {
  await page.check(`#choose-seek-timer input[value="${SEEK_TIMERS[timer]}"]`);
  await page.check(`#choose-rated input[value="${rated ? 1 : 0}"]`);
  await page.evaluate((selector) => {
    const panel = document.querySelector(selector);
    const counts = [];
    window.gotiSeekCounts = counts;
    new MutationObserver(() => counts.push(panel.dataset.seekersInPool)).observe(panel, {
      attributes: true,
      attributeFilter: ["data-seekers-in-pool"],
    });
  }, ONLINE);
  await page.click("#play-online");
  await page.waitForSelector(`${ONLINE}[data-seeking="true"] #cancel-seek, ${TABLE}`);
}

/** The counts of seekers in the pool the page has shown since its last ``seek``. */
export async function countsShown(page) {
  return page.evaluate(() => window.gotiSeekCounts.filter((count) => count !== undefined).map(Number));
}

/** Wait until the page shows the server's word on the wait; what it shows. */
export async function shownWait(page, seekersInPool) {
  const selector = seekersInPool === undefined
    ? `${ONLINE}[data-seekers-in-pool]`
    : `${ONLINE}[data-seekers-in-pool="${seekersInPool}"]`;
  await page.waitForSelector(selector, { timeout: 30_000 });
  const wait = {
    count: (await page.textContent("#seek-count")).trim(),
    range: (await page.textContent("#seek-range")).trim(),
    rating: (await page.textContent("#seek-rating")).trim(),
    waited: (await page.textContent("#seek-waited")).trim(),
  };
  for (const [what, text] of Object.entries(wait)) assert.ok(text !== "", `the wait shows no ${what}`);
  return wait;
}

/** Wait until the time waited that the page shows has moved on from ``shown``. */
export async function waitedPast(page, shown) {
  await page.waitForFunction(
    (before) => (document.querySelector("#seek-waited")?.textContent ?? before) !== before,
    shown,
    { timeout: 30_000 },
  );
}
