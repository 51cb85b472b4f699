// After a join from the lobby, the game goes on live on both pages: the joiner's page follows
// the new table (not the lobby it left), so each player's move reaches the other's page on its
// stream, with no reload, for several moves each.

import assert from "node:assert/strict";
import { openTable, playAnyMove, serverTable, shownMoves, TABLE, tableAttribute, twoPlayers, waitForPlies } from "../table.mjs";

export async function run({ url, newPlayer, parameters }) {
  const plyCount = parameters.plies ?? 4;
  const [host, joiner] = await twoPlayers(url, newPlayer, "host", "joiner");

  await joiner.click("#lobby");
  await joiner.waitForSelector('main[data-view="lobby"][data-connected="true"]');
  await host.check("#public");
  const code = await openTable(host);
  await joiner.click(`tr[data-code="${code}"] button`);
  await joiner.waitForSelector(`${TABLE}[data-status="playing"]`);
  await host.waitForSelector(`${TABLE}[data-status="playing"]`);
  const tableId = await tableAttribute(host, "table-id");

  for (let ply = 0; ply < plyCount; ply++) {
    const mover = (await tableAttribute(host, "my-turn")) === "true" ? host : joiner;
    const other = mover === host ? joiner : host;
    await playAnyMove(mover);
    // The move reaches the other page on its stream.
    await waitForPlies(other, ply + 1);
  }
  const server = (await serverTable(url, tableId)).game.moves;
  assert.deepEqual(await shownMoves(host), server);
  assert.deepEqual(await shownMoves(joiner), server);
  return { tableId, moves: server };
}
