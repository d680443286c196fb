/**
 * One run of an approved, preflighted plan: its actions in order, then the
 * rollback and the restores (`rollback.ts`), every write through the
 * {@link Writer}. WAITs and scan dwells run on the injected timers; one
 * longer than a second asks the kill switches each second, so a switch
 * turned off stops a plan that waits without waiting for its next write.
 * An action that stops part-way is still in the results (ok false), with
 * every value it sent to the wire.
 *
 * @module
 */
import type { Reading, Value } from "../../adapters/adapter.ts";
import { severityAtLeast } from "../../adapters/adapter.ts";
import { type Action, type ScanAction, scanPoints } from "../../plan_model/plan.ts";
import type { PreflightedPlan } from "../../plan_model/preflighted.ts";
import { round6, sleep, type Timers } from "../../util/misc.ts";
import { partnerText } from "../readback.ts";
import { writeScanCsv } from "../scan_csv.ts";
import { restoreOriginals, runRollback } from "./rollback.ts";
import { confirmationText, errorText } from "./text.ts";
import type { ActionResult, ExecuteDeps, ExecutionResult, RunOptions } from "./types.ts";
import { Writer, WritesOff } from "./writer.ts";

/** An abort the plan asked for (a read device reached `abortOnSeverity`). */
class AlarmAbort extends Error {}

/** How often a WAIT or dwell asks the kill switches. */
export const SWITCH_POLL_MS = 1000;

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
        const where = `actions[${i}]`;
        const action = plan.actions[i] as Action;
        const mark = this.writer.sent.length;
        try {
          this.results.push(await this.runAction(where, action, opts));
        } catch (e) {
          this.results.push(this.stoppedResult(where, action, mark));
          throw e;
        }
      }
    } catch (e) {
      if (e instanceof AlarmAbort) [status, abortedBy] = ["aborted", "alarm"];
      else if (e instanceof WritesOff) [status, abortedBy] = ["aborted", "kill_switch"];
      else if (this.deps.signal.aborted) [status, abortedBy] = ["aborted", "operator"];
      else status = "failed";
      this.errors.push(errorText(e, this.deps.signal));
    }
    const rolledBack = await runRollback(this, status !== "completed");
    if (rolledBack === undefined && status === "completed") {
      // The rollback was skipped or stopped because a kill switch went off: that is the stop.
      if (this.writer.switchedOff !== undefined) [status, abortedBy] = ["aborted", "kill_switch"];
      else status = "failed";
    }
    const restores = status === "completed"
      ? []
      : this.deps.restoreOnStop === false
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
        await this.#wait(action.seconds * 1000, opts.signal);
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
    let stopped: { reason: unknown } | undefined;
    try {
      for (let i = 0; i < points.length; i++) {
        if (opts.signal.aborted) throw opts.signal.reason;
        const point = points[i] as number;
        last = await this.writer.writeConfirmed(scan.writeDevice, point, opts.signal);
        const readback = last.readback;
        await this.#wait(scan.dwellSeconds * 1000, opts.signal);
        const readings = await this.#read(scan.readDevices, opts);
        rows.push({
          time: new Date(this.deps.now()).toISOString(),
          setpoint: point,
          readback,
          values: readings.map((r) => r.value),
        });
        this.#progress(opts, `${scan.writeDevice} = ${round6(point)} (${i + 1}/${points.length})`);
      }
    } catch (e) {
      stopped = { reason: e };
    }
    // The points measured are saved however the scan ended.
    if (this.deps.workDir && rows.length) {
      try {
        this.csvFiles.push(
          await writeScanCsv(this.deps.workDir, this.checked.hash, where, scan, rows),
        );
      } catch (e) {
        // A scan that stopped keeps its reason (the switch, an alarm): the lost file is one more error.
        if (!stopped) throw e;
        this.errors.push(
          `the scan's data of ${where} could not be saved: ${errorText(e, this.deps.signal)}`,
        );
      }
    }
    if (stopped) throw stopped.reason;
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

  /**
   * The result of an action that did not end: every value it sent to the
   * wire (`written`), so the audit and `--json` show what the gateway may
   * have received even when the action never finished.
   */
  stoppedResult(where: string, action: Action, mark: number): ActionResult {
    const written = this.writer.sent.slice(mark).map((w) => w.value);
    const n = written.length;
    let detail: string;
    switch (action.type) {
      case "scan":
        detail = `stopped after sending ${n} of ${action.steps} points of ${action.writeDevice}`;
        break;
      case "write":
        detail = `${action.device} = ${action.value} ${n ? "sent, not confirmed" : "not written"}`;
        break;
      default:
        detail = `stopped (${action.type})`;
    }
    return { where, type: action.type, ok: false, detail, ...(n ? { written } : {}) };
  }

  /** Waits `ms` on the plan's timers, asking the kill switches each second of a long wait. */
  async #wait(ms: number, signal: AbortSignal): Promise<void> {
    const timers: Timers | undefined = this.deps.timers;
    if (!this.deps.killSwitch || ms <= SWITCH_POLL_MS) return await sleep(ms, signal, timers);
    const clock = () => timers?.now() ?? performance.now();
    const end = clock() + ms;
    for (let left = ms; left > 0; left = end - clock()) {
      await sleep(Math.min(left, SWITCH_POLL_MS), signal, timers);
      const off = await this.writer.switchOff();
      if (off !== undefined) throw new WritesOff(`the plan stopped while it waited: ${off}`);
    }
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
