/**
 * Runs an approved plan. THE ONLY MODULE IN THE PROGRAM THAT CALLS
 * `ControlSystem.write` (a test enforces this).
 *
 * Before running, it checks that the plan is exactly the one approved (its
 * hash) and preflights it again against live values. Every write is checked
 * against the value read just before it (max_step, from the machine as it
 * is, not as it was at preflight), then its readback device (see
 * `readback.ts`) is read until it comes within tolerance or the settle time
 * runs out, on the injected timers. A device with no readback device has
 * only its setpoint read back: "setpoint accepted, no readback device",
 * never "confirmed". The first read of a device is its original.
 *
 * When the plan completes, its rollback runs. When it fails or is aborted,
 * the rollback runs only if it still fits the limits from where the machine
 * now is (it was checked from where the plan would have ended); then every
 * written device the rollback did not put back is restored to its original,
 * newest first, in steps no larger than its max_step, each confirmed. A
 * rollback that fails makes the plan failed, and the originals are restored.
 *
 * @module
 */
import type { ControlSystem, Reading, Severity, Value } from "../adapters/adapter.ts";
import { severityAtLeast } from "../adapters/adapter.ts";
import type { LimitsTable } from "../safety/limits.ts";
import { round6, sleep, timeoutSignal, type Timers } from "../util/misc.ts";
import { type Action, type Plan, planHash, scanPoints } from "../plan_model/plan.ts";
import { checkValue, DEFAULT_SETTLE_MS, preflight } from "./preflight.ts";
import type {
  PreflightedPlan,
  ReadbackPartner,
  SafetyPolicy,
  Violation,
} from "../plan_model/preflighted.ts";
import { writeScanCsv } from "./scan_csv.ts";
import { partnerText } from "./readback.ts";

export interface ExecuteDeps {
  cs: ControlSystem;
  limits: LimitsTable;
  policy: SafetyPolicy;
  /** Aborts the plan (Ctrl-C); the rollback and restores run on deadlines of their own. */
  signal: AbortSignal;
  now(): number;
  /** Directory for scan CSV files; none are written without it. */
  workDir?: string;
  onProgress?(p: { step: number; total: number; detail: string }): void;
  /**
   * Called once, after the last preflight and before the first write, with
   * the live value of every device the plan may write. When it throws,
   * nothing is written: a plan whose originals cannot be recorded does not
   * run (the write-ahead record of the audit and the run journal).
   */
  beforeFirstWrite?(originals: Record<string, Value | null>): Promise<void>;
  /** Time a readback may take to come within tolerance, unless its limits entry gives `settle_s`. */
  readbackTimeoutMs?: number;
  /** Time allowed for the rollback, on top of its own waits and dwells. */
  rollbackTimeoutMs?: number;
  /** Time allowed to restore each device. */
  restoreTimeoutMs?: number;
  /** The clock and timers of WAITs and dwells; tests pass fake ones. */
  timers?: Timers;
}

/**
 * How a write was checked: "confirmed" when its readback device came within
 * tolerance; "accepted" when the device has no readback device and only its
 * setpoint read back the value ("setpoint accepted, no readback device").
 */
export interface Confirmation {
  status: "confirmed" | "accepted";
  /** The device read to confirm the write; null for "accepted". */
  readbackDevice: string | null;
  /** True when `readbackDevice` is the written device's own read value (TANGO). */
  readValue?: boolean;
  /** The last value read: the readback device's, or the setpoint's. */
  readback: Value | null;
}

export interface ActionResult {
  where: string;
  type: Action["type"];
  ok: boolean;
  detail: string;
  readings?: { device: string; value: Value | null; severity: Severity }[];
  /** Writes and scans: how the (last) write was checked. */
  confirmation?: Confirmation;
}

export interface Restore {
  device: string;
  to: Value;
  readback: Value | null;
  /** The device that confirmed the restore; null when it has none (setpoint accepted). */
  readbackDevice?: string | null;
  ok: boolean;
  error?: string;
}

export interface ExecutionResult {
  planHash: string;
  status: "completed" | "failed" | "aborted" | "refused";
  /** Why an aborted plan stopped: the operator (Ctrl-C) or an alarm (`abortOnSeverity`). */
  abortedBy?: "operator" | "alarm";
  results: ActionResult[];
  rollback: ActionResult[];
  restores: Restore[];
  errors: string[];
  violations: Violation[];
  csvFiles: string[];
  startedAt: string;
  finishedAt: string;
}

