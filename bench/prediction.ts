/**
 * Bench figures of a plan's predicted effect (preflight's `predicted_effect`
 * on the simulator), each beside a baseline from the same run:
 *
 * - cost: preflight of 40 ring-corrector writes, and of a 50-point scan,
 *   with the prediction against the same preflight without it, at the
 *   default facility and at 10^5 devices;
 * - accuracy: random legal plans in the linear regime (1–5 ring correctors,
 *   each a step of at most 0.002 mrad, then a 5 s WAIT) predicted, then run
 *   on the live simulator; for every device the run compared, the observed
 *   change against the predicted one: the share within 10 % of the
 *   prediction or the noise of a difference of two readings (√2·σ of the
 *   device), whichever is larger, and the median relative error.
 *
 * Run alone: `deno run -A bench/prediction.ts`.
 *
 * @module
 */
import { ManualClock } from "../src/adapters/clock.ts";
import { createSimulator, type Simulator } from "../src/adapters/simulator/mod.ts";
import { simulatorModel } from "../src/app/prediction_wiring.ts";
import { preflight } from "../src/plan/preflight.ts";
import type { Plan } from "../src/plan_model/plan.ts";
import { DEFAULT_PREDICTION_POLICY } from "../src/plan_model/prediction.ts";
import { loadLimits } from "../src/safety/limits.ts";
import { ApproveAll, fixture, LIMITS_FILE } from "../tests/plan/fixture.ts";
import { type Figure, median } from "./figure.ts";

const REPS = 3;
const T0 = Date.parse("2026-11-20T12:00:00Z");
const POLICY = {
  writesEnabled: true,
  maxScanPoints: 500,
  maxPlanSeconds: 100_000,
  limitsSource: "bench",
};

async function writes40(sim: Simulator): Promise<Plan> {
  const cors = sim.facility.devices.map((d) => d.name)
    .filter((n) => /^RING:COR:[HV]\d+:SETPT$/.test(n)).slice(0, 40);
  const live = await sim.read(cors);
  return {
    description: "40 corrector writes",
    actions: live.map((r) => ({
      type: "write" as const,
      device: r.device,
      value: (r.value as number) + 0.0002,
      reason: "bench",
    })),
  };
}

async function scan50(sim: Simulator): Promise<Plan> {
  const [r] = await sim.read(["RING:COR:H01:SETPT"]);
  const v = r?.value as number;
  return {
    description: "50-point scan",
    actions: [{
      type: "scan",
      writeDevice: "RING:COR:H01:SETPT",
      start: v,
      stop: v + 0.005,
      steps: 50,
      readDevices: ["RING:BPM:01:X"],
      dwellSeconds: 1,
    }],
  };
}

async function cost(devices: number | undefined): Promise<Figure[]> {
  const limits = await loadLimits(LIMITS_FILE);
  const sim = createSimulator({
    seed: 1,
    clock: new ManualClock(T0),
    ...(devices ? { devices } : {}),
  });
  const size = devices ? "10^5 devices" : "the default facility";
  const out: Figure[] = [];
  for (const [what, make] of [["40 writes", writes40], ["a 50-point scan", scan50]] as const) {
    const plan = await make(sim);
    const time = async (predict: boolean) => {
      const t = performance.now();
      const checked = await preflight(plan, {
        cs: sim,
        limits,
        policy: POLICY,
        now: () => T0,
        ...(predict
          ? {
            prediction: {
              policy: { ...DEFAULT_PREDICTION_POLICY, maxMs: 600_000 },
              model: simulatorModel(sim, 60),
            },
          }
          : {}),
      });
      if (predict && checked.prediction?.status !== "predicted") {
        throw new Error(`no prediction: ${JSON.stringify(checked.prediction)}`);
      }
      return performance.now() - t;
    };
    const base: number[] = [], pred: number[] = [];
    for (let i = 0; i < REPS; i++) {
      base.push(await time(false));
      pred.push(await time(true));
    }
    const value = median(pred), baseline = median(base);
    out.push({
      name: `preflight with the prediction, ${what}, ${size} (vs without)`,
      value,
      baseline,
      judged: `${value.toFixed(0)} ms (×${(value / baseline).toFixed(1)} of ${
        baseline.toFixed(0)
      } ms)`,
      goal: "≤ 20000 ms ([prediction] max_seconds)",
      ok: value <= 20_000,
    });
  }
  return out;
}

/** A small deterministic generator, so the plans are the same in every run. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

async function accuracy(plans = 12): Promise<Figure> {
  const random = rng(7);
  let within = 0, compared = 0, deviations = 0;
  const relative: number[] = [];
  for (let k = 0; k < plans; k++) {
    await using f = await fixture({
      limits: await loadLimits(LIMITS_FILE),
      policy: { maxPlanSeconds: 100_000 },
      prediction: (sim) => ({ policy: DEFAULT_PREDICTION_POLICY, model: simulatorModel(sim, 60) }),
    });
    const n = 1 + Math.floor(random() * 5);
    const cors = Array.from({ length: n }, () => {
      const plane = random() < 0.5 ? "H" : "V";
      return `RING:COR:${plane}${String(1 + Math.floor(random() * 24)).padStart(2, "0")}:SETPT`;
    }).filter((d, i, all) => all.indexOf(d) === i);
    const live = await f.sim.read(cors);
    const plan: Plan = {
      description: "random legal plan",
      actions: [
        ...live.map((r) => ({
          type: "write" as const,
          device: r.device,
          value: Math.round(((r.value as number) + (random() * 2 - 1) * 0.002) * 1e5) / 1e5,
          reason: "bench",
        })),
        { type: "wait" as const, seconds: 5 },
      ],
    };
    const outcome = await f.service.propose(plan, new ApproveAll(), new AbortController().signal);
    if (!("execution" in outcome)) continue;
    const observed = outcome.execution.observed;
    if (!observed) continue;
    if (observed.deviation) deviations++;
    for (const step of observed.steps) {
      step.predicted.forEach((p, i) => {
        const o = step.observed[i];
        if (p === null || o === null || o === undefined) return;
        const noise = Math.SQRT2 * f.sim.noiseOf(observed.devices[i] ?? "");
        compared++;
        if (Math.abs(o - p) <= Math.max(0.1 * Math.abs(p), noise)) within++;
        if (p !== 0) relative.push(Math.abs(o - p) / Math.abs(p));
      });
    }
  }
  const share = compared ? within / compared : NaN;
  return {
    name:
      `prediction accuracy: ${plans} random legal plans, predicted vs observed change per device`,
    value: share * 100,
    baseline: median(relative) * 100,
    unit: "%",
    judged: `${(share * 100).toFixed(0)} % of ${compared} within max(10 %, noise); median error ` +
      `${(median(relative) * 100).toFixed(1)} %; ${deviations} plans stopped by a deviation`,
    goal: "≥ 90 % within max(10 %, noise)",
    ok: share >= 0.9,
  };
}

export async function predictionBench(): Promise<Figure[]> {
  return [...await cost(undefined), ...await cost(100_000), await accuracy()];
}

if (import.meta.main) {
  for (const f of await predictionBench()) {
    console.log(`${f.ok ? "ok  " : "MISS"} ${f.name}: ${f.judged} (goal ${f.goal})`);
    console.log(JSON.stringify(f));
  }
}
