// Two players with settled ratings (the test gives them ratings, as earlier rated games would
// have, and hands their guests' tokens to the pages, as kept in a browser) tap "Play online
// now" for a rated game, one over Connect and one over gRPC-Web. They meet at one table, each
// plays a move the other sees, and the side to move resigns. Once the server has counted the
// game, the first player leaves the table and opens the leaderboard from the start screen:
// both players are listed, best first, with their new ratings and deviations, the player's
// own row marked and their own place said under the board, in English and in Nepali. Back
// returns to the start screen.

import assert from "node:assert/strict";
import { seek } from "../seek.mjs";
import { playAnyMove, signedIn, TABLE, tableAttribute, waitForPlies } from "../table.mjs";

const LEADERBOARD = 'main[data-view="leaderboard"]';
const SERVER_SECONDS = 60;

/** A browser context's options that keep ``player``'s guest, as the page keeps it. */
function keeping(url, player) {
  const kept = JSON.stringify({ token: player.token, playerId: player.playerId });
  return {
    storageState: {
      cookies: [],
      origins: [{ origin: new URL(url).origin, localStorage: [{ name: "goti.player", value: kept }] }],
    },
  };
}

/** The leaderboard as the server has it for ``player`` (GetLeaderboard over Connect, JSON). */
async function serverBoard(url, player) {
  const response = await fetch(new URL("goti.api.v1.MatchmakingService/GetLeaderboard", url), {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${player.token}` },
    body: "{}",
  });
  assert.equal(response.status, 200, `GetLeaderboard answered ${response.status}`);
  return response.json();
}

/** Wait until the server's board lists every one of ``players`` after ``games`` rated games. */
async function boardCounting(url, players, games) {
  const deadline = Date.now() + SERVER_SECONDS * 1000;
  for (;;) {
    const board = await serverBoard(url, players[0]);
    const counted = players.every((player) =>
      (board.entries ?? []).some((entry) => entry.player.playerId === player.playerId && entry.rating.games === games));
    if (counted) return board;
    assert.ok(Date.now() < deadline, `the game was not counted in ${SERVER_SECONDS} s: ${JSON.stringify(board)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The leaderboard's rows as the page shows them. */
async function shownRows(page) {
  return page.locator("#leaderboard-rows tr").evaluateAll((rows) =>
    rows.map((row) => {
      const rating = row.querySelector(".rating");
      return {
        rank: Number(row.dataset.rank),
        playerId: row.dataset.playerId,
        mine: row.classList.contains("you"),
        name: row.cells[1].textContent,
        rating: Number(rating.dataset.rating),
        deviation: Number(rating.dataset.deviation),
        text: rating.textContent,
      };
    }));
}

export async function run({ url, newPlayer, parameters }) {
  const players = parameters.players;
  const first = await newPlayer("first", keeping(url, players[0]));
  const second = await newPlayer("second", keeping(url, players[1]));
  await first.goto(url);
  await second.goto(new URL("/?protocol=grpc-web", url).href);
  for (const [page, player] of [[first, players[0]], [second, players[1]]]) {
    await signedIn(page);
    assert.equal((await page.textContent("#player")).trim(), `Playing as ${player.name}`);
  }

  await seek(first, { rated: true });
  await seek(second, { rated: true });
  for (const page of [first, second]) await page.waitForSelector(`${TABLE}[data-status="playing"]`);
  assert.equal(await tableAttribute(first, "table-id"), await tableAttribute(second, "table-id"));
  const seated = (await first.locator(".seat .rating").allTextContents()).sort();
  assert.deepEqual(seated, players.map((player) => String(player.rating)).sort(), "settled ratings, no ?");

  for (let ply = 0; ply < 2; ply++) {
    const mover = (await tableAttribute(first, "my-turn")) === "true" ? first : second;
    await playAnyMove(mover);
    await waitForPlies(mover === first ? second : first, ply + 1);
  }
  const resigning = (await tableAttribute(first, "my-turn")) === "true" ? first : second;
  await resigning.click("#resign");
  await resigning.click("#resign-yes");
  for (const page of [first, second]) await page.waitForSelector(`${TABLE}[data-status="finished"]`);
  const server = await boardCounting(url, players, players[0].games + 1);

  await first.click("#leave");
  await first.click('main[data-view="start"] #leaderboard');
  await first.waitForSelector(`${LEADERBOARD}[data-loaded="true"]`);
  assert.equal(new URL(first.url()).pathname, "/leaderboard");
  const rows = await shownRows(first);
  const yourPlace = (await first.textContent("#your-place")).trim();
  assert.deepEqual(
    rows.map(({ rank, playerId, rating, deviation }) => ({ rank, playerId, rating, deviation })),
    server.entries.map((entry) => ({
      rank: entry.rank,
      playerId: entry.player.playerId,
      rating: entry.rating.rating,
      deviation: entry.rating.deviation,
    })),
    "the page shows the server's board",
  );
  for (const row of rows) assert.match(row.text, /^\d+ ±\d+$/, "a settled rating with its deviation");
  assert.deepEqual(rows.filter((row) => row.mine).map((row) => row.playerId), [players[0].playerId]);
  assert.equal(yourPlace, `Your place: ${server.you.rank}`);

  // The words change with the language, the board stays.
  await first.click("#language");
  await first.waitForFunction(() => document.querySelector("#your-place")?.textContent?.startsWith("तपाईंको स्थान"));
  assert.equal((await shownRows(first)).length, rows.length);
  await first.click("#language");

  await first.click(`${LEADERBOARD} #back`);
  await first.waitForSelector('main[data-view="start"] #leaderboard');
  return { rows, yourPlace, resigned: resigning === first ? "first" : "second" };
}
