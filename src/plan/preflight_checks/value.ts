/**
 * The checks of one value written to one device, from the value it has
 * before: `writes_enabled`, `writable`, `has_limits`, `value_type`,
 * `limits_complete`, `within_limits`, `max_step`, in that order. The first
 * five are gates: when one fails, the later ones are not asked (their
 * messages would only repeat it).
 *
 * @module
 */
import type { DeviceInfo, Value } from "../../adapters/adapter.ts";
import type { LimitEntry } from "../../safety/limits.ts";
import type { PreflightCheck, SafetyPolicy } from "../../plan_model/preflighted.ts";
import { round6 } from "../../util/misc.ts";

/** One value to check: the device, the value, what the device holds before, its limits entry. */
export interface ValueInput {
  d: DeviceInfo;
  value: number | string;
  from: Value | null;
  limit: LimitEntry | undefined;
  policy: SafetyPolicy;
}

/** A value input whose device has a limits entry. */
export type LimitedInput = ValueInput & { limit: LimitEntry };

/** What one check found wrong. */
export interface Problem {
  check: PreflightCheck;
  message: string;
}

/** `writes_enabled`: the kill switch (or what turned writes off) refuses every write. */
export function writesEnabled({ policy }: ValueInput): string[] {
  if (policy.writesEnabled) return [];
  return [
    policy.writesDisabledBy ??
      "writes are disabled by the kill switch ([safety] writes_enabled = false)",
  ];
}

/** `writable`: the device itself accepts writes. */
export function writable({ d }: ValueInput): string[] {
  return d.writable ? [] : [`${d.device} is read-only`];
}

/** `has_limits`: the limits file has an entry for the device, not marked `writable = false`. */
export function hasLimits({ d, limit, policy }: ValueInput): string[] {
  if (!limit) {
    return [
      `${d.device} has no entry in ${policy.limitsSource}; a device without limits cannot be written`,
    ];
  }
  if (limit.writable === false) {
    return [`${d.device} is marked not writable in ${policy.limitsSource} (${limit.pattern})`];
  }
  return [];
}

/** `value_type`: a finite number for a number or waveform device, a string for any other. */
export function valueType({ d, value }: LimitedInput): string[] {
  if (isNumeric(d)) {
    if (typeof value !== "number") {
      return [`value ${JSON.stringify(value)} is a string; ${d.device} takes a number`];
    }
    return Number.isFinite(value) ? [] : [`value ${value} is not a finite number`];
  }
  return typeof value === "string"
    ? []
    : [`value ${value} is a number; ${d.device} takes one of its labels or a string`];
}

/**
 * `limits_complete`: a number needs min, max and max_step; an enum needs
 * values (its entry's list of labels, whatever else the entry says); free
 * text needs values (or `unbounded`).
 */
export function limitsComplete({ d, limit, policy }: LimitedInput): string[] {
  if (isNumeric(d)) {
    if (
      limit.unbounded !== true &&
      (limit.min === undefined || limit.max === undefined || limit.max_step === undefined)
    ) {
      return [
        `${d.device} is a number but its entry in ${policy.limitsSource} (${limit.pattern}) ` +
        "lacks min, max or max_step; a number is written only within all three",
      ];
    }
    return [];
  }
  if (d.type === "enum" && limit.values === undefined) {
    // A numeric entry (or unbounded) opens no label: an enum takes only what the limits list.
    return [
      `${d.device} is an enum${d.labels?.length ? ` (${d.labels.join(", ")})` : ""} but its ` +
      `entry in ${policy.limitsSource} (${limit.pattern}) lists no values; an enum device ` +
      "takes only the labels its entry lists in values",
    ];
  }
  const allowed = limit.values;
  if (!allowed && limit.unbounded !== true) {
    return [
      `${d.device} takes free text but its entry in ${policy.limitsSource} (${limit.pattern}) ` +
      "lists no values; give values, or unbounded = true to allow any text",
    ];
  }
  if (allowed?.length === 0) {
    return [`no value may be written to ${d.device}: the entries ${limit.pattern} share no values`];
  }
  return [];
}

