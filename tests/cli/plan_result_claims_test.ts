/**
 * The one-line summary of a plan's result in the REPL claims "restored"
 * only for restores that were confirmed: a restore that failed is counted
 * as not restored.
 */
import assert from "node:assert/strict";
import { summarizeResult } from "../../src/cli/term/render.ts";

Deno.test("a plan's summary line counts only confirmed restores as restored", () => {
  const result = {
    status: "failed",
    plan_hash: "a".repeat(64),
    restored: [
      { device: "SR:COR:H03:SETPT", to: 0, readback: 0, ok: true },
      { device: "SR:COR:H01:SETPT", to: 0.5, readback: null, ok: false, error: "refused" },
    ],
  };
  assert.equal(summarizeResult(result), "plan failed, 1 restored, 1 not restored");
  const none = { ...result, restored: [result.restored[1]] };
  assert.equal(summarizeResult(none), "plan failed, 1 not restored");
});
