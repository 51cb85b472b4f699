// A seek ends with its player: Cancel takes the player out of the pool before the choices
// come back, and a tab that goes away while seeking leaves it once the server sees its stream
// end (a second tab of a seeking player is told one seek at a time). Each is seen by the next
// seeker of the same pool, told from its first word that it waits alone (had the first
// stayed, the count would have been two, and the two paired). The player who cancelled seeks
// again, is not refused, and is paired with a third player; the first move played at their
// table reaches the other page.

import assert from "node:assert/strict";
import { countsShown, ONLINE, seek, shownWait } from "../seek.mjs";
import { playAnyMove, signedIn, TABLE, tableAttribute, waitForPlies } from "../table.mjs";

export async function run({ url, newPlayer, ask }) {
  const [canceller, leaver, third] = [await newPlayer("canceller"), await newPlayer("leaver"), await newPlayer("third")];
  for (const page of [canceller, leaver, third]) await page.goto(url);
  for (const page of [canceller, leaver, third]) await signedIn(page);

  await seek(canceller);
  await shownWait(canceller, 1);
  // The same player in a second tab: one seek at a time, it is told, and given the choice back.
  const secondTab = await canceller.context().newPage();
  await secondTab.goto(url);
  await signedIn(secondTab);
  await secondTab.check('#choose-seek-timer input[value="1"]');
  await secondTab.click("#play-online");
  await secondTab.waitForSelector("#seek-message:has-text('You are already looking for an opponent')");
  await secondTab.waitForSelector(`${ONLINE}[data-seeking="false"] #play-online`);
  await secondTab.close();
  await canceller.click("#cancel-seek");
  await canceller.waitForSelector(`${ONLINE}[data-seeking="false"] #play-online`);
  assert.equal(await canceller.textContent("#seek-message"), "Search cancelled");

  // The choices are back only once the canceller is out of the pool: the next seeker, at
  // once, is alone there, and stays unpaired.
  await seek(leaver);
  await shownWait(leaver, 1);
  assert.deepEqual(new Set(await countsShown(leaver)), new Set([1]), "the canceller left at once");
  // The leaver's tab goes away mid-seek; nothing tells the server but the stream's end, so
  // the test waits until the server has seen it.
  await leaver.close();
  await ask("wait until the pools are empty");

  await seek(canceller);
  await shownWait(canceller, 1);
  assert.deepEqual(new Set(await countsShown(canceller)), new Set([1]), "the leaver left with its tab");
  assert.equal(await canceller.textContent("#seek-message"), "", "the new seek is not refused");

  await seek(third);
  for (const page of [canceller, third]) await page.waitForSelector(`${TABLE}[data-status="playing"]`);
  const tableId = await tableAttribute(canceller, "table-id");
  assert.equal(await tableAttribute(third, "table-id"), tableId);
  const mover = (await tableAttribute(canceller, "my-turn")) === "true" ? canceller : third;
  await playAnyMove(mover);
  await waitForPlies(mover === canceller ? third : canceller, 1);
  return { tableId };
}