/** `within_limits`: between the tighter of the file's and the device's min and max, or a listed value. */
export function withinLimits({ d, value, limit, policy }: LimitedInput): string[] {
  if (typeof value === "string") {
    const allowed = limit.values;
    if (allowed && !allowed.includes(value)) {
      return [`value "${value}" is not one of ${allowed.join(", ")}`];
    }
    // A label the limits list but the device does not have is not a label of it.
    if (d.type === "enum" && d.labels && !d.labels.includes(value)) {
      return [`value "${value}" is not one of ${d.device}'s labels (${d.labels.join(", ")})`];
    }
    return [];
  }
  const out: string[] = [];
  const lo = maxDefined(limit.min, d.limits?.min);
  const hi = minDefined(limit.max, d.limits?.max);
  const unit = d.units ? ` ${d.units}` : "";
  const source = (used: number, fromLimits: number | undefined) =>
    used === fromLimits ? `${policy.limitsSource}: ${limit.pattern}` : "the device's own limit";
  if (lo !== undefined && value < lo) {
    out.push(`value ${value}${unit} is below the minimum ${lo}${unit} (${source(lo, limit.min)})`);
  }
  if (hi !== undefined && value > hi) {
    out.push(`value ${value}${unit} is above the maximum ${hi}${unit} (${source(hi, limit.max)})`);
  }
  return out;
}

/** `max_step`: the step from the value before is at most the entry's max_step. */
export function maxStep({ d, value, from, limit, policy }: LimitedInput): string[] {
  // A number read as text: the step cannot be checked (unreadable is current_value_known's).
  if (
    limit.max_step !== undefined && typeof value === "number" && from !== null &&
    typeof from !== "number"
  ) {
    return [
      `${d.device} reads ${JSON.stringify(from)}, not a number, so the step to ${
        round6(value)
      } cannot be checked against max_step ${limit.max_step} (${policy.limitsSource}: ${limit.pattern})`,
    ];
  }
  if (
    limit.max_step === undefined || typeof value !== "number" || typeof from !== "number" ||
    Math.abs(value - from) <= limit.max_step + 1e-12
  ) {
    return [];
  }
  const unit = d.units ? ` ${d.units}` : "";
  return [
    `step of ${round6(value - from)}${unit} from ${
      round6(from)
    }${unit} exceeds max_step ${limit.max_step}${unit} (${policy.limitsSource}: ${limit.pattern})`,
  ];
}

/** Checks that need no limits entry, in order; each is a gate. */
const BEFORE_LIMITS = [
  ["writes_enabled", writesEnabled],
  ["writable", writable],
  ["has_limits", hasLimits],
] as const;

/** Checks of the value against the entry, in order; the first two are gates. */
const AGAINST_LIMITS = [
  ["value_type", valueType, true],
  ["limits_complete", limitsComplete, true],
  ["within_limits", withinLimits, false],
  ["max_step", maxStep, false],
] as const;

/** Why `value` may not be written to the device, from `from`; empty when it may. */
export function checkValue(
  d: DeviceInfo,
  value: number | string,
  from: Value | null,
  limit: LimitEntry | undefined,
  policy: SafetyPolicy,
): Problem[] {
  const input: ValueInput = { d, value, from, limit, policy };
  for (const [check, run] of BEFORE_LIMITS) {
    const found = run(input);
    if (found.length) return found.map((message) => ({ check, message }));
  }
  if (!limit) return []; // has_limits refused it above
  const limited: LimitedInput = { ...input, limit };
  const out: Problem[] = [];
  for (const [check, run, gate] of AGAINST_LIMITS) {
    const found = run(limited).map((message) => ({ check, message }));
    if (gate && found.length) return found;
    out.push(...found);
  }
  return out;
}

/** Readback tolerance: the limits file's, else one unit in the device's last displayed digit. */
export function tolerance(d: DeviceInfo, limit: LimitEntry | undefined): number {
  if (limit?.tolerance !== undefined) return limit.tolerance;
  return d.precision !== undefined ? 10 ** -d.precision : 1e-6;
}

function isNumeric(d: DeviceInfo): boolean {
  return d.type === "number" || d.type === "waveform";
}

function maxDefined(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}
