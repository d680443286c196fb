/**
 * Checks a whole plan against the live machine and the safety limits before
 * anyone is asked to approve it, and again right before it runs. Every
 * violation is listed at once, each naming the action, device, value and
 * limit, so the model (or the operator) can correct the plan in one go.
 *
 * @module
 */
import type { ControlReader, DeviceInfo, Value } from "../adapters/adapter.ts";
import type { LimitEntry, LimitsTable } from "../safety/limits.ts";
import { type Action, isReadOnly, type Plan, planHash, scanPoints } from "./model.ts";
import { round6 } from "../util/misc.ts";
import { findReadbacks, type ReadbackPartner } from "./readback.ts";

/** How long a readback may take to come within tolerance when nothing else says: 10 s. */
export const DEFAULT_SETTLE_MS = 10_000;

export interface SafetyPolicy {
  /** The kill switch: false refuses every write. */
  writesEnabled: boolean;
  /** What turned writes off, when not the config's `writes_enabled` (a site kill switch). */
  writesDisabledBy?: string;
  maxScanPoints: number;
  maxPlanSeconds: number;
  /** Where the limits came from, for messages. */
  limitsSource: string;
}

export interface Violation {
  /** "actions[2]" or "rollback[0]". */
  where: string;
  device?: string;
  message: string;
}

/** One change the plan makes, for the approval table: current → new (Δ). */
export interface PlannedChange {
  where: string;
  kind: "write" | "scan";
  device: string;
  units: string;
  /** The device's value before this change (live, or what the plan set before). */
  from: Value | null;
  /** Write: the value; scan: the last point. */
  to: number | string;
  delta?: number;
  reason?: string;
  /** Scan only. */
  points?: number;
  first?: number;
  rollback: boolean;
  /** The device whose reading confirms this change; null when it has none (see {@link ReadbackPartner}). */
  readback?: ReadbackPartner;
}

export interface PreflightedPlan {
  plan: Plan;
  hash: string;
  ok: boolean;
  violations: Violation[];
  changes: PlannedChange[];
  readOnly: boolean;
  estimatedSeconds: number;
  scanPoints: number;
  /** Readback tolerance of every device the plan writes. */
  tolerances: Record<string, number>;
  /** The readback partner of every device the plan writes that exists. */
  readbacks: Record<string, ReadbackPartner>;
  /** Live values of written devices when checked. */
  live: Record<string, Value | null>;
  checkedAt: string;
}

/** Time allowed per device operation in estimates (a gateway round trip). */
const OP_SECONDS = 0.05;

export interface PreflightDeps {
  /** Preflight only reads. */
  cs: ControlReader;
  limits: LimitsTable;
  policy: SafetyPolicy;
  now(): number;
  signal?: AbortSignal;
  /** Settle time of a readback whose limits entry gives no `settle_s` ({@link DEFAULT_SETTLE_MS}). */
  readbackTimeoutMs?: number;
}

