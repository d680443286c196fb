/**
 * One run of an approved, preflighted plan: its actions in order, then the
 * rollback and the restores (`rollback.ts`), every write through the
 * {@link Writer}. WAITs and scan dwells run on the injected timers.
 *
 * @module
 */
import type { Reading, Value } from "../../adapters/adapter.ts";
import { severityAtLeast } from "../../adapters/adapter.ts";
import { type Action, type ScanAction, scanPoints } from "../../plan_model/plan.ts";
import type { PreflightedPlan } from "../../plan_model/preflighted.ts";
import { round6, sleep } from "../../util/misc.ts";
import { partnerText } from "../readback.ts";
import { writeScanCsv } from "../scan_csv.ts";
import { restoreOriginals, runRollback } from "./rollback.ts";
import { confirmationText, errorText } from "./text.ts";
import type { ActionResult, ExecuteDeps, ExecutionResult, RunOptions } from "./types.ts";
import { Writer } from "./writer.ts";

/** An abort the plan asked for (a read device reached `abortOnSeverity`). */
class AlarmAbort extends Error {}

/** One row of a scan's CSV file. */
interface ScanRow {
  time: string;
  setpoint: number;
  readback: Value | null;
  values: (Value | null)[];
}

export class Run {
  readonly results: ActionResult[] = [];
  readonly rollbackResults: ActionResult[] = [];
  readonly errors: string[] = [];
  readonly csvFiles: string[] = [];
  readonly writer: Writer;
  #step = 0;
  readonly #total: number;

  constructor(readonly checked: PreflightedPlan, readonly deps: ExecuteDeps) {
    const units = (a: Action) => (a.type === "scan" ? a.steps : 1);
    this.#total = checked.plan.actions.reduce((n, a) => n + units(a), 0);
    this.writer = new Writer(checked, deps);
  }

  async go(): Promise<Omit<ExecutionResult, "planHash" | "startedAt" | "finishedAt">> {
    const { plan } = this.checked;
    let status: ExecutionResult["status"] = "completed";
    let abortedBy: ExecutionResult["abortedBy"];
    const opts = { signal: this.deps.signal, progress: true, severity: true };
    try {
      for (let i = 0; i < plan.actions.length; i++) {
        if (this.deps.signal.aborted) throw this.deps.signal.reason;
        this.results.push(await this.runAction(`actions[${i}]`, plan.actions[i] as Action, opts));
      }
    } catch (e) {
      if (e instanceof AlarmAbort) [status, abortedBy] = ["aborted", "alarm"];
      else if (this.deps.signal.aborted) [status, abortedBy] = ["aborted", "operator"];
      else status = "failed";
      this.errors.push(errorText(e, this.deps.signal));
    }
    const rolledBack = await runRollback(this, status !== "completed");
    if (rolledBack === undefined && status === "completed") status = "failed";
    const restores = status === "completed"
      ? []
      : await restoreOriginals(this.writer, this.deps, rolledBack ?? new Set());
    return {
      status,
      ...(abortedBy ? { abortedBy } : {}),
      results: this.results,
      rollback: this.rollbackResults,
      restores,
      errors: this.errors,
      violations: [],
      csvFiles: this.csvFiles,
    };
  }

  async runAction(where: string, action: Action, opts: RunOptions): Promise<ActionResult> {
    switch (action.type) {
      case "read": {
        const readings = await this.#read(action.devices, opts);
        const n = action.devices.length;
        this.#progress(opts, `read ${n} device${n > 1 ? "s" : ""}`);
        return { where, type: "read", ok: true, detail: action.label ?? "read", readings };
      }
      case "write": {
        const c = await this.writer.writeConfirmed(action.device, action.value, opts.signal);
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

  async #scan(where: string, scan: ScanAction, opts: RunOptions): Promise<ActionResult> {
    const rows: ScanRow[] = [];
    const points = scanPoints(scan);
    let last: ActionResult["confirmation"];
    try {
      for (let i = 0; i < points.length; i++) {
        if (opts.signal.aborted) throw opts.signal.reason;
        const point = points[i] as number;
        last = await this.writer.writeConfirmed(scan.writeDevice, point, opts.signal);
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
      type: "scan",
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

  #progress(opts: RunOptions, detail: string): void {
    if (!opts.progress) return;
    this.#step++;
    this.deps.onProgress?.({ step: this.#step, total: this.#total, detail });
  }
}