/** An abort the plan asked for (a read device reached `abortOnSeverity`). */
class AlarmAbort extends Error {}

/** A write that would step further than max_step from the live value. */
class StepRefused extends Error {}

/**
 * Executes `plan` if its hash is `approvedHash`. Never throws for a machine
 * failure: the result says what happened, what was restored, and why.
 */
export async function executePlan(
  plan: Plan,
  approvedHash: string,
  deps: ExecuteDeps,
): Promise<ExecutionResult> {
  const startedAt = new Date(deps.now()).toISOString();
  const hash = await planHash(plan);
  const refused = (errors: string[], violations: Violation[] = []) => ({
    ...refusal(hash, errors, startedAt, deps.now),
    violations,
  });
  if (hash !== approvedHash) {
    return refused([
      `the plan's hash ${hash.slice(0, 12)}… is not the approved ${
        approvedHash.slice(0, 12)
      }…; nothing was written`,
    ]);
  }
  let checked: PreflightedPlan;
  try {
    checked = await preflight(plan, deps);
  } catch (e) {
    return refused([
      `preflight could not complete (${errorText(e, deps.signal)}); nothing was written`,
    ]);
  }
  if (!checked.ok) {
    return refused(
      ["preflight against live values failed; nothing was written"],
      checked.violations,
    );
  }
  if (deps.beforeFirstWrite && !checked.readOnly) {
    try {
      await deps.beforeFirstWrite(checked.live);
    } catch (e) {
      return refused([
        `the original values could not be recorded before writing anything (${
          errorText(e, deps.signal)
        }); nothing was written`,
      ]);
    }
  }
  const outcome = await new Run(checked, deps).go();
  return { planHash: hash, ...outcome, startedAt, finishedAt: new Date(deps.now()).toISOString() };
}

/** The result of a plan that was not run at all. */
export function refusal(
  planHash: string,
  errors: string[],
  startedAt: string,
  now: () => number,
): ExecutionResult {
  return {
    planHash,
    status: "refused",
    results: [],
    rollback: [],
    restores: [],
    csvFiles: [],
    violations: [],
    errors,
    startedAt,
    finishedAt: new Date(now()).toISOString(),
  };
}

interface RunOptions {
  signal: AbortSignal;
  /** Count toward the progress bar. */
  progress: boolean;
  /** Apply `abortOnSeverity` (not during the rollback: the alarm may be why it runs). */
  severity: boolean;
}

class Run {
  readonly results: ActionResult[] = [];
  readonly rollbackResults: ActionResult[] = [];
  readonly restores: Restore[] = [];
  readonly errors: string[] = [];
  readonly csvFiles: string[] = [];
  /** Original value of every device written, in order of first write. */
  readonly originals = new Map<string, Value>();
  #step = 0;
  readonly #total: number;

  constructor(readonly checked: PreflightedPlan, readonly deps: ExecuteDeps) {
    const units = (a: Action) => (a.type === "scan" ? a.steps : 1);
    this.#total = checked.plan.actions.reduce((n, a) => n + units(a), 0);
  }

