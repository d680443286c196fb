/**
 * Putting back what an unfinished plan changed, and only claiming what was
 * verified. The originals come from the keyed audit's write-ahead record of
 * the run (`write_ahead.ts`); its marker only points at the run, and a
 * marker that disagrees with that record (an edited original, a device
 * added or left out, a damaged file) is not trusted: nothing is restored
 * from it. The recovery is a plan like any other, approved like any other:
 * each device goes back newest first, in steps no larger than its max_step,
 * with a read between steps. A run is closed as restored only when every
 * original device, read from the control system afterwards, is at its
 * original within tolerance.
 *
 * @module
 */
import type { Reading, Value } from "../adapters/adapter.ts";
import type { AuditLog } from "../safety/audit.ts";
import type { LimitsTable } from "../safety/limits.ts";
import { canonicalJson } from "../util/hash.ts";
import { round6 } from "../util/misc.ts";
import type { Action, Plan } from "../plan_model/plan.ts";
import { isRunId, type RunMarker } from "./run_journal.ts";
import { findRunEnd, findWriteAhead } from "./write_ahead.ts";

/** An unfinished run as far as it can be trusted. */
export interface CheckedRun {
  marker: RunMarker;
  /** The originals of the audit's write-ahead record, when it was found and checks out. */
  originals?: Record<string, Value | null>;
  /** When the audit recorded those originals, just before the run's first write. */
  recordedAt?: string;
  /** Why nothing is restored from this marker; undefined when it agrees with the audit. */
  problem?: string;
}

/** Checks a marker against the audit's write-ahead record of its run. */
export async function checkRun(marker: RunMarker, audit: AuditLog): Promise<CheckedRun> {
  if (!isRunId(marker.run)) {
    return { marker, problem: marker.damaged ?? `${marker.run} is not a run id` };
  }
  const found = await findWriteAhead(audit, marker.run);
  if (!found.ok) {
    const why = marker.damaged ? `${marker.damaged}, and ${found.why}` : found.why;
    return { marker, problem: why };
  }
  const { originals, planHash, time: recordedAt } = found.record;
  if (marker.damaged) return { marker, originals, recordedAt, problem: marker.damaged };
  // A process killed after recording how the run ended, before removing its marker, leaves one
  // that says "unfinished": restoring from it would undo what the run completed.
  const end = marker.outcome
    ? undefined
    : await findRunEnd(audit, marker.run).catch(() => undefined);
  if (end) {
    return {
      marker,
      originals,
      recordedAt,
      problem: `the audit records its outcome (${end.status} at ${end.time}): the run ended, ` +
        "and this marker was left behind; nothing is restored from it",
    };
  }
  const disagreement = planHash !== marker.planHash
    ? `names plan ${marker.planHash.slice(0, 12)}, the audit plan ${planHash.slice(0, 12)}`
    : originalsDisagree(marker.originals, originals);
  if (disagreement) {
    return {
      marker,
      originals,
      recordedAt,
      problem: `its marker disagrees with the audit's write-ahead record (${disagreement})`,
    };
  }
  return { marker, originals, recordedAt };
}

/**
 * An unfinished run that started after `run` and may have changed one of
 * its devices, with that device; undefined when there is none. Such a run's
 * originals are values `run` left: recovering `run` first and that run after
 * would put `run`'s fault back, so runs are recovered newest first.
 */
export function laterRunOnItsDevices(
  run: CheckedRun,
  runs: CheckedRun[],
): { run: string; device: string } | undefined {
  const when = (r: CheckedRun) => r.recordedAt ?? r.marker.startedAt;
  const mine = Object.keys(run.originals ?? run.marker.originals);
  for (const other of runs) {
    if (other.marker.run === run.marker.run || !(when(other) > when(run))) continue;
    const theirs = other.originals ?? other.marker.originals;
    const device = mine.find((d) => d in theirs);
    if (device !== undefined) return { run: other.marker.run, device };
  }
  return undefined;
}

/** How two sets of originals differ, in a few words; undefined when they do not. */
function originalsDisagree(
  marker: Record<string, Value | null>,
  audit: Record<string, Value | null>,
): string | undefined {
  for (const [device, value] of Object.entries(marker)) {
    if (!(device in audit)) return `the marker names ${device}, which the plan did not record`;
    const recorded = audit[device] ?? null;
    if (canonicalJson(value) !== canonicalJson(recorded)) {
      return `${device} was ${show(value)} in the marker, ${show(recorded)} in the audit`;
    }
  }
  const left = Object.keys(audit).find((d) => !(d in marker));
  return left ? `the marker leaves out ${left}` : undefined;
}

