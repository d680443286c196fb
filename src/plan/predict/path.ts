/**
 * The plan as a prediction walks it: every write and every scan point in
 * order, the waits and dwells between them, then what follows the plan's
 * actions — its rollback when it has one, else the restores a stopped plan
 * makes (each written device back to its original, newest first, in steps
 * no larger than max_step), the path a deviation's stop takes. Restores are
 * left out when they only retrace the plan's own states (each device
 * written once, no scan).
 *
 * @module
 */
import type { Value } from "../../adapters/adapter.ts";
import { type Action, type Plan, scanPoints } from "../../plan_model/plan.ts";
import type { LimitsTable } from "../../safety/limits.ts";

/** One event of the path; `sample` is the key the executor compares at, `label` says where. */
export type PathEvent =
  | {
    kind: "write";
    device: string;
    value: number | string;
    label: string;
    /** After the write settles the state is sampled under this key (absent: not sampled). */
    sample?: string;
    /** Part of what follows the actions (rollback or restores), not compared while running. */
    after: boolean;
  }
  | {
    kind: "wait";
    seconds: number;
    label: string;
    sample?: string;
    after: boolean;
    /** A scan's dwell (sampled once at its end) rather than a WAIT. */
    dwell: boolean;
  };

/** The path of `plan` from the written devices' values before it (`live`). */
export function planPath(
  plan: Plan,
  live: Record<string, Value | null>,
  limits: LimitsTable,
): PathEvent[] {
  const path = plan.actions.flatMap((a, i) => actionPath(a, `actions[${i}]`, false));
  const rollback = plan.rollback ?? [];
  if (rollback.length) {
    path.push(...rollback.flatMap((a, i) => actionPath(a, `rollback[${i}]`, true)));
  } else if (needsRestores(plan.actions)) {
    path.push(...restorePath(path, live, limits));
  }
  return path;
}

function actionPath(a: Action, where: string, after: boolean): PathEvent[] {
  switch (a.type) {
    case "read":
      return [];
    case "write":
      return [{
        kind: "write",
        device: a.device,
        value: a.value,
        label: where,
        sample: where,
        after,
      }];
    case "wait":
      return [{
        kind: "wait",
        seconds: a.seconds,
        label: where,
        sample: where,
        after,
        dwell: false,
      }];
    case "scan":
      return scanPoints(a).flatMap((value, k): PathEvent[] => {
        const label = `${where} point ${k + 1}`;
        return [
          { kind: "write", device: a.writeDevice, value, label, after },
          {
            kind: "wait",
            seconds: a.dwellSeconds,
            label,
            sample: `${where}#${k + 1}`,
            after,
            dwell: true,
          },
        ];
      });
  }
}

/** Restores retrace the plan's own states when each device is written once and nothing is scanned. */
function needsRestores(actions: Action[]): boolean {
  if (actions.some((a) => a.type === "scan")) return true;
  const written = actions.flatMap((a) => (a.type === "write" ? [a.device] : []));
  return new Set(written).size !== written.length;
}

/** Every written device back to its original, newest first, ramped by its max_step. */
function restorePath(
  forward: PathEvent[],
  live: Record<string, Value | null>,
  limits: LimitsTable,
): PathEvent[] {
  const left = new Map<string, number | string>();
  for (const e of forward) if (e.kind === "write") left.set(e.device, e.value);
  const out: PathEvent[] = [];
  for (const [device, from] of [...left].reverse()) {
    const original = live[device];
    if (typeof original !== "number" && typeof original !== "string") continue;
    const steps = ramp(from, original, limits.lookup(device)?.max_step);
    steps.forEach((value, k) => {
      const label = `restore of ${device}${steps.length > 1 ? ` step ${k + 1}` : ""}`;
      out.push({ kind: "write", device, value, label, sample: label, after: true });
    });
  }
  return out;
}

/** The values a restore writes from `from` to `to`, each step at most `maxStep`. */
function ramp(from: number | string, to: number | string, maxStep?: number): (number | string)[] {
  if (typeof from !== "number" || typeof to !== "number" || maxStep === undefined) return [to];
  if (!(maxStep > 0)) return [to];
  const out: number[] = [];
  let now = from;
  for (let guard = 0; guard < 10_000 && Math.abs(to - now) > maxStep; guard++) {
    now += Math.sign(to - now) * maxStep;
    out.push(now);
  }
  out.push(to);
  return out;
}

/** Every device the path writes, in order of first write. */
export function writtenOn(path: PathEvent[]): string[] {
  return [...new Set(path.flatMap((e) => (e.kind === "write" ? [e.device] : [])))];
}
