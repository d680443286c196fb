/**
 * Prediction against observation while a plan runs, on the simulator: a
 * plan whose watched devices move as predicted completes, and the audit
 * keeps the prediction and every comparison; a machine that moves
 * otherwise than predicted (here a facility whose BPMs answer 1 mm off once
 * the first write has gone out) stops the plan at that step, like an
 * unconfirmed write: what it wrote is restored, and the result and the
 * audit hold both the predicted and the observed change.
 */
import assert from "node:assert/strict";
import { loadLimits } from "../../src/safety/limits.ts";
import { simulatorModel } from "../../src/app/prediction_wiring.ts";
import { DEFAULT_PREDICTION_POLICY } from "../../src/plan_model/prediction.ts";
import type { Simulator } from "../../src/adapters/simulator/mod.ts";
import type { AuditLog } from "../../src/safety/audit.ts";
import { forModel } from "../../src/tools/propose_plan.ts";
import { ApproveAll, assertExecuted, fixture, LIMITS_FILE } from "./fixture.ts";

const COR = (n: number) => `RING:COR:H0${n}:SETPT`;
const never = () => new AbortController().signal;

async function predicting() {
  return await fixture({
    limits: await loadLimits(LIMITS_FILE),
    prediction: (sim: Simulator) => ({
      policy: DEFAULT_PREDICTION_POLICY,
      model: simulatorModel(sim, 60),
    }),
  });
}

async function plan(sim: Simulator, step: number) {
  const live = await sim.read([COR(1), COR(2), COR(3)]);
  return {
    description: "steer the ring",
    actions: live.flatMap((r) => [
      { type: "write" as const, device: r.device, value: (r.value as number) + step, reason: "t" },
      { type: "wait" as const, seconds: 2 },
    ]),
  };
}

async function outcomeEntry(audit: AuditLog) {
  const text = await Promise.all((await audit.files()).map((f) => Deno.readTextFile(f)));
  return text.join("").trim().split("\n").map((l) => JSON.parse(l)).at(-1);
}

Deno.test("a plan whose watched devices move as predicted completes; the audit keeps the prediction and every comparison", async () => {
  await using f = await predicting();
  const outcome = await f.service.propose(await plan(f.sim, 0.005), new ApproveAll(), never());
  assertExecuted(outcome, "completed");
  const observed = outcome.execution.observed;
  assert.ok(observed, "the run compared readings with the prediction");
  assert.equal(observed.deviation, undefined);
  assert.deepEqual(
    observed.steps.map((s) => s.where),
    ["actions[1]", "actions[3]", "actions[5]"],
  );
  assert.ok(observed.devices.length > 0);
  const entry = await outcomeEntry(f.audit);
  assert.equal(entry.status, "completed");
  assert.equal(entry.results.prediction.status, "predicted");
  assert.equal(entry.results.observed.steps.length, 3);
});

Deno.test("a machine that moves otherwise than predicted stops the plan and restores; both values are in the result and the audit", async () => {
  await using f = await predicting();
  const p = await plan(f.sim, 0.005);
  const originals = await f.sim.read(
    p.actions.flatMap((a) => (a.type === "write" ? [a.device] : [])),
  );
  // Once a write has gone out, every BPM reads 1 mm (1000 um) off: the orbit is not what was predicted.
  const read = f.cs.read.bind(f.cs);
  f.cs.read = async (names, signal) => {
    const readings = await read(names, signal);
    if (f.cs.writes.length === 0) return readings;
    return readings.map((r) =>
      /BPM/.test(r.device) && typeof r.value === "number"
        ? { ...r, value: r.value + (r.units === "um" ? 1000 : 1) }
        : r
    );
  };
  const outcome = await f.service.propose(p, new ApproveAll(), never());
  assertExecuted(outcome, "failed");
  const d = outcome.execution.observed?.deviation;
  assert.ok(d, JSON.stringify(outcome.execution.errors));
  assert.equal(d.where, "actions[1]");
  assert.ok(Math.abs(d.observed - d.predicted) > d.tolerance);
  assert.match(
    outcome.execution.errors.join("\n"),
    /deviation from the prediction: .* changed by .* at actions\[1\]; the prediction said /,
  );
  assert.equal(outcome.execution.results[0]?.ok, true, "the write itself was confirmed");
  assert.match(outcome.execution.results[1]?.detail ?? "", /^deviation from the prediction: /);
  assert.equal(
    f.cs.writes.filter((w) => w.device === COR(2)).length,
    0,
    "nothing after the deviation",
  );
  assert.deepEqual(outcome.execution.restores.map((r) => [r.device, r.ok]), [[COR(1), true]]);
  const after = await f.sim.read(originals.map((r) => r.device));
  assert.deepEqual(after.map((r) => r.value), originals.map((r) => r.value));
  const told = forModel(outcome);
  assert.ok("deviation" in told, "the model is told the deviation");
  assert.match(told.deviation ?? "", /changed by .* the prediction said /);
  const entry = await outcomeEntry(f.audit);
  assert.equal(entry.status, "failed");
  assert.deepEqual(entry.results.observed.deviation, JSON.parse(JSON.stringify(d)));
  assert.equal(typeof entry.results.observed.deviation.predicted, "number");
  assert.equal(typeof entry.results.observed.deviation.observed, "number");
});
