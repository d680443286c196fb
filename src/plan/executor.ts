/**
 * Runs an approved plan. THE ONLY MODULE IN THE PROGRAM THAT CALLS
 * `ControlSystem.write` (a test enforces this).
 *
 * Before running, it checks that the plan is exactly the one approved (its
 * hash) and preflights it again against live values. Before the first write
 * to a device it captures the original value; every write is confirmed by a
 * readback within tolerance. On completion the plan's rollback runs if it has
 * one; on failure or abort the rollback runs, and without one every written
 * device is restored to its original, newest first, each with a readback.
 *
 * @module
 */
import type { ControlSystem, Reading, Severity, Value } from "../adapters/adapter.ts";
import { severityAtLeast } from "../adapters/adapter.ts";
import type { LimitsTable } from "../safety/limits.ts";
import { type Action, planHash, scanPoints } from "./model.ts";
import type { Plan } from "./model.ts";
import { preflight, type PreflightedPlan, type SafetyPolicy, type Violation } from "./preflight.ts";
import { writeScanCsv } from "./scan_csv.ts";

export interface ExecuteDeps {
  cs: ControlSystem;
  limits: LimitsTable;
  policy: SafetyPolicy;
  /** Aborts the plan (Ctrl-C); restores still run on a signal of their own. */
  signal: AbortSignal;
  now(): number;
  /** Directory for scan CSV files; none are written without it. */
  workDir?: string;
  onProgress?(p: { step: number; total: number; detail: string }): void;
  /** Time a readback may take to come within tolerance. */
  readbackTimeoutMs?: number;
  /** Time allowed for all restores together after a failure or abort. */
  restoreTimeoutMs?: number;
}

export interface ActionResult {
  where: string;
  type: Action["type"];
  ok: boolean;
  detail: string;
  readings?: { device: string; value: Value | null; severity: Severity }[];
}

export interface Restore {
  device: string;
  to: Value;
  readback: Value | null;
  ok: boolean;
  error?: string;
}

export interface ExecutionResult {
  planHash: string;
  status: "completed" | "failed" | "aborted" | "refused";
  results: ActionResult[];
  rollback: ActionResult[];
  restores: Restore[];
  errors: string[];
  violations: Violation[];
  csvFiles: string[];
  startedAt: string;
  finishedAt: string;
}

