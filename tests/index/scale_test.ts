/** The index on a generated namespace in the convention, larger than the default facility. */
import assert from "node:assert/strict";
import { IndexBuilder } from "../../src/index/builder.ts";
import { DeviceIndex, Lexicon, lexiconDigest, rankedSearch } from "../../src/index/mod.ts";
import { loadSynonyms } from "../../src/index/synonyms.ts";
import { BENCH_PATTERNS, generateRecords } from "../../bench/index_names.ts";

const records = generateRecords(30_000);
const synonyms = await loadSynonyms();
const lexicon = new Lexicon(synonyms);
const builder = new IndexBuilder(lexicon, "generated", lexiconDigest(synonyms));
// Out of name order, so the build must sort and renumber.
for (const r of [...records].reverse()) builder.add(r);
const index = new DeviceIndex(builder.finish(), lexicon);
const names = records.map((r) => r.name).sort();

Deno.test("on 30k generated names every benchmark pattern finds what a scan finds", () => {
  for (const p of [...BENCH_PATTERNS, "SR:*:H00?1:*", "*:0001*", "BR:BPM:*"]) {
    const re = wildcardToRegExp(p);
    const expected = names.filter((n) => re.test(n));
    const page = index.match({ pattern: p, limit: 100_000 });
    assert.equal(page.total, expected.length, p);
    assert.deepEqual(page.devices.map((d) => d.name), expected, p);
  }
});

Deno.test("a short page of many ranked results is the head of the fully sorted list", () => {
  for (const q of ["storage ring", "horizontal", "current setpoint", "bpm cell 3"]) {
    const all = rankedSearch(index, q, { limit: 50_000 });
    for (const [offset, limit] of [[0, 10], [10, 25], [500, 40]] as const) {
      const page = rankedSearch(index, q, { offset, limit });
      assert.equal(page.total, all.total, q);
      assert.deepEqual(
        page.devices.map((d) => d.name),
        all.devices.slice(offset, offset + limit).map((d) => d.name),
        `${q} at ${offset}`,
      );
    }
  }
});

Deno.test("a record listed twice by a source is refused with its name", () => {
  const b = new IndexBuilder(lexicon, "twice", lexiconDigest(synonyms));
  const [r] = records;
  assert.ok(r);
  b.add(r);
  b.add(r);
  assert.throws(() => b.finish(), /SR:BPM:\d+:X is listed twice by twice/);
});

Deno.test("building from a source gives the event loop turns: a prompt waiting for keys is served", async () => {
  const many = generateRecords(60_000);
  let fired = false;
  let firedBeforeLastPage = false;
  const source = {
    id: "generated-turns",
    async *records() {
      for (let i = 0; i < many.length; i += 20_000) {
        if (i + 20_000 >= many.length) firedBeforeLastPage = fired;
        yield many.slice(i, i + 20_000);
        await Promise.resolve();
      }
    },
  };
  setTimeout(() => fired = true, 0);
  const b = new IndexBuilder(lexicon, source.id, lexiconDigest(synonyms));
  await b.addSource(source);
  assert.equal(b.size, many.length);
  assert.ok(firedBeforeLastPage, "a timer waited for the whole build");
});

/** The wildcard as the regular expression a scan would test (the reference the index must equal). */
function wildcardToRegExp(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(
    /\?/g,
    ".",
  );
  return new RegExp(`^${body}$`, "i");
}
