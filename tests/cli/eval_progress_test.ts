import assert from "node:assert/strict";
import { progressLine } from "../../src/cli/term/eval_progress.ts";

Deno.test("the eval progress bar fills with finished attempts and fits the terminal", () => {
  const half = progressLine(22, 44, 20, "read-ring-current", 100);
  assert.match(half, /^\[#{10}·{10}\] 22\/44 {2}20 passed {2}last: read-ring-current\s*$/);
  assert.equal(half.length, 99);
  assert.equal(progressLine(44, 44, 44, "x", 30).length, 29);
  assert.match(progressLine(44, 44, 44, "x", 100), /^\[#{20}\]/);
});
