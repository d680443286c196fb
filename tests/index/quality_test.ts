import assert from "node:assert/strict";
import { buildIndex } from "../../src/index/mod.ts";
import { loadSynonyms } from "../../src/index/synonyms.ts";
import { simulatorIndexSource } from "../../src/adapters/simulator/index_source.ts";
import { defaultFacility } from "../../src/facility/facility.ts";
import { loadQueries, mean, qualityReport, scoreQuery } from "./quality.ts";

const index = await buildIndex(simulatorIndexSource(defaultFacility()), await loadSynonyms());
const queries = await loadQueries();

Deno.test("the labelled set holds at least 80 operator queries in every class, some held back", () => {
  assert.ok(queries.length >= 80, `${queries.length} queries`);
  const classes = new Set(queries.map((q) => q.class));
  for (const c of ["family", "plane", "place", "signal", "synonym", "typo", "sentence", "intent"]) {
    assert.ok(classes.has(c), `no ${c} query`);
  }
  assert.ok(queries.filter((q) => q.held_out).length >= 20);
});

Deno.test("informal search finds what operators mean: mean precision@k at least 0.90 on both sets", () => {
  const scores = queries.map((q) => scoreQuery(index, q));
  const report = qualityReport(scores).join("\n");
  assert.ok(mean(scores.filter((s) => !s.query.held_out)) >= 0.9, report);
  assert.ok(mean(scores.filter((s) => s.query.held_out)) >= 0.9, report);
  for (const c of ["sentence", "intent"]) {
    assert.ok(mean(scores.filter((s) => s.query.class === c)) >= 0.85, report);
  }
});

Deno.test("every question that should find nothing is answered empty", () => {
  const nothing = queries.filter((q) => q.expect.length === 0);
  assert.ok(nothing.length >= 10);
  for (const q of nothing) {
    const s = scoreQuery(index, q);
    assert.equal(s.precision, 1, `"${q.text}" found ${s.wrong.join(", ")}`);
  }
});

Deno.test("a wrong expectation lowers the score: the measure can fail", () => {
  const s = scoreQuery(index, {
    text: "klystron forward power",
    class: "signal",
    expect: ["RF:STN:*:FWD:PWR"],
    held_out: false,
  });
  assert.equal(s.precision, 0);
});
