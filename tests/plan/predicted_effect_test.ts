/**
 * Preflight's `predicted_effect` on the simulator: a plan of ring-corrector
 * writes, each inside the shipped limits and max_step, that together drive
 * the orbit past MAJOR is refused before anyone is asked, with the devices
 * and their predicted values named, and nothing reaches the machine; a
 * plan that stays inside MINOR is shown with its prediction (the MINOR
 * crossing a warning) and runs unchanged. A model that cannot answer is
 * said so, and refuses only when prediction is required; hours of WAITs
 * are predicted in simulated time, the live facility's clock unmoved.
 */
import assert from "node:assert/strict";
import { loadLimits } from "../../src/safety/limits.ts";
import { simulatorModel } from "../../src/app/prediction_wiring.ts";
import {
  DEFAULT_PREDICTION_POLICY,
  type PredictionPolicy,
} from "../../src/plan_model/prediction.ts";
import type { Simulator } from "../../src/adapters/simulator/mod.ts";
import { renderPlan } from "../../src/cli/term/plan_table.ts";
import { style } from "../../src/cli/term/style.ts";
import { ApproveAll, assertExecuted, fixture, LIMITS_FILE } from "./fixture.ts";

const COR = (n: number) => `RING:COR:H0${n}:SETPT`;
const never = () => new AbortController().signal;

async function predicting(policy: Partial<PredictionPolicy> = {}) {
  return await fixture({
    limits: await loadLimits(LIMITS_FILE),
    policy: { maxPlanSeconds: 100_000 },
    prediction: (sim: Simulator) => ({
      policy: { ...DEFAULT_PREDICTION_POLICY, ...policy },
      model: simulatorModel(sim, 60),
    }),
  });
}

/** Each of `n` ring correctors moved by `step` from its live value: every write legal alone. */
async function correctorPlan(sim: Simulator, n: number, step: number) {
  const devices = Array.from({ length: n }, (_, i) => COR(i + 1));
  const live = await sim.read(devices);
  return {
    description: "steer the ring",
    actions: live.map((r) => ({
      type: "write" as const,
      device: r.device,
      value: (r.value as number) + step,
      reason: "trim",
    })),
  };
}

Deno.test("a plan of per-device-legal ring-corrector steps predicted to cross MAJOR is refused at preflight, naming devices and predicted values; nothing is written", async () => {
  await using f = await predicting();
  const plan = await correctorPlan(f.sim, 3, 0.035); // 0.035 is the shipped max_step
  const before = await f.sim.read(plan.actions.map((a) => a.device));
  const approver = new ApproveAll();
  const outcome = await f.service.propose(plan, approver, never());
  assert.equal(outcome.status, "preflight_failed", JSON.stringify(outcome));
  assert.ok(outcome.status === "preflight_failed");
  const predicted = outcome.violations.filter((v) => v.check === "predicted_effect");
  assert.equal(predicted.length, outcome.violations.length, "only the prediction refuses it");
  const [v] = predicted;
  assert.ok(v && v.device, JSON.stringify(outcome.violations));
  assert.match(v.message, /MAJOR/);
  assert.ok(v.message.includes(v.device), v.message);
  assert.match(v.message, / → -?\d/, "the predicted value is named");
  assert.equal(approver.shown.length, 0, "the operator is never asked");
  assert.equal(f.cs.writes.length, 0);
  const after = await f.sim.read(plan.actions.map((a) => a.device));
  assert.deepEqual(after.map((r) => r.value), before.map((r) => r.value));
});

Deno.test("a plan predicted to stay inside MINOR is shown with its prediction and a MINOR warning above the question, and runs unchanged", async () => {
  await using f = await predicting();
  const plan = await correctorPlan(f.sim, 3, 0.005);
  const approver = new ApproveAll();
  const outcome = await f.service.propose(plan, approver, never());
  assertExecuted(outcome, "completed");
  const [shown] = approver.shown;
  assert.ok(shown?.prediction?.status === "predicted", JSON.stringify(shown?.prediction));
  assert.ok(["NONE", "MINOR"].includes(shown.prediction.worst));
  assert.deepEqual(shown.plan, plan, "the plan shown is the plan proposed");
  assert.deepEqual(
    f.cs.writes,
    plan.actions.map((a) => ({ device: a.device, value: a.value })),
    "the plan ran as proposed, write for write",
  );
  const table = renderPlan(shown, style(false), 200).trimEnd().split("\n");
  const predictedAt = table.findIndex((l) =>
    l.startsWith("Predicted effect (a prediction: simulator")
  );
  assert.ok(predictedAt > 0, table.join("\n"));
  assert.ok(predictedAt < table.length - 1, "above the line that says what the plan writes");
  if (shown.prediction.worst === "MINOR") {
    assert.ok(table.some((l) => l.startsWith("Warning: predicted to reach MINOR: ")));
  }
});

Deno.test("a model that throws is a clear line, a warning by default and a refusal when prediction is required", async () => {
  for (const required of [false, true]) {
    await using f = await fixture({
      limits: await loadLimits(LIMITS_FILE),
      prediction: () => ({
        policy: { ...DEFAULT_PREDICTION_POLICY, required },
        model: { predict: () => Promise.reject(new Error("the copy broke\nbadly")) },
      }),
    });
    const checked = await f.service.check(await correctorPlan(f.sim, 1, 0.001));
    assert.deepEqual(checked.prediction, {
      status: "unavailable",
      reason: "the response model failed: the copy broke badly",
    });
    const refusals = checked.violations.filter((v) => v.check === "predicted_effect");
    assert.equal(refusals.length, required ? 1 : 0);
    assert.equal(checked.ok, !required);
    const table = renderPlan(checked, style(false), 200);
    assert.match(
      table,
      /No prediction of this plan's effect: the response model failed: the copy broke badly\./,
    );
  }
});

Deno.test("hours of WAITs are predicted in simulated time: the live facility's clock does not move and nothing reaches it", async () => {
  await using f = await predicting();
  const [cor] = await f.sim.read([COR(1)]);
  const plan = {
    description: "trim and watch for hours",
    actions: [
      {
        type: "write" as const,
        device: COR(1),
        value: (cor?.value as number) + 0.001,
        reason: "t",
      },
      ...Array.from({ length: 8 }, () => ({ type: "wait" as const, seconds: 3600 })),
    ],
  };
  const t0 = f.clock.now();
  const checked = await f.service.check(plan);
  assert.equal(checked.prediction?.status, "predicted", JSON.stringify(checked.prediction));
  assert.equal(checked.ok, true, JSON.stringify(checked.violations));
  assert.equal(f.clock.now(), t0);
  assert.equal(f.cs.writes.length, 0);
});

Deno.test("a prediction past [prediction] max_seconds is unavailable with its reason, never a silent pass", async () => {
  await using f = await predicting({ maxMs: 0 });
  const checked = await f.service.check(await correctorPlan(f.sim, 3, 0.035));
  assert.equal(checked.prediction?.status, "unavailable");
  assert.ok(checked.prediction?.status === "unavailable");
  assert.match(
    checked.prediction.reason,
    /took longer than its time \(\[prediction\] max_seconds\)/,
  );
  assert.equal(f.cs.writes.length, 0);
});
