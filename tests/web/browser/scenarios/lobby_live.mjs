// The lobby updates live: one person watches the lobby (over gRPC-Web) while another creates
// a public table; the table appears without a reload, its host's rating beside the host's
// name, is joined with one click, and leaves the lobby of a third watcher once it is full.

import assert from "node:assert/strict";
import { signedIn, TABLE } from "../table.mjs";

export async function run({ url, newPlayer }) {
  const watcher = await newPlayer("watcher");
  const host = await newPlayer("host");
  const onlooker = await newPlayer("onlooker");
  await watcher.goto(new URL("/?protocol=grpc-web", url).href);
  await host.goto(url);
  await onlooker.goto(url);
  for (const page of [watcher, host, onlooker]) await signedIn(page);

  await watcher.click("#lobby");
  await watcher.waitForSelector('main[data-view="lobby"][data-connected="true"]');
  assert.equal(new URL(watcher.url()).pathname, "/lobby");
  await watcher.waitForSelector("#lobby-empty:has-text('No open tables yet.')");
  await onlooker.goto(new URL("/lobby", url).href);
  await onlooker.waitForSelector('main[data-view="lobby"][data-connected="true"]');

  await host.check("#public");
  await host.click("#create-table");
  await host.waitForSelector(`${TABLE}[data-status="waiting"]`);
  const code = (await host.textContent("#table-code")).trim();

  const row = `tr[data-code="${code}"]`;
  await watcher.waitForSelector(row);
  await onlooker.waitForSelector(row);
  assert.equal(await watcher.locator("#lobby-rows tr").count(), 1);
  // The host's rating beside the host's name: a new player's, provisional.
  assert.equal(await watcher.textContent(`${row} .rating`), "1500?");
  await watcher.click(`${row} button`);
  await watcher.waitForSelector(`${TABLE}[data-status="playing"]`);
  await host.waitForSelector(`${TABLE}[data-status="playing"]`);
  // Full now: gone from the lobby of the one still watching it.
  await onlooker.waitForSelector(row, { state: "detached" });
  return { code };
}