  async go(): Promise<Omit<ExecutionResult, "planHash" | "startedAt" | "finishedAt">> {
    const { plan } = this.checked;
    let status: ExecutionResult["status"] = "completed";
    let abortedBy: ExecutionResult["abortedBy"];
    const opts = { signal: this.deps.signal, progress: true, severity: true };
    try {
      for (let i = 0; i < plan.actions.length; i++) {
        if (this.deps.signal.aborted) throw this.deps.signal.reason;
        this.results.push(await this.#run(`actions[${i}]`, plan.actions[i] as Action, opts));
      }
    } catch (e) {
      if (e instanceof AlarmAbort) [status, abortedBy] = ["aborted", "alarm"];
      else if (this.deps.signal.aborted) [status, abortedBy] = ["aborted", "operator"];
      else status = "failed";
      this.errors.push(errorText(e, this.deps.signal));
    }
    const rolledBack = await this.#rollback(status !== "completed");
    if (rolledBack === undefined && status === "completed") status = "failed";
    if (status !== "completed") await this.#restoreOriginals(rolledBack ?? new Set());
    return {
      status,
      ...(abortedBy ? { abortedBy } : {}),
      results: this.results,
      rollback: this.rollbackResults,
      restores: this.restores,
      errors: this.errors,
      violations: [],
      csvFiles: this.csvFiles,
    };
  }

  /**
   * Runs the plan's rollback. Returns the devices it wrote, or undefined
   * when it was skipped or failed (the originals must then be restored).
   */
  async #rollback(afterFailure: boolean): Promise<Set<string> | undefined> {
    const rollback = this.checked.plan.rollback ?? [];
    if (rollback.length === 0) return new Set();
    if (afterFailure) {
      const problem = await this.#rollbackFitsNow(rollback);
      if (problem) {
        this.errors.push(`rollback not run: ${problem}; the originals are restored instead`);
        return undefined;
      }
    }
    const budget = (this.deps.rollbackTimeoutMs ?? 60_000) + 1000 * rollbackSeconds(rollback);
    const opts = { signal: timeoutSignal(budget), progress: false, severity: false };
    for (let i = 0; i < rollback.length; i++) {
      try {
        this.rollbackResults.push(await this.#run(`rollback[${i}]`, rollback[i] as Action, opts));
      } catch (e) {
        this.errors.push(`rollback[${i}]: ${errorText(e, opts.signal)}`);
        return undefined;
      }
    }
    return new Set(rollback.flatMap(writtenBy));
  }

  /** Checks the rollback from the machine's present values; a reason it does not fit, if any. */
  async #rollbackFitsNow(rollback: Action[]): Promise<string | undefined> {
    const devices = [...new Set(rollback.flatMap(writtenBy))];
    const signal = timeoutSignal(this.deps.restoreTimeoutMs ?? 30_000);
    try {
      const [infos, readings] = await Promise.all([
        this.deps.cs.describe(devices, signal),
        this.deps.cs.read(devices, signal),
      ]);
      const info = new Map(infos.map((d) => [d.device, d]));
      const at = new Map<string, Value | null>(
        readings.map((r) => [r.device, r.ok ? r.value : null]),
      );
      for (const [i, a] of rollback.entries()) {
        const targets = a.type === "write" ? [a.value] : a.type === "scan" ? scanPoints(a) : [];
        const device = a.type === "write" ? a.device : a.type === "scan" ? a.writeDevice : "";
        for (const value of targets) {
          const d = info.get(device);
          if (!d?.exists) return `rollback[${i}]: ${device} is unknown`;
          const from = at.get(device) ?? null;
          const problem = checkValue(
            d,
            value,
            from,
            this.deps.limits.lookup(device),
            this.deps.policy,
          );
          if (problem[0]) return `rollback[${i}]: ${problem[0].message}`;
          // Run from the middle of a plan, a rollback may only lead back toward the original.
          const original = this.originals.get(device);
          const tol = this.checked.tolerances[device] ?? 1e-6;
          if (
            typeof original === "number" && typeof from === "number" && typeof value === "number" &&
            Math.abs(value - original) > Math.abs(from - original) + tol
          ) {
            return `rollback[${i}] would move ${device} away from its original ${
              round6(original)
            } ` +
              `(to ${round6(value)}, from ${round6(from)})`;
          }
          at.set(device, value);
        }
      }
    } catch (e) {
      return `cannot check it against live values (${errorText(e, signal)})`;
    }
    return undefined;
  }

