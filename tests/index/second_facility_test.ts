/**
 * The index on a facility named in another facility's conventions, read
 * through ChannelFinder: what its own texts teach, and how well operators'
 * questions there are answered.
 */
import assert from "node:assert/strict";
import { rankedSearch } from "../../src/index/mod.ts";
import { secondFacilityIndex } from "./second_facility_index.ts";
import { loadQueries, mean, qualityReport, scoreQuery, SECOND_QUERIES_URL } from "./quality.ts";

const index = await secondFacilityIndex();
const queries = await loadQueries(SECOND_QUERIES_URL);

Deno.test("the second facility's questions are answered: precision@k at least 0.90 on both sets", () => {
  const scores = queries.map((q) => scoreQuery(index, q));
  const report = qualityReport(scores).join("\n");
  assert.ok(mean(scores.filter((s) => !s.query.held_out)) >= 0.9, report);
  assert.ok(mean(scores.filter((s) => s.query.held_out)) >= 0.9, report);
  for (const c of ["sentence", "intent"]) {
    assert.ok(mean(scores.filter((s) => s.query.class === c)) >= 0.85, report);
  }
  for (const s of scores.filter((x) => x.query.class === "nothing")) {
    assert.equal(s.precision, 1, `"${s.query.text}" found ${s.wrong.join(", ")}`);
  }
});

Deno.test("a facility's own texts teach what the words of its names mean", () => {
  // "Pwr:Ref-I" is always described as reflected power; "Phs" as a phase.
  assert.ok(index.learned.ref?.includes("refl"), JSON.stringify(index.learned));
  assert.ok(index.learned.phs?.includes("phase"), JSON.stringify(index.learned));
  // The C of C03 is the cell the `cell` property names.
  assert.equal(index.data.learnedPlaces?.c, "cell");
  const refl = rankedSearch(index, "linac klystron refl", { limit: 10 });
  assert.deepEqual(refl.devices.map((d) => d.name), [
    "LN-RF{Kly:1}Pwr:Ref-I",
    "LN-RF{Kly:2}Pwr:Ref-I",
    "LN-RF{Kly:3}Pwr:Ref-I",
  ]);
});

Deno.test("a name's letters and number typed together name one thing", () => {
  assert.deepEqual(
    rankedSearch(index, "QH1 setpoint C03").devices.map((d) => d.name),
    ["SR:C03-MG{PS:QH1}I:Sp1-SP"],
  );
  // QH9 does not exist: nothing, not QH1 in cell 9.
  assert.equal(rankedSearch(index, "QH9 setpoint").total, 0);
});
