/**
 * What a plan did, from the executor's results alone: every device written
 * with its value before the plan (the write-ahead record's originals), the
 * last value written, the readback that checked it, and whether it was put
 * back; the scans with their files; errors, the rollback, the audit ids.
 * Nothing here comes from the model.
 *
 * @module
 */
import type { Value } from "../adapters/adapter.ts";
import type { Action } from "../plan_model/plan.ts";
import type { ActionResult, Confirmation, ExecutionResult } from "../plan/executor.ts";
import type { FinishedRun } from "../plan/service.ts";

/** One device the plan wrote (or tried to). */
export interface WrittenRow {
  device: string;
  /** Its value before the plan's first write. */
  before: Value | null;
  /** The last value written to it. */
  written: Value | null;
  /** Its value at the end, as its readback (or a restore's) read it. */
  after: Value | null;
  /** The device that read `after`; null when only the setpoint read back. */
  readbackDevice: string | null;
  check: "confirmed" | "accepted" | "not confirmed";
  /** Whether the executor put it back: by the rollback, or restored to its original. */
  restored: "no" | "rollback" | "restored" | "restore failed";
  /** Why it is not confirmed, or why its restore failed. */
  note?: string;
}

export interface ScanFact {
  /** Its place in the plan's actions (its CSV file is named after it). */
  index: number;
  device: string;
  start: number;
  stop: number;
  steps: number;
  readDevices: string[];
  dwellSeconds: number;
  completed: boolean;
}

export interface PlanFacts {
  kind: "plan";
  outcome: ExecutionResult["status"];
  abortedBy?: ExecutionResult["abortedBy"];
  description: string;
  planHash: string;
  run: string;
  auditIds: string[];
  /** False when the audit could not take the outcome. */
  recorded: boolean;
  decision: string;
  decidedBy: string;
  startedAt: string;
  finishedAt: string;
  writes: WrittenRow[];
  reasons: { device: string; value: Value; reason: string }[];
  scans: ScanFact[];
  rollback: string[];
  errors: string[];
  csvFiles: string[];
}

/** The facts of a finished run. */
export function planFacts(r: FinishedRun): PlanFacts {
  const e = r.execution;
  const rows = new Map<string, WrittenRow>();
  const row = (device: string): WrittenRow => {
    let x = rows.get(device);
    if (!x) {
      x = {
        device,
        before: r.originals[device] ?? null,
        written: null,
        after: null,
        readbackDevice: null,
        check: "not confirmed",
        restored: "no",
      };
      rows.set(device, x);
    }
    return x;
  };
  const scans: ScanFact[] = [];
  // An action that stopped part-way is in the results too (ok false), with the values it sent.
  for (const res of e.results) {
    const a = actionAt(r.plan.actions, res.where, "actions");
    if (a?.type !== "write" && a?.type !== "scan") continue;
    const [device, value] = a.type === "write" ? [a.device, a.value] : [a.writeDevice, a.stop];
    if (res.ok) checked(row(device), value, res.confirmation);
    else stopped(row, device, res, e.errors[0]);
    if (a.type === "scan") scans.push(scanFact(a, indexOf(res.where), res.ok));
  }
  for (const res of e.rollback) {
    const a = actionAt(r.plan.rollback ?? [], res.where, "rollback");
    if (a?.type !== "write" && a?.type !== "scan") continue;
    const [device, value] = a.type === "write" ? [a.device, a.value] : [a.writeDevice, a.stop];
    if (!res.ok) {
      stopped(row, device, res, e.errors.find((x) => x.startsWith(res.where)) ?? e.errors[0]);
      continue;
    }
    const x = row(device);
    checked(x, value, res.confirmation);
    x.restored = "rollback";
  }
  for (const rs of e.restores) {
    const x = row(rs.device);
    if (!rs.ok) {
      // Whether the original reached the wire is not known: what was last known written and read stays.
      x.restored = "restore failed";
      if (rs.readback !== null) x.after = rs.readback;
      if (rs.error) x.note = rs.error;
      continue;
    }
    x.written = rs.to;
    x.after = rs.readback;
    if (rs.readbackDevice !== undefined) x.readbackDevice = rs.readbackDevice;
    x.restored = "restored";
    x.check = rs.readbackDevice ? "confirmed" : "accepted";
  }
  return {
    kind: "plan",
    outcome: e.status,
    ...(e.abortedBy ? { abortedBy: e.abortedBy } : {}),
    description: r.plan.description,
    planHash: r.planHash,
    run: r.run,
    auditIds: [...r.auditIds],
    recorded: r.recorded,
    decision: r.decision,
    decidedBy: r.decidedBy,
    startedAt: e.startedAt,
    finishedAt: e.finishedAt,
    writes: [...rows.values()],
    reasons: r.plan.actions.flatMap((a) =>
      a.type === "write" ? [{ device: a.device, value: a.value, reason: a.reason }] : []
    ),
    scans,
    rollback: e.rollback.map((x) => `${x.where}: ${x.detail}`),
    errors: [...e.errors],
    csvFiles: [...e.csvFiles],
  };
}

/**
 * An action that stopped before it ended: its device is in the table only
 * when a value was sent to it (the last one sent), and nothing confirmed it.
 */
function stopped(
  row: (device: string) => WrittenRow,
  device: string,
  res: ActionResult,
  why: string | undefined,
): void {
  const last = res.written?.at(-1);
  if (last === undefined) return;
  const x = row(device);
  x.written = last;
  x.after = null;
  x.readbackDevice = null;
  x.check = "not confirmed";
  if (why) x.note = why;
}

function checked(x: WrittenRow, written: Value, c: Confirmation | undefined): void {
  x.written = written;
  if (!c) return;
  x.after = c.readback;
  x.readbackDevice = c.readbackDevice;
  x.check = c.status;
  delete x.note;
}

function actionAt(actions: Action[], where: string, list: string): Action | undefined {
  const m = new RegExp(`^${list}\\[(\\d+)\\]$`).exec(where);
  return m ? actions[Number(m[1])] : undefined;
}

function indexOf(where: string): number {
  return Number(/\[(\d+)\]/.exec(where)?.[1] ?? -1);
}

function scanFact(
  a: Extract<Action, { type: "scan" }>,
  index: number,
  completed: boolean,
): ScanFact {
  return {
    index,
    device: a.writeDevice,
    start: a.start,
    stop: a.stop,
    steps: a.steps,
    readDevices: a.readDevices,
    dwellSeconds: a.dwellSeconds,
    completed,
  };
}