export async function preflight(plan: Plan, deps: PreflightDeps): Promise<PreflightedPlan> {
  const { cs, limits, policy } = deps;
  const steps = [
    ...plan.actions.map((a, i) => ({ where: `actions[${i}]`, action: a, rollback: false })),
    ...(plan.rollback ?? []).map((a, i) => ({
      where: `rollback[${i}]`,
      action: a,
      rollback: true,
    })),
  ];
  const referenced = [...new Set(steps.flatMap(({ action }) => devicesOf(action)))];
  const written = [...new Set(steps.flatMap(({ action }) => writtenBy(action)))];
  const [infos, readings] = await Promise.all([
    cs.describe(referenced, deps.signal),
    cs.read(written, deps.signal),
  ]);
  const info = new Map(infos.map((d) => [d.device, d]));
  const unknownReason = new Map(
    readings.filter((r) => !r.ok).map((r) => [r.device, r.error ?? "unreadable"]),
  );
  const live: Record<string, Value | null> = {};
  for (const r of readings) live[r.device] = r.ok ? r.value : null;

  const violations: Violation[] = [];
  const changes: PlannedChange[] = [];
  const tolerances: Record<string, number> = {};
  const expected = new Map<string, Value | null>(Object.entries(live));
  const reportedUnknown = new Set<string>();
  let lastWriteTo = new Map<string, string>();
  let seconds = 0;
  let points = 0;

  const reportedUnreadable = new Set<string>();
  /** A device whose live value cannot be read cannot have its step checked. */
  const unreadable = (where: string, device: string) => {
    if (live[device] !== null || reportedUnreadable.has(device)) return;
    if (limits.lookup(device)?.max_step === undefined) return;
    reportedUnreadable.add(device);
    violations.push({
      where,
      device,
      message: `cannot read ${device} (${
        unknownReason.get(device) ?? "no value"
      }); its max_step cannot be checked`,
    });
  };
  const unknown = (where: string, device: string) => {
    const d = info.get(device);
    if (d?.exists) return false;
    if (!reportedUnknown.has(device)) {
      reportedUnknown.add(device);
      const why = unknownReason.get(device);
      violations.push({
        where,
        device,
        message: `${device} does not exist${why && why !== "unknown device" ? ` (${why})` : ""}`,
      });
    }
    return true;
  };

  let inRollback = false;
  for (const { where, action, rollback } of steps) {
    if (rollback && !inRollback) {
      // The rollback runs after the plan ends; its first write follows no write of the plan.
      inRollback = true;
      lastWriteTo = new Map();
    }
    switch (action.type) {
      case "read":
        for (const d of action.devices) unknown(where, d);
        lastWriteTo = new Map();
        seconds += OP_SECONDS;
        break;
      case "wait":
        lastWriteTo = new Map();
        seconds += action.seconds;
        break;
      case "write": {
        seconds += 2 * OP_SECONDS;
        const previous = lastWriteTo.get(action.device);
        if (previous) {
          violations.push({
            where,
            device: action.device,
            message:
              `${action.device} is written again right after ${previous} with nothing between; ` +
              "merge the writes or put a read or wait between them",
          });
        }
        lastWriteTo.set(action.device, where);
        if (unknown(where, action.device)) break;
        const d = info.get(action.device) as DeviceInfo;
        const from = expected.get(action.device) ?? null;
        unreadable(where, action.device);
        const problems = checkValue(d, action.value, from, limits.lookup(action.device), policy);
        for (const message of problems) violations.push({ where, device: action.device, message });
        tolerances[action.device] = tolerance(d, limits.lookup(action.device));
        changes.push({
          where,
          kind: "write",
          device: action.device,
          units: d.units,
          from,
          to: action.value,
          delta: typeof from === "number" && typeof action.value === "number"
            ? action.value - from
            : undefined,
          reason: action.reason,
          rollback,
        });
        expected.set(action.device, action.value);
        break;
      }
      case "scan": {
        lastWriteTo = new Map();
        for (const r of action.readDevices) unknown(where, r);
        points += action.steps;
        seconds += action.steps * (action.dwellSeconds + 3 * OP_SECONDS);
        if (unknown(where, action.writeDevice)) break;
        if (points > policy.maxScanPoints) break; // reported below; do not expand a huge scan
        unreadable(where, action.writeDevice);
        const pts = scanPoints(action);
        const d = info.get(action.writeDevice) as DeviceInfo;
        const limit = limits.lookup(action.writeDevice);
        const from = expected.get(action.writeDevice) ?? null;
        let prev: Value | null = from;
        for (let i = 0; i < pts.length; i++) {
          const point = pts[i] as number;
          for (const message of checkValue(d, point, prev, limit, policy)) {
            violations.push({
              where,
              device: action.writeDevice,
              message: `scan point ${i + 1} of ${pts.length}: ${message}`,
            });
          }
          prev = point;
          if (!policy.writesEnabled || !d.writable || !limit) break; // one message is enough
        }
        tolerances[action.writeDevice] = tolerance(d, limit);
        changes.push({
          where,
          kind: "scan",
          device: action.writeDevice,
          units: d.units,
          from,
          first: action.start,
          to: action.stop,
          delta: typeof from === "number" ? action.stop - from : undefined,
          points: pts.length,
          rollback,
        });
        expected.set(action.writeDevice, action.stop);
        break;
      }
    }
  }
  const found = await findReadbacks(
    cs,
    written.filter((d) => info.get(d)?.exists).map((d) => ({
      info: info.get(d) as DeviceInfo,
      limit: limits.lookup(d),
    })),
    deps.readbackTimeoutMs ?? DEFAULT_SETTLE_MS,
    deps.signal,
  );
  for (const c of changes) c.readback = found.partners[c.device];
  for (const [device, message] of Object.entries(found.problems)) {
    const where = changes.find((c) => c.device === device)?.where ?? "plan";
    violations.push({ where, device, message });
  }
  if (points > policy.maxScanPoints) {
    violations.push({
      where: "plan",
      message:
        `the plan has ${points} scan points; at most ${policy.maxScanPoints} are allowed ([safety] max_scan_points)`,
    });
  }
  if (seconds > policy.maxPlanSeconds) {
    violations.push({
      where: "plan",
      message:
        `the plan would take about ${
          Math.round(seconds)
        } s; at most ${policy.maxPlanSeconds} s are allowed ` +
        "([safety] max_plan_seconds)",
    });
  }
  return {
    plan,
    hash: await planHash(plan),
    ok: violations.length === 0,
    violations,
    changes,
    readOnly: isReadOnly(plan),
    estimatedSeconds: Math.round(seconds * 10) / 10,
    scanPoints: points,
    tolerances,
    readbacks: found.partners,
    live,
    checkedAt: new Date(deps.now()).toISOString(),
  };
}

