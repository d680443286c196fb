import assert from "node:assert/strict";
import { failedAttempt } from "../../src/eval/attempt.ts";
import { buildReport, median, reportText, wilson } from "../../src/eval/report.ts";
import { parseTask } from "../../src/eval/task.ts";

Deno.test("the Wilson 95% interval matches published values and is exact at 0 and n", () => {
  const [lo, hi] = wilson(8, 10);
  assert.ok(Math.abs(lo - 0.4902) < 1e-3 && Math.abs(hi - 0.9433) < 1e-3, `${lo} ${hi}`);
  assert.equal(wilson(0, 5)[0], 0);
  assert.equal(wilson(5, 5)[1], 1);
  assert.ok(Math.abs(wilson(44, 44)[0] - 0.9197) < 1e-3);
  assert.deepEqual(wilson(0, 0), [0, 1]);
});

Deno.test("medians are of the middle values; the report groups by task and category", () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 2, 3]), 2.5);
  assert.equal(median([]), 0);
  const t = parseTask({
    id: "a",
    category: "c",
    title: "a",
    turns: ["q"],
    grade: [{ check: "no_plan" }],
  }, "a.json");
  const pass = { ...failedAttempt(t, 1), passed: true, tokens: 100, wallMs: 1000 };
  const fail = { ...failedAttempt(t, 2, "timed out after 1 s"), tokens: 300, wallMs: 3000 };
  const r = buildReport("m", "2026-11-24T00:00:00Z", 2, [pass, fail]);
  assert.equal(r.tasks[0]?.passes, 1);
  assert.equal(r.tasks[0]?.medianTokens, 200);
  assert.deepEqual(r.tasks[0]?.reasons, ["timed out after 1 s"]);
  assert.equal(r.categories[0]?.name, "c");
  const text = reportText(r);
  assert.match(text, /^a\s+1\/2\s+50%\s+9%–91%\s+200\s+0\s+0\s+2\.0 s\s+–$/m);
  assert.match(text, /a: timed out after 1 s/);
});