  /** Restores every written device but `except` to its original, newest first. */
  async #restoreOriginals(except: Set<string>): Promise<void> {
    for (const [device, original] of [...this.originals].reverse()) {
      if (except.has(device)) continue;
      const signal = timeoutSignal(this.deps.restoreTimeoutMs ?? 30_000);
      try {
        const c = await this.#rampTo(device, original, signal);
        this.restores.push({
          device,
          to: original,
          readback: c.readback,
          readbackDevice: c.readbackDevice,
          ok: true,
        });
      } catch (e) {
        this.restores.push({
          device,
          to: original,
          readback: null,
          ok: false,
          error: errorText(e, signal),
        });
      }
    }
  }

  /**
   * Brings a device to `target` in steps no larger than its max_step: a
   * restore must not jump where a plan could not.
   */
  async #rampTo(device: string, target: Value, signal: AbortSignal): Promise<Confirmation> {
    const maxStep = this.deps.limits.lookup(device)?.max_step;
    if (typeof target !== "number" || maxStep === undefined) {
      return await this.#writeConfirmed(device, target, signal);
    }
    const tol = this.checked.tolerances[device] ?? 1e-6;
    let now = await this.#readValue(device, signal);
    if (typeof now !== "number") throw new Error(`${device} reads ${show(now)}, not a number`);
    if (Math.abs(now - target) <= tol) {
      // Already there: say what confirms it, as a write would.
      return await this.#awaitReadback(device, target, signal);
    }
    for (let guard = 0; guard < 10_000; guard++) {
      const last = Math.abs(target - now) <= maxStep;
      const c = await this.#writeConfirmed(
        device,
        last ? target : now + Math.sign(target - now) * maxStep,
        signal,
      );
      if (last) return c;
      now = await this.#readValue(device, signal);
      if (typeof now !== "number") throw new Error(`${device} reads ${show(now)}, not a number`);
    }
    throw new Error(`${device} did not reach ${target}`);
  }

  async #run(where: string, action: Action, opts: RunOptions): Promise<ActionResult> {
    switch (action.type) {
      case "read": {
        const readings = await this.#read(action.devices, opts);
        const n = action.devices.length;
        this.#progress(opts, `read ${n} device${n > 1 ? "s" : ""}`);
        return { where, type: "read", ok: true, detail: action.label ?? "read", readings };
      }
      case "write": {
        const c = await this.#writeConfirmed(action.device, action.value, opts.signal);
        this.#progress(opts, `${action.device} = ${action.value}`);
        const detail = `${action.device} = ${action.value} (${confirmationText(c)})`;
        return { where, type: "write", ok: true, detail, confirmation: c };
      }
      case "wait":
        await sleep(action.seconds * 1000, opts.signal, this.deps.timers);
        this.#progress(opts, `waited ${action.seconds} s`);
        return { where, type: "wait", ok: true, detail: `waited ${action.seconds} s` };
      case "scan":
        return await this.#scan(where, action, opts);
    }
  }

  async #scan(where: string, scan: Extract<Action, { type: "scan" }>, opts: RunOptions) {
    const rows: {
      time: string;
      setpoint: number;
      readback: Value | null;
      values: (Value | null)[];
    }[] = [];
    const points = scanPoints(scan);
    let last: Confirmation | undefined;
    try {
      for (let i = 0; i < points.length; i++) {
        if (opts.signal.aborted) throw opts.signal.reason;
        const point = points[i] as number;
        last = await this.#writeConfirmed(scan.writeDevice, point, opts.signal);
        const readback = last.readback;
        await sleep(scan.dwellSeconds * 1000, opts.signal, this.deps.timers);
        const readings = await this.#read(scan.readDevices, opts);
        rows.push({
          time: new Date(this.deps.now()).toISOString(),
          setpoint: point,
          readback,
          values: readings.map((r) => r.value),
        });
        this.#progress(opts, `${scan.writeDevice} = ${round6(point)} (${i + 1}/${points.length})`);
      }
    } finally {
      if (this.deps.workDir && rows.length) {
        this.csvFiles.push(
          await writeScanCsv(this.deps.workDir, this.checked.hash, where, scan, rows),
        );
      }
    }
    const partner = this.checked.readbacks[scan.writeDevice];
    return {
      where,
      type: "scan" as const,
      ok: true,
      detail: `${points.length} points of ${scan.writeDevice}, ${
        partner?.device
          ? `each confirmed by ${partnerText(partner)}`
          : "each setpoint accepted, no readback device"
      }`,
      ...(last ? { confirmation: last } : {}),
    };
  }

  async #read(devices: string[], opts: RunOptions) {
    const readings = await this.deps.cs.read(devices, opts.signal);
    const failed = readings.filter((r) => !r.ok);
    if (failed.length) {
      throw new Error(`cannot read ${failed.map((r) => `${r.device} (${r.error})`).join(", ")}`);
    }
    if (opts.severity) this.#checkSeverity(readings);
    return readings.map((r) => ({ device: r.device, value: r.value, severity: r.severity }));
  }

  #checkSeverity(readings: Reading[]): void {
    const level = this.checked.plan.abortOnSeverity;
    if (!level) return;
    const bad = readings.find((r) => severityAtLeast(r.severity, level));
    if (bad) {
      throw new AlarmAbort(
        `${bad.device} went ${bad.severity} (${bad.status}); the plan aborts at ${level}`,
      );
    }
  }

  async #readValue(device: string, signal: AbortSignal): Promise<Value> {
    const [r] = await this.deps.cs.read([device], signal);
    if (!r?.ok || r.value === null) {
      throw new Error(`cannot read ${device} (${r?.error ?? "no value"})`);
    }
    return r.value;
  }

  /**
   * Reads the device (its first read is its original), refuses a step
   * beyond max_step from that live value, writes, and waits for the
   * readback to come within tolerance.
   */
  async #writeConfirmed(device: string, value: Value, signal: AbortSignal): Promise<Confirmation> {
    let before: Value;
    try {
      before = await this.#readValue(device, signal);
    } catch (e) {
      throw new Error(`${errorText(e, signal)} before writing it; nothing was written to it`);
    }
    if (!this.originals.has(device)) this.originals.set(device, before);
    const maxStep = this.deps.limits.lookup(device)?.max_step;
    if (
      maxStep !== undefined && typeof before === "number" && typeof value === "number" &&
      Math.abs(value - before) > maxStep + 1e-9
    ) {
      throw new StepRefused(
        `refused to write ${device} = ${
          typeof value === "number" ? round6(value) : value
        }: a step of ${round6(value - before)} from the live ${
          round6(before)
        } exceeds max_step ${maxStep}`,
      );
    }
    await this.deps.cs.write(device, value, signal);
    return await this.#awaitReadback(device, value, signal);
  }

  /**
   * Reads the device's readback partner (or, with none, the device itself)
   * until it is within tolerance of `value`, for at most its settle time on
   * the injected timers (a fake clock in tests, so the simulator's lag runs
   * on its own time).
   */
  async #awaitReadback(device: string, value: Value, signal: AbortSignal): Promise<Confirmation> {
    const tol = this.checked.tolerances[device] ?? 1e-6;
    const partner: ReadbackPartner = this.checked.readbacks[device] ??
      { device: null, readValue: false, source: "none", settleMs: this.#defaultSettleMs() };
    const read = partner.device ?? device;
    const timers = this.deps.timers;
    const clock = () => timers?.now() ?? performance.now();
    const deadline = clock() + partner.settleMs;
    for (;;) {
      const [after] = await this.deps.cs.read([read], signal);
      const got = after?.ok ? after.value : null;
      if (matches(got, value, tol)) {
        return partner.device
          ? {
            status: "confirmed",
            readbackDevice: partner.device,
            ...(partner.readValue ? { readValue: true } : {}),
            readback: got,
          }
          : { status: "accepted", readbackDevice: null, readback: got };
      }
      const now = clock();
      if (now >= deadline) {
        const waited = `${round6(partner.settleMs / 1000)} s`;
        const want = `${typeof value === "number" ? round6(value) : value} within ±${tol}`;
        throw new Error(
          partner.device
            ? `readback ${partnerText(partner)} of ${device} reads ${show(got)}, not ${want} ` +
              `after ${waited}: the write is not confirmed`
            : `${device} (no readback device) reads back ${
              show(got)
            }, not ${want} after ${waited}: ` +
              "the setpoint was not accepted",
        );
      }
      await sleep(Math.min(POLL_MS, Math.max(1, deadline - now)), signal, timers);
    }
  }

  #defaultSettleMs(): number {
    return this.deps.readbackTimeoutMs ?? DEFAULT_SETTLE_MS;
  }

  #progress(opts: RunOptions, detail: string): void {
    if (!opts.progress) return;
    this.#step++;
    this.deps.onProgress?.({ step: this.#step, total: this.#total, detail });
  }
}

