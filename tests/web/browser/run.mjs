// Runs one browser scenario against a running Goti backend:
//
//   GOTI_WEB_URL=http://127.0.0.1:8080/ node run.mjs computer_game
//
// Debian's Chromium, headless, driven by playwright-core (from web/node_modules). Each
// scenario gets a fresh browser profile; on failure every open page is photographed into
// $GOTI_TEST_SCREENSHOTS. The scenario's report is printed as one `RESULT {json}` line; a
// scenario that needs the backend changed mid-way prints `ASK action` and reads `done`.

import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const web = join(here, "..", "..", "..", "web");
const { chromium } = createRequire(join(web, "package.json"))("playwright-core");

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const name = process.argv[2];
if (!name || !/^[a-z_]+$/.test(name)) {
  console.error("usage: node run.mjs SCENARIO");
  process.exit(2);
}
const url = process.env.GOTI_WEB_URL;
const screenshots = process.env.GOTI_TEST_SCREENSHOTS ?? join(here, "screenshots", name);
const parameters = JSON.parse(process.env.GOTI_SCENARIO_PARAMETERS ?? "{}");

const browser = await chromium.launch({
  executablePath: process.env.GOTI_TEST_CHROMIUM ?? "/usr/bin/chromium",
  // Playwright gives the browser a fresh --user-data-dir of its own.
  args: CHROMIUM_ARGS,
  timeout: 60_000,
});
const pages = [];
const problems = [];

/** A new browser context (its own storage: another person) and a page in it. */
async function newPlayer(label, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  context.setDefaultTimeout(30_000);
  const page = await context.newPage();
  page.on("pageerror", (error) => problems.push(`${label}: page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`${label}: console error: ${message.text()}`);
  });
  pages.push({ label, page });
  return page;
}

// Asks the test that runs the scenario to do something to the backend (break every browser
// connection, say), and waits until it is done.
const answers = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function ask(action) {
  console.log(`ASK ${action}`);
  const { value, done } = await answers.next();
  if (done || value.trim() !== "done") throw new Error(`the test did not ${action}: ${value}`);
}

const started = Date.now();
let status = 0;
try {
  const scenario = await import(pathToFileURL(join(here, "scenarios", `${name}.mjs`)).href);
  const report = await scenario.run({ url, newPlayer, parameters, ask });
  // Errors the page logged are failures too, unless the scenario expected them.
  const unexpected = problems.filter((problem) => !(report?.expectedErrors ?? []).some((e) => problem.includes(e)));
  if (unexpected.length > 0) throw new Error(`the page reported errors:\n${unexpected.join("\n")}`);
  console.log(`RESULT ${JSON.stringify({ ...report, seconds: (Date.now() - started) / 1000 })}`);
} catch (error) {
  status = 1;
  console.error(error?.stack ?? String(error));
  if (problems.length > 0) console.error(problems.join("\n"));
  await mkdir(screenshots, { recursive: true });
  for (const { label, page } of pages) {
    const file = join(screenshots, `${label}.png`);
    try {
      await page.screenshot({ path: file, fullPage: true, timeout: 10_000 });
      console.error(`screenshot: ${file}`);
    } catch (shotError) {
      console.error(`no screenshot of ${label}: ${shotError.message}`);
    }
  }
} finally {
  await browser.close();
}
process.exit(status);
