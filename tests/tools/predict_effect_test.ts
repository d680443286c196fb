/**
 * The model is told the prediction: `predict_effect` answers "what would
 * this plan do?" without proposing, saving, asking or writing anything, and
 * `propose_plan`'s result carries the prediction whatever the outcome, so
 * the model can shrink or split a plan before the operator sees it.
 */
import assert from "node:assert/strict";
import { loadLimits } from "../../src/safety/limits.ts";
import { simulatorModel } from "../../src/app/prediction_wiring.ts";
import { DEFAULT_PREDICTION_POLICY } from "../../src/plan_model/prediction.ts";
import type { Simulator } from "../../src/adapters/simulator/mod.ts";
import { ToolRegistry } from "../../src/tools/mod.ts";
import { predictEffect, type PredictEffectResult } from "../../src/tools/predict_effect.ts";
import { forModel } from "../../src/tools/propose_plan.ts";
import { ApproveAll, fixture, LIMITS_FILE } from "../plan/fixture.ts";

const COR = (n: number) => `RING:COR:H0${n}:SETPT`;

async function predicting() {
  return await fixture({
    limits: await loadLimits(LIMITS_FILE),
    prediction: (sim: Simulator) => ({
      policy: DEFAULT_PREDICTION_POLICY,
      model: simulatorModel(sim, 60),
    }),
  });
}

async function correctorPlan(sim: Simulator, step: number) {
  const live = await sim.read([COR(1), COR(2), COR(3)]);
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

Deno.test("predict_effect gives the refusal and the predicted values without proposing, asking or writing", async () => {
  await using f = await predicting();
  const approver = new ApproveAll();
  const registry = new ToolRegistry([predictEffect], {
    cs: f.sim,
    now: () => f.clock.now(),
    plans: { service: f.service, approver },
  }, { maxOutputChars: 100_000, timeoutMs: 600_000 });
  const plan = await correctorPlan(f.sim, 0.035);
  const out = await registry.execute(
    "predict_effect",
    JSON.stringify(plan),
    new AbortController().signal,
  );
  assert.equal(out.ok, true, JSON.stringify(out));
  const r = out.result as PredictEffectResult;
  assert.equal(r.ok, false);
  assert.ok(r.violations.some((v) => v.endsWith("[predicted_effect]")), r.violations.join("\n"));
  assert.equal(r.prediction?.status, "predicted");
  assert.ok(r.prediction?.status === "predicted");
  assert.equal(r.prediction.worst, "MAJOR");
  assert.match(r.prediction.moved[0] ?? "", /^[A-Z0-9:]+ -?[\d.e-]+ → -?[\d.e-]+ \S+, MAJOR/);
  assert.equal(approver.shown.length, 0);
  assert.equal(f.cs.writes.length, 0);
  assert.deepEqual(
    await Array.fromAsync(Deno.readDir(f.dir)).then((e) =>
      e.map((x) => x.name).filter((n) => n === "plans")
    ),
    [],
  );
  assert.equal(predictEffect.readOnly, true);
});

Deno.test("propose_plan's result carries the prediction: of a refused plan, and of a plan that ran", async () => {
  await using f = await predicting();
  const signal = new AbortController().signal;
  const refused = forModel(
    await f.service.propose(await correctorPlan(f.sim, 0.035), new ApproveAll(), signal),
  );
  assert.equal(refused.status, "preflight_failed");
  assert.ok(refused.status === "preflight_failed");
  assert.equal(refused.prediction?.status, "predicted");
  assert.ok(refused.prediction?.status === "predicted");
  assert.ok(refused.prediction.moved.some((m) => m.includes("MAJOR")));

  const ran = forModel(
    await f.service.propose(await correctorPlan(f.sim, 0.001), new ApproveAll(), signal),
  );
  assert.equal(ran.status, "completed", JSON.stringify(ran));
  assert.ok("prediction" in ran && ran.prediction?.status === "predicted", JSON.stringify(ran));
  assert.equal(ran.prediction.worst, "NONE");
  assert.match(ran.prediction.note, /A prediction, not a measurement/);
});