function writtenBy(a: Action): string[] {
  return a.type === "write" ? [a.device] : a.type === "scan" ? [a.writeDevice] : [];
}

/** Seconds the rollback spends by design (waits and dwells), on top of its budget. */
function rollbackSeconds(rollback: Action[]): number {
  return rollback.reduce(
    (s, a) =>
      s + (a.type === "wait" ? a.seconds : a.type === "scan" ? a.steps * a.dwellSeconds : 0),
    0,
  );
}

/** How often a readback is read while it settles. */
const POLL_MS = 50;

/** The result's words for how a write was checked. */
export function confirmationText(c: Confirmation): string {
  if (c.status === "accepted") {
    return `setpoint accepted, no readback device; reads ${show(c.readback)}`;
  }
  const by = c.readValue ? `${c.readbackDevice}'s read value` : c.readbackDevice;
  return `confirmed by ${by} = ${show(c.readback)}`;
}

function matches(got: Value | null, want: Value, tol: number): boolean {
  if (typeof got === "number" && typeof want === "number") {
    return Math.abs(got - want) <= tol + 1e-12;
  }
  return got === want;
}

function errorText(e: unknown, signal: AbortSignal): string {
  if (signal.aborted && e === signal.reason) {
    const r = signal.reason;
    return r instanceof Error ? `aborted: ${r.message}` : "aborted";
  }
  return e instanceof Error ? e.message : String(e);
}

function show(v: Value | null): string {
  return v === null ? "nothing" : Array.isArray(v) ? `[${v.length} values]` : String(v);
}
