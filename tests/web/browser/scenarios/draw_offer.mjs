// A draw offered and accepted between two people: the guest joins by typing the table's code;
// once both have moved, the side to move offers a draw and is told to make their move, the
// other answering on their turn; the other is told the same from their side, with no answer
// buttons yet (pressing Y says why). The offerer moves; now, on their turn, the other sees
// Accept and Decline, accepts, and both pages show the draw by agreement. Then both ask for a
// rematch and meet at its table with colours swapped.

import assert from "node:assert/strict";
import { openTable, playAnyMove, serverTable, TABLE, tableAttribute, twoPlayers, waitForPlies } from "../table.mjs";

export async function run({ url, newPlayer }) {
  const [host, guest] = await twoPlayers(url, newPlayer);
  const code = await openTable(host);
  // Typed as a person would, in lower case with a dash.
  await guest.fill("#join-code", `${code.slice(0, 3)}-${code.slice(3)}`.toLowerCase());
  await guest.click("#join");
  await guest.waitForSelector(`${TABLE}[data-status="playing"]`);
  await host.waitForSelector(`${TABLE}[data-status="playing"]`);

  const first = (await tableAttribute(host, "my-turn")) === "true" ? host : guest;
  const second = first === host ? guest : host;
  await playAnyMove(first);
  await waitForPlies(second, 1);
  await playAnyMove(second);
  await waitForPlies(first, 2);

  // Both have moved: the first player may offer, before moving.
  await first.waitForSelector("#offer-draw");
  await first.click("#offer-draw");
  const firstSide = (await tableAttribute(first, "role")) === "white" ? "White" : "Black";
  const secondSide = firstSide === "White" ? "Black" : "White";
  // Each is told what comes next: the offerer moves, the other answers on their own turn.
  await first.waitForSelector(
    `#notices li:text-is("You offered a draw. Now make your move: ${secondSide} answers on their turn")`,
  );
  await second.waitForSelector(
    `#notices li:text-is("${firstSide} offers a draw: you can accept or decline it on your turn, after their move")`,
  );
  assert.equal(await second.locator("#accept-draw, #decline-draw").count(), 0, "no answer before their turn");
  await second.keyboard.press("y");
  await second.waitForSelector(
    "#message:text-is(\"You can answer the draw offer on your turn, after your opponent's move\")",
  );
  await playAnyMove(first);
  await waitForPlies(second, 3);
  await first.waitForSelector(
    `#notices li:text-is("You offered a draw: ${secondSide} answers on this turn (moving declines it)")`,
  );
  // On their turn the other sees the offer with its answers.
  await second.waitForSelector("#accept-draw");
  assert.equal(await second.locator("#decline-draw").count(), 1);
  assert.equal(
    await second.textContent("#notices li"),
    `${firstSide} offers a draw: accept or decline it, or just move, which declines it`,
  );
  await second.click("#accept-draw");
  for (const page of [first, second]) {
    await page.waitForSelector(`${TABLE}[data-status="finished"]`);
    assert.equal(await page.textContent("#status"), "Draw: agreed");
  }
  const tableId = await tableAttribute(host, "table-id");
  const table = await serverTable(url, tableId);
  assert.equal(table.game.outcome.termination, "TERMINATION_AGREEMENT");
  // After the game both ask for a rematch, and both go to its new table, colours swapped.
  const roles = [await tableAttribute(first, "role"), await tableAttribute(second, "role")];
  await first.click("#rematch");
  await second.waitForSelector("#notices li:has-text('asks for a rematch')");
  await second.click("#rematch");
  for (const page of [first, second]) {
    await page.waitForFunction(
      ([selector, old]) => {
        const main = document.querySelector(selector);
        return main !== null && main.dataset.tableId !== old && main.dataset.status === "playing";
      },
      [TABLE, tableId],
    );
  }
  const rematchId = await tableAttribute(first, "table-id");
  assert.equal(await tableAttribute(second, "table-id"), rematchId);
  assert.deepEqual(
    [await tableAttribute(first, "role"), await tableAttribute(second, "role")],
    roles.map((role) => (role === "white" ? "black" : "white")),
  );
  return { tableId, rematchId, plies: table.game.moves.length };
}
