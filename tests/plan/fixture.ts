/**
 * A plan path over a spied simulator, with fixed test limits, a temporary
 * audit directory and an approver that approves whatever it is shown — the
 * worst case, so the other layers are what must stop a bad plan.
 *
 * @module
 */
import { ManualClock } from "../../src/adapters/clock.ts";
import { createSimulator, type Simulator } from "../../src/adapters/simulator/mod.ts";
import type { Plan } from "../../src/plan_model/plan.ts";
import type { PreflightedPlan, SafetyPolicy } from "../../src/plan_model/preflighted.ts";
import assert from "node:assert/strict";
import type { ExecutionResult } from "../../src/plan/executor.ts";
import { PlanService, type PlanServiceDeps, type ProposeOutcome } from "../../src/plan/service.ts";
import type { ApprovalContext, Approver, Decision } from "../../src/safety/approval.ts";
import { AuditLog, type SafetyState } from "../../src/safety/audit.ts";
import { RunJournal } from "../../src/plan/run_journal.ts";
import { type LimitsTable, loadLimits } from "../../src/safety/limits.ts";
import { SpyControlSystem, type SpyFaults } from "../support/spy_cs.ts";
import { tempDir } from "../support/temp.ts";
import { ClockTimers } from "../support/clock_timers.ts";

export const LIMITS_FILE = new URL("../../configs/safety_limits.toml", import.meta.url).pathname;
/** The limits the plan-path tests run under (fixed numbers; the shipped file follows the optics). */
export const EXECUTOR_LIMITS_FILE = new URL("./executor_limits.toml", import.meta.url).pathname;
export const T0 = Date.parse("2026-11-20T12:00:00Z");

/** Approves exactly what it is shown, and remembers it. */
export class ApproveAll implements Approver {
  shown: PreflightedPlan[] = [];
  decide(p: PreflightedPlan): Promise<Decision> {
    this.shown.push(p);
    return Promise.resolve({
      decision: "approved",
      plan: p.plan,
      planHash: p.hash,
      decidedBy: "test",
    });
  }
}

/** Approves, then hands the executor a different plan under the approved hash. */
export class SwapAfterApproval implements Approver {
  constructor(readonly swap: (p: Plan) => Plan) {}
  decide(p: PreflightedPlan, _ctx: ApprovalContext): Promise<Decision> {
    return Promise.resolve({
      decision: "approved",
      plan: this.swap(p.plan),
      planHash: p.hash,
      decidedBy: "test",
    });
  }
}

export async function fixture(
  opts: {
    faults?: SpyFaults;
    policy?: Partial<SafetyPolicy>;
    autoApproveReadOnly?: boolean;
    rollbackTimeoutMs?: number;
    /** Limits in place of the shipped ones. */
    limits?: LimitsTable;
    /** The kill switches, asked before each proposal and each write (none: always on). */
    safety?: () => Promise<SafetyState>;
    restoreTimeoutMs?: number;
    /** Keep a run journal under the temporary directory (`running/`). */
    journal?: boolean;
    /** Told of every plan that reached the machine (the logbook draft's source). */
    onFinished?: PlanServiceDeps["onFinished"];
    /** Preflight's response model and policy, of the simulator (none: no prediction is made). */
    prediction?: (sim: Simulator) => NonNullable<PlanServiceDeps["prediction"]>;
  } = {},
) {
  const clock = new ManualClock(T0);
  const timers = new ClockTimers(clock);
  const sim = createSimulator({ seed: 1, clock });
  const cs = new SpyControlSystem(sim, opts.faults);
  const limits = opts.limits ?? await loadLimits(EXECUTOR_LIMITS_FILE);
  const tmp = await tempDir("accel-plan-");
  const dir = tmp.path;
  const audit = new AuditLog(`${dir}/audit`, () => clock.now());
  const service = new PlanService({
    cs,
    limits,
    policy: {
      writesEnabled: true,
      maxScanPoints: 100,
      maxPlanSeconds: 600,
      limitsSource: "safety_limits.toml",
      ...opts.policy,
    },
    audit,
    identity: { operator: "tester", host: "testhost", configHash: "c".repeat(64) },
    now: () => clock.now(),
    plansDir: `${dir}/plans`,
    workDir: `${dir}/work`,
    autoApproveReadOnly: opts.autoApproveReadOnly ?? true,
    // Simulated time: readbacks settle, waits and dwells pass on the manual clock.
    readbackTimeoutMs: 10_000,
    timers,
    rollbackTimeoutMs: opts.rollbackTimeoutMs,
    restoreTimeoutMs: opts.restoreTimeoutMs,
    ...(opts.safety ? { safety: opts.safety } : {}),
    ...(opts.journal ? { journal: new RunJournal(`${dir}/running`) } : {}),
    onFinished: opts.onFinished,
    ...(opts.prediction ? { prediction: opts.prediction(sim) } : {}),
  });
  return {
    clock,
    /** The plan's timers: they move `clock`. */
    timers,
    sim,
    cs,
    dir,
    audit,
    service,
    /** Removes the temporary directory (audit, plans, work): `await using f = await fixture()`. */
    [Symbol.asyncDispose]: () => tmp[Symbol.asyncDispose](),
  };
}

/** Kill switches as a test sets them: `on()` reads the flag each time it is asked. */
export function switches(on: () => boolean, file = "site.toml"): () => Promise<SafetyState> {
  return () => {
    const w = on();
    return Promise.resolve({
      limitsFile: "limits.toml",
      limitsHash: "",
      writesEnabled: w,
      configWritesEnabled: true,
      site: [{
        file,
        writesEnabled: w,
        ...(w ? {} : { error: "writes_enabled = false: beam study" }),
      }],
    });
  };
}

/** Reads one device's current value. */
export async function valueOf(
  cs: { read(n: string[]): Promise<{ value: unknown }[]> },
  device: string,
) {
  const [r] = await cs.read([device]);
  return r?.value;
}

/** Asserts the plan reached the executor with this status, narrowing `outcome` to carry its execution. */
export function assertExecuted(
  outcome: ProposeOutcome,
  status: ExecutionResult["status"],
): asserts outcome is Extract<ProposeOutcome, { execution: ExecutionResult }> {
  assert.equal(outcome.status, status, JSON.stringify(outcome));
  assert.ok("execution" in outcome);
}