class PlanAbort extends Error {}

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
  const base = { planHash: hash, results: [], rollback: [], restores: [], csvFiles: [], startedAt };
  const done = (
    r: Omit<ExecutionResult, keyof typeof base | "finishedAt"> & Partial<ExecutionResult>,
  ) => ({
    ...base,
    ...r,
    finishedAt: new Date(deps.now()).toISOString(),
  });
  if (hash !== approvedHash) {
    return done({
      status: "refused",
      errors: [
        `the plan's hash ${hash.slice(0, 12)}… is not the approved ${
          approvedHash.slice(0, 12)
        }…; nothing was written`,
      ],
      violations: [],
    });
  }
  const checked = await preflight(plan, { ...deps });
  if (!checked.ok) {
    return done({
      status: "refused",
      errors: ["preflight against live values failed; nothing was written"],
      violations: checked.violations,
    });
  }
  const run = new Run(checked, deps);
  return done(await run.go());
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
    try {
      for (let i = 0; i < plan.actions.length; i++) {
        this.#checkAbort();
        this.results.push(
          await this.#run(`actions[${i}]`, plan.actions[i] as Action, this.deps.signal, true),
        );
      }
    } catch (e) {
      status = e instanceof PlanAbort || this.deps.signal.aborted ? "aborted" : "failed";
      this.errors.push(errorText(e, this.deps.signal));
    }
    await this.#finish(status !== "completed");
    return {
      status,
      results: this.results,
      rollback: this.rollbackResults,
      restores: this.restores,
      errors: this.errors,
      violations: [],
      csvFiles: this.csvFiles,
    };
  }

  /** Rollback after any ending; restore of originals when a failure has no (working) rollback. */
  async #finish(failed: boolean): Promise<void> {
    const signal = AbortSignal.timeout(this.deps.restoreTimeoutMs ?? 60_000);
    const rollback = this.checked.plan.rollback ?? [];
    let rollbackOk = true;
    for (let i = 0; i < rollback.length; i++) {
      try {
        this.rollbackResults.push(
          await this.#run(`rollback[${i}]`, rollback[i] as Action, signal, false),
        );
      } catch (e) {
        rollbackOk = false;
        this.errors.push(`rollback[${i}]: ${errorText(e, signal)}`);
        break;
      }
    }
    if (failed && (rollback.length === 0 || !rollbackOk)) await this.#restoreOriginals(signal);
  }

  async #restoreOriginals(signal: AbortSignal): Promise<void> {
    for (const [device, original] of [...this.originals].reverse()) {
      try {
        let readback: Value | null = null;
        for (const value of await this.#rampTo(device, original, signal)) {
          readback = await this.#writeConfirmed(device, value, signal);
        }
        this.restores.push({ device, to: original, readback, ok: true });
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
   * The values that bring a device back to `target` without any step larger
   * than its max_step: a restore must not jump where a plan could not.
   */
  async #rampTo(device: string, target: Value, signal: AbortSignal): Promise<Value[]> {
    const maxStep = this.deps.limits.lookup(device)?.max_step;
    if (typeof target !== "number" || maxStep === undefined) return [target];
    const [now] = await this.deps.cs.read([device], signal);
    const from = now?.ok ? now.value : null;
    if (typeof from !== "number") return [target];
    const n = Math.max(1, Math.ceil(Math.abs(target - from) / maxStep - 1e-9));
    return Array.from(
      { length: n },
      (_, i) => (i === n - 1 ? target : from + ((i + 1) * (target - from)) / n),
    );
  }

  async #run(
    where: string,
    action: Action,
    signal: AbortSignal,
    progress: boolean,
  ): Promise<ActionResult> {
    switch (action.type) {
      case "read": {
        const readings = await this.#read(action.devices, signal);
        this.#progress(
          progress,
          `read ${action.devices.length} device${action.devices.length > 1 ? "s" : ""}`,
        );
        return { where, type: "read", ok: true, detail: action.label ?? "read", readings };
      }
      case "write": {
        const readback = await this.#writeConfirmed(action.device, action.value, signal);
        this.#progress(progress, `${action.device} = ${action.value}`);
        return {
          where,
          type: "write",
          ok: true,
          detail: `${action.device} = ${action.value} (readback ${show(readback)})`,
        };
      }
      case "wait":
        await sleep(action.seconds * 1000, signal);
        this.#progress(progress, `waited ${action.seconds} s`);
        return { where, type: "wait", ok: true, detail: `waited ${action.seconds} s` };
      case "scan":
        return await this.#scan(where, action, signal, progress);
    }
  }

  async #scan(
    where: string,
    scan: Extract<Action, { type: "scan" }>,
    signal: AbortSignal,
    progress: boolean,
  ) {
    const rows: {
      time: string;
      setpoint: number;
      readback: Value | null;
      values: (Value | null)[];
    }[] = [];
    const points = scanPoints(scan);
    try {
      for (let i = 0; i < points.length; i++) {
        if (signal.aborted) throw signal.reason;
        const point = points[i] as number;
        const readback = await this.#writeConfirmed(scan.writeDevice, point, signal);
        await sleep(scan.dwellSeconds * 1000, signal);
        const readings = await this.#read(scan.readDevices, signal);
        rows.push({
          time: new Date(this.deps.now()).toISOString(),
          setpoint: point,
          readback,
          values: readings.map((r) => r.value),
        });
        this.#progress(
          progress,
          `${scan.writeDevice} = ${round(point)} (${i + 1}/${points.length})`,
        );
      }
    } finally {
      if (this.deps.workDir && rows.length) {
        this.csvFiles.push(
          await writeScanCsv(this.deps.workDir, this.checked.hash, where, scan, rows),
        );
      }
    }
    return {
      where,
      type: "scan" as const,
      ok: true,
      detail: `${points.length} points of ${scan.writeDevice}`,
    };
  }

  async #read(devices: string[], signal: AbortSignal) {
    const readings = await this.deps.cs.read(devices, signal);
    const failed = readings.filter((r) => !r.ok);
    if (failed.length) {
      throw new Error(`cannot read ${failed.map((r) => `${r.device} (${r.error})`).join(", ")}`);
    }
    this.#checkSeverity(readings);
    return readings.map((r) => ({ device: r.device, value: r.value, severity: r.severity }));
  }

  #checkSeverity(readings: Reading[]): void {
    const level = this.checked.plan.abortOnSeverity;
    if (!level) return;
    const bad = readings.find((r) => severityAtLeast(r.severity, level));
    if (bad) {
      throw new PlanAbort(
        `${bad.device} went ${bad.severity} (${bad.status}); the plan aborts at ${level}`,
      );
    }
  }

  /** Captures the original, writes, and waits for the readback to come within tolerance. */
  async #writeConfirmed(device: string, value: Value, signal: AbortSignal): Promise<Value | null> {
    const { cs } = this.deps;
    if (!this.originals.has(device)) {
      const [before] = await cs.read([device], signal);
      if (!before?.ok || before.value === null) {
        throw new Error(
          `cannot read ${device} before writing it (${
            before?.error ?? "no value"
          }); nothing written to it`,
        );
      }
      this.originals.set(device, before.value);
    }
    await cs.write(device, value, signal);
    const tol = this.checked.tolerances[device] ?? 1e-6;
    // A monotonic deadline: the injected clock may be a test's manual one.
    const deadline = performance.now() + (this.deps.readbackTimeoutMs ?? 2_000);
    for (;;) {
      const [after] = await cs.read([device], signal);
      const got = after?.ok ? after.value : null;
      if (matches(got, value, tol)) return got;
      if (performance.now() >= deadline) {
        throw new Error(`readback of ${device} is ${show(got)}, not ${value} within ±${tol}`);
      }
      await sleep(50, signal);
    }
  }

  #progress(enabled: boolean, detail: string): void {
    if (!enabled) return;
    this.#step++;
    this.deps.onProgress?.({ step: this.#step, total: this.#total, detail });
  }

  #checkAbort(): void {
    if (this.deps.signal.aborted) throw this.deps.signal.reason;
  }
}

function matches(got: Value | null, want: Value, tol: number): boolean {
  if (typeof got === "number" && typeof want === "number") {
    return Math.abs(got - want) <= tol + 1e-12;
  }
  return got === want;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return signal.aborted ? Promise.reject(signal.reason) : Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
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

function round(x: number): number {
  return Number(x.toPrecision(6));
}
