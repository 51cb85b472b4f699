// Builds Goti's web page into the Python package (services/goti/web/static), where the tables
// service serves it from: the bundled client (app.js), its styles (app.css), the Devanagari
// font cut to the page's Nepali words (font.mjs) with its licence, and the page's static files
// as they are. The build is deterministic: the same sources and packages give the same bytes.
//
//   node build.mjs           build (after `npx buf generate`, which `npm run build` runs)
//   node build.mjs --check   fail if the shipped build differs from what the sources give

import { build } from "esbuild";
import { readFile, readdir, writeFile, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { devanagariFont } from "./font.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const source = join(here, "src");
const shipped = join(here, "..", "services", "goti", "web", "static");
const copied = ["index.html", "favicon.svg"];
/** The sources whose Devanagari the page's font must draw. */
const nepaliSources = ["words.ts", "index.html"];
const banner = "/* Goti's web table: built by web/build.mjs from web/src. Do not edit. */";

const common = {
  bundle: true,
  minify: true,
  write: false,
  legalComments: "eof",
  charset: "utf8",
  logLevel: "warning",
  banner: { js: banner, css: banner },
};

async function assemble() {
  const script = await build({
    ...common,
    entryPoints: [join(source, "main.ts")],
    format: "esm",
    target: ["es2022", "chrome100", "firefox100", "safari15"],
    outfile: "app.js",
  });
  const styles = await build({
    ...common,
    entryPoints: [join(source, "styles.css")],
    target: ["chrome100", "firefox100", "safari15"],
    // Addresses from the page's root (the font) are files shipped beside app.css.
    external: ["/*"],
    outfile: "app.css",
  });
  const files = new Map();
  files.set("app.js", script.outputFiles[0].contents);
  files.set("app.css", styles.outputFiles[0].contents);
  for (const name of copied) files.set(name, await readFile(join(source, name)));
  const texts = await Promise.all(nepaliSources.map((name) => readFile(join(source, name), "utf8")));
  for (const [name, contents] of await devanagariFont(texts)) files.set(name, contents);
  return files;
}

async function check(files) {
  const problems = [];
  const present = new Set((await readdir(shipped)).filter((name) => !name.startsWith(".")));
  for (const [name, contents] of files) {
    let current;
    try {
      current = await readFile(join(shipped, name));
    } catch {
      problems.push(`${name} is missing`);
      continue;
    }
    if (Buffer.compare(current, Buffer.from(contents)) !== 0) problems.push(`${name} differs`);
    present.delete(name);
  }
  for (const name of present) problems.push(`${name} is not built from web/src`);
  if (problems.length > 0) {
    console.error(
      `the shipped web page (services/goti/web/static) is not what web/src builds:\n  ` +
        `${problems.join("\n  ")}\nrebuild it: cd web && npm ci && npm run build`,
    );
    process.exit(1);
  }
  console.log(`the shipped web page matches its sources (${files.size} files)`);
}

async function ship(files) {
  for (const name of await readdir(shipped)) {
    if (!name.startsWith(".") && !files.has(name)) await rm(join(shipped, name));
  }
  for (const [name, contents] of files) await writeFile(join(shipped, name), contents);
  const sizes = [...files].map(([name, contents]) => `${name} ${contents.length} bytes`);
  console.log(`built the web page into ${shipped}:\n  ${sizes.join("\n  ")}`);
}

const files = await assemble();
if (process.argv.includes("--check")) await check(files);
else await ship(files);