function devicesOf(a: Action): string[] {
  switch (a.type) {
    case "read":
      return a.devices;
    case "write":
      return [a.device];
    case "wait":
      return [];
    case "scan":
      return [a.writeDevice, ...a.readDevices];
  }
}

function writtenBy(a: Action): string[] {
  return a.type === "write" ? [a.device] : a.type === "scan" ? [a.writeDevice] : [];
}

/** Why `value` may not be written to the device, from `from`; empty when it may. */
export function checkValue(
  d: DeviceInfo,
  value: number | string,
  from: Value | null,
  limit: LimitEntry | undefined,
  policy: SafetyPolicy,
): string[] {
  if (!policy.writesEnabled) {
    return [
      policy.writesDisabledBy ??
        "writes are disabled by the kill switch ([safety] writes_enabled = false)",
    ];
  }
  if (!d.writable) return [`${d.device} is read-only`];
  if (!limit) {
    return [
      `${d.device} has no entry in ${policy.limitsSource}; a device without limits cannot be written`,
    ];
  }
  if (limit.writable === false) {
    return [`${d.device} is marked not writable in ${policy.limitsSource} (${limit.pattern})`];
  }
  const out: string[] = [];
  if (d.type === "number" || d.type === "waveform") {
    if (typeof value !== "number") {
      return [`value ${JSON.stringify(value)} is a string; ${d.device} takes a number`];
    }
    if (!Number.isFinite(value)) return [`value ${value} is not a finite number`];
    if (
      limit.unbounded !== true &&
      (limit.min === undefined || limit.max === undefined || limit.max_step === undefined)
    ) {
      return [
        `${d.device} is a number but its entry in ${policy.limitsSource} (${limit.pattern}) ` +
        "lacks min, max or max_step; a number is written only within all three",
      ];
    }
    const lo = maxDefined(limit.min, d.limits?.min);
    const hi = minDefined(limit.max, d.limits?.max);
    const unit = d.units ? ` ${d.units}` : "";
    if (lo !== undefined && value < lo) {
      out.push(
        `value ${value}${unit} is below the minimum ${lo}${unit} (${
          limitSource(lo, limit.min, policy, limit)
        })`,
      );
    }
    if (hi !== undefined && value > hi) {
      out.push(
        `value ${value}${unit} is above the maximum ${hi}${unit} (${
          limitSource(hi, limit.max, policy, limit)
        })`,
      );
    }
    if (
      limit.max_step !== undefined && typeof from === "number" &&
      Math.abs(value - from) > limit.max_step + 1e-12
    ) {
      out.push(
        `step of ${round6(value - from)}${unit} from ${
          round6(from)
        }${unit} exceeds max_step ${limit.max_step}${unit} (${policy.limitsSource}: ${limit.pattern})`,
      );
    }
    return out;
  }
  if (typeof value !== "string") {
    return [`value ${value} is a number; ${d.device} takes one of its labels or a string`];
  }
  const allowed = limit.values ?? d.labels;
  if (!allowed && limit.unbounded !== true) {
    return [
      `${d.device} takes free text but its entry in ${policy.limitsSource} (${limit.pattern}) ` +
      "lists no values; give values, or unbounded = true to allow any text",
    ];
  }
  if (allowed?.length === 0) {
    return [`no value may be written to ${d.device}: the entries ${limit.pattern} share no values`];
  }
  if (allowed && !allowed.includes(value)) {
    out.push(`value "${value}" is not one of ${allowed.join(", ")}`);
  }
  return out;
}

function limitSource(
  used: number,
  fromLimits: number | undefined,
  policy: SafetyPolicy,
  limit: LimitEntry,
): string {
  return used === fromLimits
    ? `${policy.limitsSource}: ${limit.pattern}`
    : "the device's own limit";
}

/** Readback tolerance: the limits file's, else one unit in the device's last displayed digit. */
export function tolerance(d: DeviceInfo, limit: LimitEntry | undefined): number {
  if (limit?.tolerance !== undefined) return limit.tolerance;
  return d.precision !== undefined ? 10 ** -d.precision : 1e-6;
}

function maxDefined(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}
