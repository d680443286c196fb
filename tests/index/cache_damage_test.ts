/**
 * A cache file damaged inside its sections (the header intact): a term list
 * that no longer matches its postings, starts out of order, postings naming
 * devices the index does not hold or out of order, sections laid over one
 * another. A search from such a file either refuses it or answers exactly as
 * the built index does; never with devices the damage made up.
 */
import assert from "node:assert/strict";
import {
  buildIndex,
  DeviceIndex,
  Lexicon,
  lexiconDigest,
  rankedSearch,
} from "../../src/index/mod.ts";
import { loadSynonyms } from "../../src/index/synonyms.ts";
import { CacheDamage, openIndex, saveIndex } from "../../src/index/cache.ts";
import { simulatorIndexSource } from "../../src/adapters/simulator/index_source.ts";
import { defaultFacility } from "../../src/facility/facility.ts";
import { tempDir } from "../support/temp.ts";

const synonyms = await loadSynonyms();
const digest = lexiconDigest(synonyms);
const source = simulatorIndexSource(defaultFacility());
const built = await buildIndex(source, synonyms);

type Section = { offset: number; length: number };

/** The cache file's header and where its sections are. */
function headerOf(
  bytes: Uint8Array,
): { header: Record<string, unknown>; sections: Record<string, Section> } {
  const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
  return { header, sections: header.sections };
}

/** The bytes with their header replaced (the same length, padded with spaces). */
function withHeader(bytes: Uint8Array, header: Record<string, unknown>): Uint8Array {
  const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true);
  const text = JSON.stringify(header);
  assert.ok(text.length <= length, "the edited header fits in the old one's place");
  const out = bytes.slice();
  out.set(new TextEncoder().encode(text.padEnd(length, " ")), 8);
  return out;
}

const QUESTIONS = [
  "ion pump pressure cell 4",
  "horizontal steerers linac",
  "bpm 11",
  "rf phase",
  "the last three linac klystrons forward power",
];

/** Each damage, made on a copy of a good cache file. */
const DAMAGES: Record<string, (bytes: Uint8Array) => Uint8Array> = {
  "a line break inside the term list (every term after it shifted)": (bytes) => {
    const { sections } = headerOf(bytes);
    const out = bytes.slice();
    const terms = sections.terms as Section;
    // A letter of a term near the start becomes a line break.
    const at = terms.offset + 3;
    out[at] = 10;
    return out;
  },
  "starts that go backwards": (bytes) => {
    const { sections } = headerOf(bytes);
    const out = bytes.slice();
    const s = sections.starts as Section;
    const view = new DataView(out.buffer, s.offset, s.length);
    const k = Math.floor(s.length / 8);
    view.setUint32(4 * k, 0, true);
    return out;
  },
  "postings that name devices past the last one": (bytes) => {
    const { sections } = headerOf(bytes);
    const out = bytes.slice();
    const p = sections.postings as Section;
    const view = new DataView(out.buffer, p.offset, p.length);
    for (let i = 0; i < p.length / 4; i += 3) view.setUint32(4 * i, 0xfffffff1, true);
    return out;
  },
  "postings out of order": (bytes) => {
    const { sections } = headerOf(bytes);
    const out = bytes.slice();
    const p = sections.postings as Section;
    const view = new DataView(out.buffer, p.offset, p.length);
    for (let i = 0; i + 1 < p.length / 4; i += 2) {
      const a = view.getUint32(4 * i, true), b = view.getUint32(4 * i + 4, true);
      view.setUint32(4 * i, b, true);
      view.setUint32(4 * i + 4, a, true);
    }
    return out;
  },
  "the names laid over the descriptions": (bytes) => {
    const { header, sections } = headerOf(bytes);
    const names = sections.names as Section, descriptions = sections.descriptions as Section;
    return withHeader(bytes, {
      ...header,
      sections: { ...sections, names: { offset: descriptions.offset, length: names.length } },
    });
  },
  "the terms laid over the header": (bytes) => {
    const { header, sections } = headerOf(bytes);
    return withHeader(bytes, {
      ...header,
      sections: { ...sections, terms: { offset: 0, length: (sections.terms as Section).length } },
    });
  },
};

Deno.test("a cache damaged inside its sections is refused or answers as the built index, never with made-up devices", async () => {
  await using dir = await tempDir();
  const file = `${dir.path}/i.idx`;
  await saveIndex(file, built.data);
  const good = await Deno.readFile(file);
  const expected = QUESTIONS.map((q) => rankedSearch(built, q));
  for (const [what, damage] of Object.entries(DAMAGES)) {
    await Deno.writeFile(file, damage(good));
    const store = await openIndex(file, source.id, digest);
    if (store === undefined) continue;
    try {
      const cached = new DeviceIndex(store, new Lexicon(synonyms));
      QUESTIONS.forEach((q, i) => {
        let answer;
        try {
          answer = rankedSearch(cached, q);
        } catch (e) {
          assert.ok(e instanceof CacheDamage, `${what}: ${q}: ${e}`);
          return;
        }
        assert.deepEqual(answer, expected[i], `${what}: ${q}`);
      });
    } finally {
      store.close();
    }
  }
});
