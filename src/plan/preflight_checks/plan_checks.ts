/**
 * The checks of a plan's steps: `no_repeated_write`, `device_exists`,
 * `current_value_known`, the value checks of every write and scan point (see
 * `value.ts`), `readback_found`, and the plan's size, `max_scan_points`
 * and `max_plan_seconds`. Each takes the walked plan and returns its
 * violations; preflight runs them in that order.
 *
 * @module
 */
import type { PlannedChange, SafetyPolicy, Violation } from "../../plan_model/preflighted.ts";
import { checkValue } from "./value.ts";
import type { Facts, Step, Target } from "./walk.ts";

/** Time allowed per device operation in estimates (a gateway round trip). */
const OP_SECONDS = 0.05;

/**
 * `no_repeated_write`: a device written twice with no read, wait or scan
 * between is a duplicate or a conflict. The rollback starts afresh.
 */
export function noRepeatedWrite(steps: Step[]): Violation[] {
  const out: Violation[] = [];
  let lastWriteTo = new Map<string, string>();
  let inRollback = false;
  for (const { where, action, rollback } of steps) {
    if (rollback && !inRollback) [inRollback, lastWriteTo] = [true, new Map()];
    if (action.type !== "write") {
      lastWriteTo = new Map();
      continue;
    }
    const previous = lastWriteTo.get(action.device);
    if (previous) {
      out.push({
        check: "no_repeated_write",
        where,
        device: action.device,
        message:
          `${action.device} is written again right after ${previous} with nothing between; ` +
          "merge the writes or put a read or wait between them",
      });
    }
    lastWriteTo.set(action.device, where);
  }
  return out;
}

/** `device_exists`: every device the plan reads or writes exists; each unknown one is named once. */
export function deviceExists(steps: Step[], facts: Facts): Violation[] {
  const out: Violation[] = [];
  const reported = new Set<string>();
  for (const { where, action } of steps) {
    const devices = action.type === "read"
      ? action.devices
      : action.type === "write"
      ? [action.device]
      : action.type === "scan"
      ? [...action.readDevices, action.writeDevice]
      : [];
    for (const device of devices) {
      if (facts.info.get(device)?.exists || reported.has(device)) continue;
      reported.add(device);
      const why = facts.unreadableWhy.get(device);
      out.push({
        check: "device_exists",
        where,
        device,
        message: `${device} does not exist${why && why !== "unknown device" ? ` (${why})` : ""}`,
      });
    }
  }
  return out;
}

/**
 * `current_value_known`: a written device with a max_step must be readable
 * now, or its first step cannot be checked. Each is named once.
 */
export function currentValueKnown(targets: Target[], facts: Facts): Violation[] {
  const out: Violation[] = [];
  const reported = new Set<string>();
  for (const { where, info: { device } } of targets) {
    if (facts.live[device] !== null || reported.has(device)) continue;
    if (facts.limits.lookup(device)?.max_step === undefined) continue;
    reported.add(device);
    out.push({
      check: "current_value_known",
      where,
      device,
      message: `cannot read ${device} (${
        facts.unreadableWhy.get(device) ?? "no value"
      }); its max_step cannot be checked`,
    });
  }
  return out;
}

/**
 * The value checks of every write and every scan point, each from the
 * value before it. A scan whose first point is refused for a reason every
 * point shares (kill switch, read-only, no limits) is named once.
 */
export function valueChecks(targets: Target[], facts: Facts): Violation[] {
  const out: Violation[] = [];
  for (const { where, info, from, values, scan } of targets) {
    const limit = facts.limits.lookup(info.device);
    let prev = from;
    for (const [i, value] of values.entries()) {
      for (const { check, message } of checkValue(info, value, prev, limit, facts.policy)) {
        const text = scan ? `scan point ${i + 1} of ${values.length}: ${message}` : message;
        out.push({ check, where, device: info.device, message: text });
      }
      prev = value;
      if (!facts.policy.writesEnabled || !info.writable || !limit) break; // one message is enough
    }
  }
  return out;
}

/**
 * `readback_found`: a readback device the limits or the catalogue name
 * must be readable (`findReadbacks` says which are not); each is reported
 * at the device's first change.
 */
export function readbackFound(
  problems: Record<string, string>,
  changes: PlannedChange[],
): Violation[] {
  return Object.entries(problems).map(([device, message]) => ({
    check: "readback_found",
    where: changes.find((c) => c.device === device)?.where ?? "plan",
    device,
    message,
  }));
}

/** The number of scan points of the plan, actions and rollback. */
export function countScanPoints(steps: Step[]): number {
  return steps.reduce((n, { action }) => n + (action.type === "scan" ? action.steps : 0), 0);
}

/** Seconds the plan takes, by design (waits, dwells) and per device operation. */
export function estimateSeconds(steps: Step[]): number {
  let seconds = 0;
  for (const { action: a } of steps) {
    if (a.type === "read") seconds += OP_SECONDS;
    else if (a.type === "wait") seconds += a.seconds;
    else if (a.type === "write") seconds += 2 * OP_SECONDS;
    else seconds += a.steps * (a.dwellSeconds + 3 * OP_SECONDS);
  }
  return seconds;
}

/** `max_scan_points`: the plan's scans have at most `[safety] max_scan_points` points. */
export function maxScanPoints(points: number, policy: SafetyPolicy): Violation[] {
  if (points <= policy.maxScanPoints) return [];
  return [{
    check: "max_scan_points",
    where: "plan",
    message:
      `the plan has ${points} scan points; at most ${policy.maxScanPoints} are allowed ([safety] max_scan_points)`,
  }];
}

/** `max_plan_seconds`: the plan takes at most `[safety] max_plan_seconds`. */
export function maxPlanSeconds(seconds: number, policy: SafetyPolicy): Violation[] {
  if (seconds <= policy.maxPlanSeconds) return [];
  return [{
    check: "max_plan_seconds",
    where: "plan",
    message:
      `the plan would take about ${
        Math.round(seconds)
      } s; at most ${policy.maxPlanSeconds} s are allowed ` +
      "([safety] max_plan_seconds)",
  }];
}
