// How the page looks and speaks: dark when the system is dark, light when it is light, the
// seats' colour swatches standing out from the page in both; in Nepali when the browser asks
// for it, drawn with the page's own Devanagari font (this machine has none), switched to
// English and back with one button; the move list beside the board on a wide screen and below
// it on a phone.

import assert from "node:assert/strict";
import { playAnyMove, signedIn, TABLE } from "../table.mjs";

async function background(page) {
  return page.evaluate(() => getComputedStyle(document.body).backgroundColor);
}

function brightness(color) {
  const [r, g, b] = color.match(/\d+/g).map(Number);
  return (r + g + b) / 3;
}

/** WCAG's contrast ratio of two computed colours (`rgb(r, g, b)`). */
function contrast(one, other) {
  const luminance = (color) => {
    const [r, g, b] = color.match(/\d+/g).slice(0, 3).map((value) => {
      const channel = Number(value) / 255;
      return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [light, dark] = [luminance(one), luminance(other)].sort((a, b) => b - a);
  return (light + 0.05) / (dark + 0.05);
}

/** The seat swatch of ``color`` against the page: its ring's contrast, and the ring's width. */
async function swatch(page, color) {
  const seen = await page.evaluate((selector) => {
    const style = getComputedStyle(document.querySelector(selector));
    return {
      edge: style.borderTopColor,
      width: parseFloat(style.borderTopWidth),
      page: getComputedStyle(document.body).backgroundColor,
    };
  }, `.swatch.${color}`);
  return { contrast: contrast(seen.edge, seen.page), width: seen.width };
}

/** The fonts Chromium drew an element's text with (its DevTools protocol says). */
async function fontsOf(page, selector) {
  const session = await page.context().newCDPSession(page);
  await session.send("DOM.enable");
  await session.send("CSS.enable");
  const { root } = await session.send("DOM.getDocument");
  const { nodeId } = await session.send("DOM.querySelector", { nodeId: root.nodeId, selector });
  const { fonts } = await session.send("CSS.getPlatformFontsForNode", { nodeId });
  await session.detach();
  return fonts;
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
  // The page's Devanagari font is loaded, and the Nepali words are drawn with it, every glyph.
  await nepali.waitForFunction(() =>
    [...document.fonts].some((face) => face.family.replace(/"/g, "") === "Goti Devanagari" && face.status === "loaded"),
  );
  assert.ok(await nepali.evaluate(() => document.fonts.check('16px "Goti Devanagari"', "गोटी")));
  const buttonFonts = await fontsOf(nepali, "#play-computer");
  assert.deepEqual(
    buttonFonts.map((font) => [font.familyName, font.isCustomFont]),
    [["Noto Sans Devanagari", true]],
    `खेल्नुहोस् is drawn with ${JSON.stringify(buttonFonts)}`,
  );
  const headingFonts = await fontsOf(nepali, ".page-header h1 a");
  assert.ok(
    headingFonts.some((font) => font.isCustomFont && font.familyName === "Noto Sans Devanagari"),
    `the heading is drawn with ${JSON.stringify(headingFonts)}`,
  );
  await nepali.click("#language");
  assert.equal(await nepali.textContent("#play-computer"), "Play");
  await nepali.reload();
  await signedIn(nepali);
  assert.equal(await nepali.textContent("#play-computer"), "Play", "the choice is kept");

  const wide = light;
  await signedIn(wide);
  await wide.click("#play-computer");
  await playAnyMove(wide);
  // Each seat's swatch stands out from the page: its ring is at least 3:1 against it (WCAG's
  // contrast for parts of a page one must see), the black one in the dark theme too.
  await signedIn(dark);
  await dark.click("#play-computer");
  await dark.waitForSelector(`${TABLE}[data-status="playing"]`);
  for (const [page, theme] of [[light, "light"], [dark, "dark"]]) {
    for (const color of ["white", "black"]) {
      const seen = await swatch(page, color);
      assert.ok(seen.contrast >= 3 && seen.width >= 1, `the ${color} swatch in the ${theme} theme: ${JSON.stringify(seen)}`);
    }
  }
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
