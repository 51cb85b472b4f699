// How the page looks and speaks: dark when the system is dark, light when it is light; in
// Nepali when the browser asks for it, switched to English and back with one button; the move
// list beside the board on a wide screen and below it on a phone.

import assert from "node:assert/strict";
import { playAnyMove, signedIn, TABLE } from "../table.mjs";

async function background(page) {
  return page.evaluate(() => getComputedStyle(document.body).backgroundColor);
}

function brightness(color) {
  const [r, g, b] = color.match(/\d+/g).map(Number);
  return (r + g + b) / 3;
}

export async function run({ url, newPlayer }) {
  const dark = await newPlayer("dark", { colorScheme: "dark" });
  const light = await newPlayer("light", { colorScheme: "light" });
  await dark.goto(url);
  await light.goto(url);
  assert.ok(brightness(await background(dark)) < 60, "dark theme");
  assert.ok(brightness(await background(light)) > 200, "light theme");

  const nepali = await newPlayer("nepali", { locale: "ne-NP" });
  await nepali.goto(url);
  await signedIn(nepali);
  assert.equal(await nepali.textContent(".page-header h1"), "गोटी · चेकर्स");
  assert.equal(await nepali.getAttribute("html", "lang"), "ne");
  assert.equal(await nepali.textContent("#play-computer"), "खेल्नुहोस्");
  await nepali.click("#language");
  assert.equal(await nepali.textContent("#play-computer"), "Play");
  await nepali.reload();
  await signedIn(nepali);
  assert.equal(await nepali.textContent("#play-computer"), "Play", "the choice is kept");

  const wide = light;
  await signedIn(wide);
  await wide.click("#play-computer");
  await playAnyMove(wide);
  const board = await wide.locator(".board").boundingBox();
  const moves = await wide.locator("#moves").boundingBox();
  assert.ok(moves.x >= board.x + board.width, "the move list is beside the board");
  const phone = await newPlayer("phone", { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await phone.goto(wide.url().replace(/\/table\/.*/, "/"));
  await signedIn(phone);
  await phone.click("#play-computer");
  await phone.waitForSelector(`${TABLE}[data-status="playing"]`);
  // A tap picks and a tap lands, as a click does.
  await phone.waitForSelector(`${TABLE}[data-my-turn="true"]`);
  await phone.tap(".cell.movable >> nth=0");
  await phone.tap(".cell.target >> nth=0");
  await phone.waitForSelector(`${TABLE}[data-plies="2"]`, { timeout: 60_000 });
  const phoneBoard = await phone.locator(".board").boundingBox();
  const phoneMoves = await phone.locator("#moves").boundingBox();
  assert.ok(phoneMoves.y >= phoneBoard.y + phoneBoard.height, "the move list is below the board");
  assert.ok(phoneBoard.width <= 390, "the board fits the phone");
  return {};
}
