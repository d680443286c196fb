/**
 * The response model preflight's `predicted_effect` uses, from the
 * configuration: on the simulator, the plan run on a noise-free copy of the
 * live facility on a clock of its own; elsewhere, none yet unless response
 * files are configured (said in every prediction, never silently).
 *
 * @module
 */
import type { ControlSystem } from "../adapters/adapter.ts";
import type { LazyControlSystem } from "../adapters/mod.ts";
import type { PredictionConfig } from "../config/prediction_schema.ts";
import type { PredictionPolicy } from "../plan_model/prediction.ts";
import type { PredictionDeps } from "../plan/preflight_checks/predicted.ts";
import { SimulatedResponse, type SimulatorCopy } from "../plan/predict/simulated.ts";
import type { Clock } from "../adapters/clock.ts";
import type { Simulator } from "../adapters/simulator/mod.ts";
import type { ResponseModel } from "../plan/predict/types.ts";
import { LinearResponse } from "../plan/predict/linear.ts";

/** The `[prediction]` table as the policy preflight holds plans to. */
export function predictionPolicy(c: PredictionConfig): PredictionPolicy {
  return {
    enabled: c.enabled,
    refuseAt: c.refuse_at,
    required: c.required,
    observe: c.observe,
    deviationRelative: c.deviation_relative,
    deviationSigmas: c.deviation_sigmas,
    maxMs: c.max_seconds * 1000,
  };
}

/**
 * The prediction of `cs`'s facility under `config`: the simulator's copy,
 * else the linear model of the response files in `responseDir` (resolved
 * `[prediction] response_dir`), else none, said why.
 */
export function predictionFor(
  cs: ControlSystem,
  config: PredictionConfig,
  responseDir = "",
): PredictionDeps {
  const policy = predictionPolicy(config);
  if (cs.kind === "simulator") {
    return { policy, model: simulatorModel(cs, config.wait_horizon_s) };
  }
  if (responseDir) {
    return {
      policy,
      model: new LinearResponse({
        dir: responseDir,
        cs,
        watch: config.watch,
        maxAgeDays: config.max_age_days,
        now: () => Date.now(),
      }),
    };
  }
  return {
    policy,
    unavailable: `no response model for ${cs.kind}: set [prediction] response_dir to the ` +
      "facility's response files (docs/prediction.md)",
  };
}

/** What a prediction needs of the simulator: its time and a copy of it. */
interface Cloneable {
  now(): number;
  clone(options: { clock: Clock; latencyMs: number; noiseless: boolean }): Simulator;
}

/**
 * A noise-free copy of `sim` on `clock`, as the prediction drives it. The
 * copy is a separate simulator (its own setpoints): setting a device of it
 * never reaches the live facility.
 */
function copyOf(sim: Cloneable, clock: Clock): SimulatorCopy {
  const copy = sim.clone({ clock, latencyMs: 0, noiseless: true });
  return {
    read: (names, signal) => copy.read(names, signal),
    set: (name, value, signal) => copy.write(name, value, signal),
    describe: (names, signal) => copy.describe(names, signal),
    watchedBy: (written) => copy.watchedBy(written),
    ownOf: (written) => copy.ownOf(written),
    noiseOf: (name) => copy.noiseOf(name),
    lossReason: () => copy.lossReason(),
  };
}

/** The simulator's model: each prediction runs on a fresh copy of the facility as it is then. */
export function simulatorModel(cs: ControlSystem, horizonS: number): ResponseModel {
  return {
    async predict(input) {
      const sim = await simulatorOf(cs);
      const model = new SimulatedResponse(
        (clock) => copyOf(sim, clock),
        () => sim.now(),
        horizonS,
      );
      return await model.predict(input);
    },
  };
}

async function simulatorOf(cs: ControlSystem): Promise<Cloneable> {
  const lazy = cs as Partial<LazyControlSystem>;
  const inner: unknown = typeof lazy.opened === "function" ? await lazy.opened() : cs;
  const c = inner as Partial<Cloneable>;
  if (typeof c.clone !== "function" || typeof c.now !== "function") {
    throw new Error("this simulator cannot be copied for a prediction");
  }
  return c as Cloneable;
}
