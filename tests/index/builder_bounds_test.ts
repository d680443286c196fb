/**
 * What the index keeps of a service's records is bounded whatever the
 * service sends: long texts cut (and kept as strings of their own, not
 * slices that hold a whole reply), properties and tags beyond a number left
 * out, a name past its length and a namespace past its text refused in one
 * line, and the lexicon's memo of analysed values kept to short ones.
 */
import assert from "node:assert/strict";
import { IndexBuilder } from "../../src/index/builder.ts";
import {
  MAX_DESCRIPTION_CHARS,
  MAX_NAME_CHARS,
  MAX_PROPERTIES,
  MAX_VALUE_CHARS,
} from "../../src/index/record_bounds.ts";
import { Lexicon } from "../../src/index/lexicon.ts";
import { emptySynonyms } from "../../src/index/synonyms.ts";
import type { IndexRecord } from "../../src/index/record.ts";

const lexicon = () => new Lexicon(emptySynonyms());

function record(name: string, over: Partial<IndexRecord> = {}): IndexRecord {
  return { name, description: "", units: "", writable: false, properties: {}, tags: [], ...over };
}

Deno.test("long descriptions, units, properties and tags are cut; those past the count left out", () => {
  const b = new IndexBuilder(lexicon(), "test", "d");
  const properties = Object.fromEntries(
    Array.from({ length: 200 }, (_, i) => [`k${i}`, `value ${i} `.padEnd(10_000, "x")]),
  );
  b.add(record("A:B", {
    description: "beam ".repeat(5_000),
    units: "mA".padEnd(5_000, "m"),
    properties,
    tags: Array.from({ length: 200 }, (_, i) => `tag${i}`.padEnd(5_000, "t")),
  }));
  const data = b.finish();
  assert.equal(data.descriptions.at(0).length, MAX_DESCRIPTION_CHARS);
  assert.equal(data.unitsTable[0]?.length, MAX_VALUE_CHARS);
  const props = data.terms.filter((t) => t.startsWith("p:k"));
  assert.equal(props.length, MAX_PROPERTIES);
  assert.ok(props.every((t) => t.length <= "p:".length + 4 + 1 + MAX_VALUE_CHARS), props[0]);
  const tags = data.terms.filter((t) => t.startsWith("t:"));
  assert.equal(tags.length, MAX_PROPERTIES);
});

Deno.test("a cut never leaves half a surrogate pair", () => {
  const b = new IndexBuilder(lexicon(), "test", "d");
  b.add(record("A:B", { description: "é".repeat(MAX_DESCRIPTION_CHARS - 1) + "😀😀" }));
  const kept = b.finish().descriptions.at(0);
  assert.ok(!/[\ud800-\udbff]$/.test(kept), "a lone high surrogate at the end");
  assert.equal(kept.length, MAX_DESCRIPTION_CHARS - 1);
});

Deno.test("a name past its length and a namespace past its text are refused in one line", () => {
  const b = new IndexBuilder(lexicon(), "cf", "d");
  assert.throws(
    () => b.add(record("N".repeat(MAX_NAME_CHARS + 1))),
    /^RangeError: device index: a name from cf is longer than 1024 characters \("N{80}"…\)$/,
  );
  const small = new IndexBuilder(lexicon(), "cf", "d", 10_000);
  assert.throws(
    () => {
      for (let i = 0; i < 1_000; i++) {
        small.add(record(`D:${String(i).padStart(4, "0")}`, { description: "d".repeat(400) }));
      }
    },
    /^RangeError: device index: cf holds more than 10000 bytes of names, descriptions and properties \(at its device 25\); the index keeps no more$/,
  );
});

Deno.test("the lexicon remembers the analysis of short values only", () => {
  const lex = lexicon();
  const long = "word ".repeat(100);
  const a = lex.analyseShort(long);
  assert.notEqual(lex.analyseShort(long), a, "a long value is analysed again, not kept");
  assert.equal(lex.analyseShort("short"), lex.analyseShort("short"));
});