/** The description of a recovery plan: what it restores (the run is bound by id, not by this). */
export function recoveryDescription(run: string, planHash: string): string {
  return `Restore what plan ${planHash.slice(0, 12)} changed before it stopped unfinished ` +
    `(run ${run})`;
}

export interface RecoveryPlan {
  /** Undefined when no device can or needs to be written. */
  plan?: Plan;
  /** Devices left as they are, each with why (the run then cannot be closed by this plan). */
  skipped: { device: string; why: string }[];
}

/**
 * The plan that brings every device of `originals` back from `live`. A
 * device whose original was unreadable, or that cannot be read now, is
 * skipped and said; one already within `tolerance` needs nothing.
 */
export function buildRecoveryPlan(
  run: { run: string; planHash: string },
  originals: Record<string, Value | null>,
  live: Map<string, Value | null>,
  limits: LimitsTable,
  tolerance: (device: string) => number,
): RecoveryPlan {
  const actions: Action[] = [];
  const skipped: RecoveryPlan["skipped"] = [];
  const reason = `back to its value before plan ${run.planHash.slice(0, 12)}`;
  for (const [device, original] of Object.entries(originals).reverse()) {
    const now = live.get(device) ?? null;
    if (original === null) {
      skipped.push({ device, why: "its original could not be read when the plan started" });
      continue;
    }
    if (now === null) {
      skipped.push({ device, why: "it cannot be read now" });
      continue;
    }
    if (matches(now, original, tolerance(device))) continue;
    if (Array.isArray(original)) {
      skipped.push({ device, why: "a waveform is not restored by a plan" });
      continue;
    }
    if (typeof original === "boolean") {
      skipped.push({ device, why: "a boolean is not restored by a plan" });
      continue;
    }
    if (typeof original !== "number" || typeof now !== "number") {
      actions.push({ type: "write", device, value: original, reason });
      continue;
    }
    const maxStep = limits.lookup(device)?.max_step;
    let at = now;
    for (let guard = 0; guard < 1000; guard++) {
      const last = maxStep === undefined || Math.abs(original - at) <= maxStep;
      const next = last ? original : round6(at + Math.sign(original - at) * (maxStep as number));
      if (guard > 0) actions.push({ type: "read", devices: [device], label: "between steps" });
      actions.push({ type: "write", device, value: next, reason });
      if (last) break;
      at = next;
    }
  }
  if (actions.length === 0) return { skipped };
  const devices = [...new Set(actions.flatMap((a) => (a.type === "write" ? [a.device] : [])))];
  actions.push({ type: "read", devices, label: "confirm the originals" });
  return {
    plan: { description: recoveryDescription(run.run, run.planHash), actions },
    skipped,
  };
}

/** One device that is not at its original, and why. */
export interface NotRestored {
  device: string;
  why: string;
}

/**
 * Every original device that does not read its original within tolerance
 * in `readings` (read from the control system after the restore), nor has
 * its readback device (`partners`, as a write is confirmed) read it: an
 * unreadable device, or one whose original is unknown, counts as not restored.
 */
export function notRestored(
  originals: Record<string, Value | null>,
  readings: Reading[],
  tolerance: (device: string) => number,
  partners: Record<string, string> = {},
): NotRestored[] {
  const read = new Map(readings.map((r) => [r.device, r]));
  const out: NotRestored[] = [];
  for (const [device, original] of Object.entries(originals)) {
    if (original === null) {
      out.push({ device, why: "its original was not recorded (unreadable when the plan started)" });
      continue;
    }
    const tol = tolerance(device);
    const partner = partners[device];
    for (
      const [name, what] of [
        [device, "it"],
        ...(partner ? [[partner, `its readback ${partner}`]] : []),
      ]
    ) {
      const r = read.get(name as string);
      const why = !r?.ok || r.value === null
        ? `${what} cannot be read (${r?.error ?? "no reading"})`
        : !matches(r.value, original, tol)
        ? `${what} reads ${show(r.value)}, not its original ${show(original)} ±${tol}`
        : undefined;
      if (why) {
        out.push({ device, why });
        break;
      }
    }
  }
  return out;
}

function matches(got: Value, want: Value, tol: number): boolean {
  if (typeof got === "number" && typeof want === "number") {
    return Math.abs(got - want) <= tol + 1e-12;
  }
  if (Array.isArray(got) && Array.isArray(want)) {
    return got.length === want.length &&
      got.every((g, i) => Math.abs(g - (want[i] as number)) <= tol + 1e-12);
  }
  return got === want;
}

function show(v: Value | null): string {
  return v === null ? "unknown" : JSON.stringify(v);
}
