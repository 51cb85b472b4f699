// After a rematch between two people both pages follow the new table: the first move played
// there reaches the other person's page on its stream, and the answer comes back the same way.

import assert from "node:assert/strict";
import { openTable, playAnyMove, serverTable, shownMoves, TABLE, tableAttribute, twoPlayers, waitForPlies } from "../table.mjs";

async function onNewTable(page, oldId) {
  await page.waitForFunction(
    ([selector, old]) => {
      const main = document.querySelector(selector);
      return main !== null && main.dataset.tableId !== old && main.dataset.status === "playing";
    },
    [TABLE, oldId],
  );
}

export async function run({ url, newPlayer }) {
  const [host, guest] = await twoPlayers(url, newPlayer);
  await openTable(host);
  await guest.goto(await host.getAttribute("#join-link", "href"));
  await guest.waitForSelector(`${TABLE}[data-status="playing"]`);
  await host.waitForSelector(`${TABLE}[data-status="playing"]`);
  const firstId = await tableAttribute(host, "table-id");

  const resigning = (await tableAttribute(host, "my-turn")) === "true" ? host : guest;
  await resigning.click("#resign");
  await resigning.click("#resign-yes");
  for (const page of [host, guest]) await page.waitForSelector(`${TABLE}[data-status="finished"]`);
  // The host asks first; the guest's answer starts the rematch for both.
  await host.click("#rematch");
  await guest.waitForSelector("#notices li:has-text('asks for a rematch')");
  await guest.click("#rematch");
  for (const page of [host, guest]) await onNewTable(page, firstId);
  const rematchId = await tableAttribute(host, "table-id");
  assert.equal(await tableAttribute(guest, "table-id"), rematchId);

  for (let ply = 0; ply < 2; ply++) {
    const mover = (await tableAttribute(host, "my-turn")) === "true" ? host : guest;
    const other = mover === host ? guest : host;
    await playAnyMove(mover);
    await waitForPlies(other, ply + 1);
  }
  const server = (await serverTable(url, rematchId)).game.moves;
  assert.deepEqual(await shownMoves(host), server);
  assert.deepEqual(await shownMoves(guest), server);
  return { firstId, rematchId, moves: server };
}
