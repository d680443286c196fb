/**
 * A plan as preflight walks it: its steps in the order they run (actions,
 * then rollback), and every write a step makes with the value the device
 * would hold before it (live for the first, what the plan set after that).
 *
 * @module
 */
import type { DeviceInfo, Value } from "../../adapters/adapter.ts";
import type { LimitsTable } from "../../safety/limits.ts";
import { type Action, type Plan, scanPoints } from "../../plan_model/plan.ts";
import type { PlannedChange, SafetyPolicy } from "../../plan_model/preflighted.ts";

/** One step of the plan. */
export interface Step {
  /** "actions[2]" or "rollback[0]". */
  where: string;
  action: Action;
  rollback: boolean;
}

/** What preflight read from the machine before checking. */
export interface Facts {
  info: Map<string, DeviceInfo>;
  /** Live value of every written device; null when it could not be read. */
  live: Record<string, Value | null>;
  /** Why a written device could not be read. */
  unreadableWhy: Map<string, string>;
  limits: LimitsTable;
  policy: SafetyPolicy;
}

/** A write, or a scan's setpoints, to a device that exists, with the value before it. */
export interface Target {
  where: string;
  info: DeviceInfo;
  /** The value before the first of `values`. */
  from: Value | null;
  /** One value for a write; every point for a scan. */
  values: (number | string)[];
  scan: boolean;
}

/** The plan's steps in the order they run. */
export function planSteps(plan: Plan): Step[] {
  return [
    ...plan.actions.map((action, i) => ({ where: `actions[${i}]`, action, rollback: false })),
    ...(plan.rollback ?? []).map((action, i) => ({
      where: `rollback[${i}]`,
      action,
      rollback: true,
    })),
  ];
}

/** Every device an action names. */
export function devicesOf(a: Action): string[] {
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

/** The device an action writes, if any. */
export function writtenBy(a: Action): string[] {
  return a.type === "write" ? [a.device] : a.type === "scan" ? [a.writeDevice] : [];
}

/**
 * Every write of the plan to a device that exists, and the change each
 * makes for the approval table. Once the plan's scans pass
 * `[safety] max_scan_points` (a violation of its own), later scans are not
 * expanded.
 */
export function walkWrites(
  steps: Step[],
  facts: Facts,
): { targets: Target[]; changes: PlannedChange[] } {
  const targets: Target[] = [];
  const changes: PlannedChange[] = [];
  const expected = new Map<string, Value | null>(Object.entries(facts.live));
  let points = 0;
  for (const { where, action, rollback } of steps) {
    if (action.type === "scan") points += action.steps;
    if (action.type !== "write" && action.type !== "scan") continue;
    const device = action.type === "write" ? action.device : action.writeDevice;
    const info = facts.info.get(device);
    if (!info?.exists) continue;
    if (action.type === "scan" && points > facts.policy.maxScanPoints) continue;
    const from = expected.get(device) ?? null;
    if (action.type === "write") {
      targets.push({ where, info, from, values: [action.value], scan: false });
      changes.push({
        where,
        kind: "write",
        device,
        units: info.units,
        from,
        to: action.value,
        delta: typeof from === "number" && typeof action.value === "number"
          ? action.value - from
          : undefined,
        reason: action.reason,
        rollback,
      });
      expected.set(device, action.value);
    } else {
      const values = scanPoints(action);
      targets.push({ where, info, from, values, scan: true });
      changes.push({
        where,
        kind: "scan",
        device,
        units: info.units,
        from,
        first: action.start,
        to: action.stop,
        delta: typeof from === "number" ? action.stop - from : undefined,
        points: values.length,
        rollback,
      });
      expected.set(device, action.stop);
    }
  }
  return { targets, changes };
}
