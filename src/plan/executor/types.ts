/**
 * What the executor is given and what it returns.
 *
 * @module
 */
import type { PredictionDeps } from "../preflight_checks/predicted.ts";
import type { ObservedRun, Prediction } from "../../plan_model/prediction.ts";
import type { ControlSystem, Severity, Value } from "../../adapters/adapter.ts";
import type { LimitsTable } from "../../safety/limits.ts";
import type { Timers } from "../../util/misc.ts";
import type { Action } from "../../plan_model/plan.ts";
import type { SafetyPolicy, Violation } from "../../plan_model/preflighted.ts";

export interface ExecuteDeps {
  cs: ControlSystem;
  limits: LimitsTable;
  policy: SafetyPolicy;
  /** The response model the last preflight predicts with (absent: none). */
  prediction?: PredictionDeps;
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
   * run (the write-ahead record of the audit and the run journal). A
   * {@link NotStarted} error's message is the whole reason given.
   */
  beforeFirstWrite?(originals: Record<string, Value | null>): Promise<void>;
  /**
   * The kill switches as they are now: undefined while writes are allowed,
   * else why they are not. Asked before every write and every scan point,
   * and each second of a WAIT or dwell; restores of what this run wrote are
   * exempt (`writer.ts`). An error asking it counts as off.
   */
  killSwitch?(): Promise<string | undefined>;
  /**
   * False for a recovery run: when it stops, nothing is put back (what it
   * found before its first write are the faulted values an unfinished run
   * left, and each of its steps moved a device toward that run's originals).
   */
  restoreOnStop?: boolean;
  /** Time a readback may take to come within tolerance, unless its limits entry gives `settle_s`. */
  readbackTimeoutMs?: number;
  /** Time allowed for the rollback, on top of its own waits and dwells. */
  rollbackTimeoutMs?: number;
  /** Time allowed to restore each device. */
  restoreTimeoutMs?: number;
  /**
   * The clock and timers of every wait: WAITs, scan dwells, readback settling
   * and its polling; tests pass fake ones. The deadlines that bound calls to
   * the gateway (the rollback's and each restore's) stay on real time: a
   * hung gateway hangs in real time.
   */
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
  /**
   * An action that stopped before it ended (ok false): every value sent to
   * the wire for it, confirmed or not, in order.
   */
  written?: Value[];
}

export interface Restore {
  device: string;
  to: Value;
  readback: Value | null;
  /** The device that confirmed the restore; null when it has none (setpoint accepted). */
  readbackDevice?: string | null;
  ok: boolean;
  error?: string;
  /** How many tries the restore took, when more than one (the gateway answered late). */
  attempts?: number;
}

export interface ExecutionResult {
  planHash: string;
  status: "completed" | "failed" | "aborted" | "refused";
  /**
   * Why an aborted plan stopped: the operator (Ctrl-C), an alarm
   * (`abortOnSeverity`) or a kill switch turned off while it ran.
   */
  abortedBy?: "operator" | "alarm" | "kill_switch";
  results: ActionResult[];
  rollback: ActionResult[];
  restores: Restore[];
  errors: string[];
  violations: Violation[];
  csvFiles: string[];
  startedAt: string;
  finishedAt: string;
  /** What the last preflight predicted of the plan as it ran (absent: no prediction made). */
  prediction?: Prediction;
  /** What was compared with the prediction while the plan ran, and any deviation that stopped it. */
  observed?: ObservedRun;
}

/** How one action runs: in the plan, or in its rollback. */
export interface RunOptions {
  signal: AbortSignal;
  /** Count toward the progress bar. */
  progress: boolean;
  /** Apply `abortOnSeverity` (not during the rollback: the alarm may be why it runs). */
  severity: boolean;
}

/** Thrown by `beforeFirstWrite`: the plan does not start, for the reason its message gives. */
export class NotStarted extends Error {
  override name = "NotStarted";
}
