// Two people in two browsers play each other online: one creates a table for a friend with a
// turn timer, the other opens its join link (over gRPC-Web, the first over Connect); a third
// watches by the table's address. They alternate moves by clicks, each move reaching the
// other pages on their live streams, and every page lists the same moves as the server. Then
// the side to move resigns.

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
} from "../table.mjs";

export async function run({ url, newPlayer, parameters }) {
  const plyCount = parameters.plies ?? 10;
  const pick = seededPick(parameters.seed ?? 11);
  const host = await newPlayer("host");
  const guest = await newPlayer("guest");
  await host.goto(url);
  await guest.goto(new URL("/?protocol=grpc-web", url).href);
  await signedIn(host);
  await signedIn(guest);

  // A turn timer of 30 s.
  await host.check('#choose-timer input[value="1"]');
  await host.click("#create-table");
  await host.waitForSelector(`${TABLE}[data-status="waiting"]`);
  const code = (await host.textContent("#table-code")).trim();
  const link = await host.getAttribute("#join-link", "href");
  assert.equal(link, new URL(`/join/${code}`, url).href, "the join link opens this page");

  // The link opens the page straight into the table.
  await guest.goto(link);
  await guest.waitForSelector(`${TABLE}[data-status="playing"]`);
  await host.waitForSelector(`${TABLE}[data-status="playing"]`);
  const tableId = await tableAttribute(host, "table-id");
  assert.equal(await tableAttribute(guest, "table-id"), tableId);
  assert.equal(new URL(guest.url()).pathname, `/table/${tableId}`);
  const roles = [await tableAttribute(host, "role"), await tableAttribute(guest, "role")].sort();
  assert.deepEqual(roles, ["black", "white"]);

  // Someone else watches by the table's address.
  const spectator = await newPlayer("spectator");
  await spectator.goto(new URL(`/table/${tableId}`, url).href);
  await spectator.waitForSelector(`${TABLE}[data-role="spectator"]`);
  assert.match(await spectator.textContent("#table-header"), /Watching$/);
  assert.equal(await spectator.locator("#resign").count(), 0);
  // The turn timer runs for the side to move.
  await host.waitForSelector("#timer:has-text('left')");
  assert.match(await host.textContent("#timer"), /^0:[0-3]\d left$/);

  for (let ply = 0; ply < plyCount; ply++) {
    const mover = (await tableAttribute(host, "my-turn")) === "true" ? host : guest;
    const watcher = mover === host ? guest : host;
    await playAnyMove(mover, pick);
    // The other page sees the move come in on its stream.
    await waitForPlies(watcher, ply + 1);
  }
  const server = (await serverTable(url, tableId)).game.moves;
  assert.deepEqual(await shownMoves(host), server);
  assert.deepEqual(await shownMoves(guest), server);
  await waitForPlies(spectator, plyCount);
  assert.deepEqual(await shownMoves(spectator), server);
  assert.equal(await plies(host), plyCount);
  // Between people moves are final: no take-back button.
  assert.equal(await host.locator("#take-back").count(), 0);

  // The side to move resigns; every page shows the result.
  const resigning = (await tableAttribute(host, "my-turn")) === "true" ? host : guest;
  const winner = resigning === host ? guest : host;
  await resigning.click("#resign");
  await resigning.click("#resign-yes");
  for (const page of [host, guest, spectator]) {
    await page.waitForSelector(`${TABLE}[data-status="finished"]`);
    assert.match(await page.textContent("#status"), /(White|Black) wins: resignation$/);
  }
  assert.match(await resigning.textContent("#status"), /^You lost\./);
  assert.match(await winner.textContent("#status"), /^You won!/);
  return { tableId, code, moves: server };
}
