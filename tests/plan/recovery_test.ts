/** The plan that puts back what an unfinished plan changed. */
import assert from "node:assert/strict";
import { buildRecoveryPlan, recoveredRun } from "../../src/plan/recovery.ts";
import type { RunMarker } from "../../src/plan/run_journal.ts";
import { parseLimits } from "../../src/safety/limits.ts";
import { parsePlan } from "../../src/plan_model/plan.ts";

const marker = (originals: RunMarker["originals"]): RunMarker => ({
  run: "0f0e0d0c-0b0a-4909-8807-060504030201",
  planHash: "ab".repeat(32),
  description: "trim",
  operator: "op",
  host: "h",
  pid: 1,
  startedAt: "2026-11-24T10:00:00.000Z",
  originals,
});
const limits = parseLimits(
  `[limits."A:SETPT"]\nmin = -5\nmax = 5\nmax_step = 0.5\n[limits."B:MODE"]\nvalues = ["On", "Off"]\n`,
  "limits.toml",
);

Deno.test("a recovery plan steps back no further than max_step, with a read between steps, newest device first", () => {
  const { plan, skipped } = buildRecoveryPlan(
    marker({ "B:MODE": "On", "A:SETPT": 0.2 }),
    new Map<string, number | string | null>([["A:SETPT", 1.4], ["B:MODE", "Off"]]),
    limits,
    () => 1e-6,
  );
  assert.deepEqual(skipped, []);
  assert.ok(plan);
  assert.ok(parsePlan(plan).ok, "a valid plan");
  const writes = plan.actions.flatMap((a) => a.type === "write" ? [[a.device, a.value]] : []);
  assert.deepEqual(writes, [["A:SETPT", 0.9], ["A:SETPT", 0.4], ["A:SETPT", 0.2], [
    "B:MODE",
    "On",
  ]]);
  assert.equal(plan.actions[1]?.type, "read", "a read between two steps of one device");
  assert.equal(recoveredRun(plan), marker({}).run);
});

Deno.test("a recovery plan skips devices it cannot restore and is empty when all read their originals", () => {
  const r = buildRecoveryPlan(
    marker({ "A:SETPT": 0.2, "C:WF": null }),
    new Map([["A:SETPT", 0.2]]),
    limits,
    () => 1e-6,
  );
  assert.equal(r.plan, undefined);
  assert.deepEqual(r.skipped.map((s) => s.device), ["C:WF"]);
  assert.equal(
    recoveredRun({ description: "Restore everything", actions: [] } as never),
    undefined,
  );
});
