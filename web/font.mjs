// The Devanagari font the page carries, so that its Nepali words show on a system without one:
// Noto Sans Devanagari (SIL Open Font License 1.1, from @fontsource/noto-sans-devanagari), cut
// down with HarfBuzz's subsetter (harfbuzzjs) to the characters the page writes in Devanagari:
// those of its words (src/words.ts, src/index.html), the Devanagari digits and dandas, and the
// joiners. HarfBuzz keeps every glyph its shaping rules can reach from those characters, so the
// conjuncts and vowel signs come along. Each weight is checked after cutting: every Devanagari
// run of the words shapes with the cut font exactly as with the whole one, and to no missing
// glyph, before and after WOFF2. The same packages give the same bytes, so
// `node build.mjs --check` can compare them.

import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import * as harfbuzz from "harfbuzzjs";

const require = createRequire(import.meta.url);
const woff2 = require("wawoff2");

const SOURCE_PACKAGE = "@fontsource/noto-sans-devanagari";
/** The weights the page uses: body text, and its headings and bold labels. */
export const FONT_WEIGHTS = [400, 700];
/** The shipped file of one weight, and the font's licence beside them. */
export const fontFile = (weight) => `noto-sans-devanagari-${weight}.woff2`;
export const FONT_LICENCE_FILE = "noto-sans-devanagari-OFL.txt";

const DEVANAGARI_RUN = /[\u0900-\u097F\u200C\u200D]+/gu;
/** Always kept: the digits and dandas (for numbers and sentences the words may gain), and the
 * dotted circle shapers draw under a vowel sign that has lost its letter. */
const ALWAYS_KEPT = "०१२३४५६७८९।॥\u25CC";

// hb_subset_sets_t and hb_subset_flags_t, from HarfBuzz's hb-subset.h.
const SUBSET_SETS_NAME_ID = 4;
const SUBSET_FLAGS_NO_HINTING = 0x1;
const MEMORY_MODE_WRITABLE = 2;
/** Name records kept besides HarfBuzz's default 0-6: the licence and its address. */
const LICENCE_NAME_IDS = [13, 14];

/** The Devanagari runs of ``texts``, each once. */
export function devanagariRuns(texts) {
  const runs = new Set();
  for (const text of texts) for (const run of text.match(DEVANAGARI_RUN) ?? []) runs.add(run);
  return [...runs].sort();
}

async function subsetter() {
  const wasm = await readFile(require.resolve("harfbuzzjs/dist/harfbuzz-subset.wasm"));
  const { instance } = await WebAssembly.instantiate(wasm);
  const hb = instance.exports;
  return (font, codePoints) => {
    const input = hb.hb_subset_input_create_or_fail();
    if (input === 0) throw new Error("HarfBuzz could not start a subset");
    const unicodes = hb.hb_subset_input_unicode_set(input);
    for (const codePoint of codePoints) hb.hb_set_add(unicodes, codePoint);
    const names = hb.hb_subset_input_set(input, SUBSET_SETS_NAME_ID);
    for (const id of LICENCE_NAME_IDS) hb.hb_set_add(names, id);
    hb.hb_subset_input_set_flags(input, hb.hb_subset_input_get_flags(input) | SUBSET_FLAGS_NO_HINTING);
    const pointer = hb.malloc(font.byteLength);
    new Uint8Array(hb.memory.buffer).set(font, pointer);
    const blob = hb.hb_blob_create(pointer, font.byteLength, MEMORY_MODE_WRITABLE, 0, 0);
    const face = hb.hb_face_create(blob, 0);
    hb.hb_blob_destroy(blob);
    const subset = hb.hb_subset_or_fail(face, input);
    hb.hb_subset_input_destroy(input);
    try {
      if (subset === 0) throw new Error("HarfBuzz could not subset the font");
      const result = hb.hb_face_reference_blob(subset);
      const data = hb.hb_blob_get_data(result, 0);
      // Read after the subset ran: memory may have grown, detaching older views of it.
      const bytes = new Uint8Array(hb.memory.buffer, data, hb.hb_blob_get_length(result)).slice();
      hb.hb_blob_destroy(result);
      return bytes;
    } finally {
      if (subset !== 0) hb.hb_face_destroy(subset);
      hb.hb_face_destroy(face);
      hb.free(pointer);
    }
  };
}

/** Glyph ids and advances of ``text`` shaped with ``font`` (a font file's bytes). */
function shaped(font, text) {
  const face = new harfbuzz.Face(new harfbuzz.Blob(font));
  const shaper = new harfbuzz.Font(face);
  const buffer = new harfbuzz.Buffer();
  buffer.addText(text);
  buffer.guessSegmentProperties();
  harfbuzz.shape(shaper, buffer);
  const glyphs = buffer.getGlyphInfos().map((info) => info.codepoint);
  const advances = buffer.getGlyphPositions().map((position) => position.xAdvance);
  return { glyphs, advances };
}

function checkShaping(whole, cut, runs, weight) {
  for (const run of runs) {
    const before = shaped(whole, run);
    const after = shaped(cut, run);
    if (after.glyphs.includes(0)) throw new Error(`the ${weight} font lacks a glyph of "${run}"`);
    if (after.glyphs.length !== before.glyphs.length || after.advances.join() !== before.advances.join()) {
      throw new Error(`the cut ${weight} font shapes "${run}" otherwise than the whole font`);
    }
  }
}

/** The font's shipped files (each weight, and the licence), by name, for ``texts``. */
export async function devanagariFont(texts) {
  const runs = devanagariRuns(texts);
  const codePoints = new Set([...runs.join(""), ...ALWAYS_KEPT].map((character) => character.codePointAt(0)));
  const subset = await subsetter();
  const source = (name) => require.resolve(`${SOURCE_PACKAGE}/${name}`);
  const files = new Map();
  for (const weight of FONT_WEIGHTS) {
    const packed = await readFile(source(`files/noto-sans-devanagari-devanagari-${weight}-normal.woff2`));
    // wawoff2 answers with a view of its own memory, which its next call overwrites: copied.
    const whole = (await woff2.decompress(packed)).slice();
    const cut = subset(whole, codePoints);
    const packedCut = (await woff2.compress(cut)).slice();
    // What a browser will unpack, checked: the cut font, and the same after WOFF2.
    checkShaping(whole, cut, runs, weight);
    checkShaping(whole, (await woff2.decompress(packedCut)).slice(), runs, weight);
    files.set(fontFile(weight), packedCut);
  }
  files.set(FONT_LICENCE_FILE, await readFile(source("LICENSE")));
  return files;
}
