/**
 * Prediction against observation while a plan runs. Before its first
 * write the devices the prediction chose to compare (those it predicts to
 * move well beyond their noise) are read; after every WAIT and every scan
 * point's dwell of the plan's actions — where the machine has settled: right
 * after a write the beam is still following it, and a few milliseconds more
 * or less change what is read by a third — they are read again, and each observed change
 * from before the plan is compared with the predicted one. A change that
 * differs by more than the tolerance (the device's floor — its noise and
 * natural motion — plus `[prediction] deviation_relative` of the predicted
 * change) stops the plan like an unconfirmed write: what it wrote is
 * restored, and the result and the audit keep the prediction, every
 * comparison and the deviation with both values.
 *
 * @module
 */
import type { ControlReader } from "../../adapters/adapter.ts";
import type {
  Deviation,
  MadePrediction,
  ObservationPlan,
  ObservedRun,
} from "../../plan_model/prediction.ts";
import { deviationText } from "../../plan_model/prediction.ts";

/** The plan stopped: a watched device changed otherwise than predicted. */
export class DeviationStop extends Error {
  override name = "DeviationStop";
  constructor(readonly deviation: Deviation) {
    super(`deviation from the prediction: ${deviationText(deviation)}; the plan stops`);
  }
}

export class Observer {
  readonly run: ObservedRun;
  #before: (number | null)[] | undefined;

  constructor(
    private readonly plan: ObservationPlan,
    source: string,
    private readonly cs: Pick<ControlReader, "read">,
  ) {
    this.run = { source, devices: plan.devices, units: plan.units, steps: [] };
  }

  /** The observer of `prediction`, when it has something to compare and observing is on. */
  static of(
    prediction: MadePrediction | undefined,
    observe: boolean,
    cs: Pick<ControlReader, "read">,
  ): Observer | undefined {
    if (!observe || !prediction?.observe) return undefined;
    return new Observer(prediction.observe, prediction.source, cs);
  }

  /** Reads the compared devices before the plan's first write. */
  async start(signal: AbortSignal): Promise<void> {
    this.#before = await this.#values(signal);
  }

  /** Compares after the step `key` (`actions[3]`, `actions[5]#7`); throws {@link DeviationStop}. */
  async check(key: string, where: string, signal: AbortSignal): Promise<void> {
    const predicted = this.plan.steps[key];
    if (!predicted || !this.#before) return;
    const now = await this.#values(signal);
    const observed = now.map((v, i) => {
      const b = this.#before?.[i];
      return v === null || b === null || b === undefined ? null : v - b;
    });
    this.run.steps.push({ where, observed, predicted });
    for (let i = 0; i < predicted.length; i++) {
      const p = predicted[i], o = observed[i];
      if (p === null || p === undefined || o === null || o === undefined) continue;
      const tolerance = (this.plan.floors[i] ?? 0) + this.plan.relative * Math.abs(p);
      if (Math.abs(o - p) > tolerance) {
        const deviation: Deviation = {
          where,
          device: this.plan.devices[i] ?? "",
          units: this.plan.units[i] ?? "",
          predicted: p,
          observed: o,
          tolerance,
        };
        this.run.deviation = deviation;
        throw new DeviationStop(deviation);
      }
    }
  }

  async #values(signal: AbortSignal): Promise<(number | null)[]> {
    const readings = await this.cs.read(this.plan.devices, signal);
    return readings.map((r) => (r.ok && typeof r.value === "number" ? r.value : null));
  }
}
