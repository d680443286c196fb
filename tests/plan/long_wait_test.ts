/**
 * WAITs and dwells at their bounds, on a fake clock: they wait in full, in
 * timers no longer than a timer can hold, and a result never says "waited"
 * for a wait that was cut short.
 */
import assert from "node:assert/strict";
import { createSimulator } from "../../src/adapters/simulator/mod.ts";
import { executePlan } from "../../src/plan/executor.ts";
import {
  MAX_DWELL_SECONDS,
  MAX_WAIT_SECONDS,
  type Plan,
  planHash,
} from "../../src/plan_model/plan.ts";
import { loadLimits } from "../../src/safety/limits.ts";
import { MAX_TIMER_MS, type Timers } from "../../src/util/misc.ts";
import { EXECUTOR_LIMITS_FILE } from "./fixture.ts";

/** Each timer fires on the next turn of the event loop and moves the clock as a real one would. */
class FastClock implements Timers {
  t = 0;
  delays: number[] = [];
  onArm?: () => void;
  setTimeout = (fn: () => void, ms: number) => {
    this.delays.push(ms);
    this.onArm?.();
    return setTimeout(() => {
      // A real timer asked for more than it can hold fires after 1 ms.
      this.t += ms > MAX_TIMER_MS ? 1 : ms;
      fn();
    }, 0);
  };
  clearTimeout = (id: ReturnType<typeof setTimeout>) => clearTimeout(id);
  now = () => this.t;
}

async function run(plan: Plan, timers: FastClock, signal = new AbortController().signal) {
  // The facility's clock is the fake one: readbacks settle in simulated time.
  const start = Date.now();
  const cs = createSimulator({ seed: 1, clock: { now: () => start + timers.t } });
  try {
    return await executePlan(plan, await planHash(plan), {
      cs,
      limits: await loadLimits(EXECUTOR_LIMITS_FILE),
      policy: {
        writesEnabled: true,
        maxScanPoints: 100,
        maxPlanSeconds: MAX_WAIT_SECONDS * 2,
        limitsSource: "l",
      },
      signal,
      now: Date.now,
      timers,
    });
  } finally {
    await cs.close();
  }
}

Deno.test("a WAIT at its bound waits its full length before it says waited", async () => {
  const timers = new FastClock();
  const r = await run(
    { description: "w", actions: [{ type: "wait", seconds: MAX_WAIT_SECONDS }] },
    timers,
  );
  assert.equal(r.status, "completed", r.errors.join("; "));
  assert.equal(r.results[0]?.detail, `waited ${MAX_WAIT_SECONDS} s`);
  assert.ok(timers.t >= MAX_WAIT_SECONDS * 1000, `clock at ${timers.t}`);
  assert.ok(timers.delays.every((d) => d <= MAX_TIMER_MS), String(timers.delays));
});

Deno.test("scan dwells at their bound wait in full at every point", async () => {
  const timers = new FastClock();
  const device = "LINAC:COR:H01:SETPT";
  const r = await run({
    description: "s",
    actions: [{
      type: "scan",
      writeDevice: device,
      start: 0,
      stop: 0.1,
      steps: 2,
      readDevices: ["LINAC:BPM:01:X"],
      dwellSeconds: MAX_DWELL_SECONDS,
    }],
  }, timers);
  assert.equal(r.status, "completed", r.errors.join("; "));
  assert.ok(timers.t >= 2 * MAX_DWELL_SECONDS * 1000, `clock at ${timers.t}`);
});

Deno.test("a WAIT cut short by an abort is never reported as waited", async () => {
  const timers = new FastClock();
  const stop = new AbortController();
  timers.onArm = () => queueMicrotask(() => stop.abort(new Error("operator abort")));
  const r = await run(
    { description: "w", actions: [{ type: "wait", seconds: MAX_WAIT_SECONDS }] },
    timers,
    stop.signal,
  );
  assert.equal(r.status, "aborted");
  assert.equal(timers.t, 0);
  assert.doesNotMatch(JSON.stringify(r), /waited/);
});
