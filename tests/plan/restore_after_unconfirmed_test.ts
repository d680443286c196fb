/**
 * A plan stopped while a write settles: the gateway has the write, but what
 * the program reads of the device can still be the value before it (a
 * monitor's update for the write has not come yet) and a lagging readback
 * agrees with that old value. The restore must not take that read for "the
 * device is back at its original": it writes the original, so the last
 * write the device takes is the original, and only then says restored.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../src/adapters/clock.ts";
import type { Reading, Value } from "../../src/adapters/adapter.ts";
import { executePlan } from "../../src/plan/executor.ts";
import { type Plan, planHash } from "../../src/plan_model/plan.ts";
import { LimitsTable } from "../../src/safety/limits.ts";
import { ClockTimers } from "../support/clock_timers.ts";
import { LaggingControlSystem } from "../support/lagging_cs.ts";

const T0 = Date.parse("2026-11-20T12:00:00Z");
const POLICY = { writesEnabled: true, maxScanPoints: 100, maxPlanSeconds: 600, limitsSource: "l" };

/** Reads of a setpoint show the value before its last write until the next write arrives. */
class LateUpdates extends LaggingControlSystem {
  readonly #shown = new Map<string, Value>();
  onWrite?: () => void;

  override async read(names: string[]): Promise<Reading[]> {
    const readings = await super.read(names);
    return readings.map((r) =>
      this.#shown.has(r.device) ? { ...r, value: this.#shown.get(r.device) as Value } : r
    );
  }

  override async write(name: string, value: Value): Promise<void> {
    const [before] = await super.read([name]);
    await super.write(name, value);
    // The first write's update is late: reads keep showing the old value; a later write is seen.
    if (this.writes.length === 1) this.#shown.set(name, before?.value as Value);
    else this.#shown.delete(name);
    this.onWrite?.();
  }
}

Deno.test("a restore after a write that never confirmed writes the original, even when the device still reads it", async () => {
  const clock = new ManualClock(T0);
  const cs = new LateUpdates(clock, { "PS:01:SETPT": 0 }, {
    // A readback that has not moved yet: it agrees with the stale read.
    "PS:01:RDBK": { of: "PS:01:SETPT", frozen: true },
  });
  const limits = new LimitsTable({
    "PS:01:SETPT": { min: -10, max: 10, max_step: 1, tolerance: 0.001, readback: "PS:01:RDBK" },
  });
  const controller = new AbortController();
  cs.onWrite = () => {
    if (cs.writes.length === 1) controller.abort(new Error("stopped by the operator"));
  };
  const plan: Plan = {
    description: "one write",
    actions: [{ type: "write", device: "PS:01:SETPT", value: 0.5, reason: "test" }],
  };
  const r = await executePlan(plan, await planHash(plan), {
    cs,
    limits,
    policy: POLICY,
    now: () => clock.now(),
    timers: new ClockTimers(clock),
    signal: controller.signal,
  });
  assert.equal(r.status, "aborted", r.errors.join("; "));
  // The restore wrote the original after the plan's write: the device ends where it began.
  assert.deepEqual(cs.writes.map((w) => w.value), [0.5, 0]);
  assert.deepEqual(r.restores.map((x) => [x.device, x.to, x.ok]), [["PS:01:SETPT", 0, true]]);
});
