/**
 * The four primitives of every procedure — READ, WRITE, WAIT, SCAN — and a
 * plan built from them, with an optional rollback. Plans arrive in the flat
 * shape (`{type: "write", device, value, reason}`) or the nested one models
 * also produce (`{type: "write", params: {...}}`); both normalise to the flat
 * shape. The hash covers the content only, never live values.
 *
 * @module
 */
import { z } from "zod";
import { canonicalJson, sha256Hex } from "../util/hash.ts";
import { valueAt } from "../util/misc.ts";
import { deviceNameProblem, freeTextProblem } from "./text_rules.ts";

/** Free-text caps, in characters: what an operator reads in one table cell or heading. */
export const TEXT_LIMITS = { description: 1000, reason: 300, label: 200, waitReason: 200 } as const;

/**
 * A device name: printable ASCII only (U+0021–U+007E), so what the operator
 * reads is what is written; a look-alike or invisible character is refused
 * with its code point named. Tools that take device names use it too.
 */
export const DeviceName = z.string().min(1).max(256).refine(
  (name) => deviceNameProblem(name) === undefined,
  { error: (issue) => deviceNameProblem(String(issue.input)) },
);

const device = DeviceName.describe("Exact device name, e.g. LINAC:COR:H01:SETPT");

/** One line of free text for the operator, at most `max` characters, nothing invisible. */
function freeText(max: number) {
  return z.string().max(max).refine(
    (text) => freeTextProblem(text) === undefined,
    { error: (issue) => freeTextProblem(String(issue.input)) },
  );
}

/**
 * The longest WAIT: one week, the most `[safety] max_plan_seconds` allows
 * (preflight also holds the whole plan to that setting).
 */
export const MAX_WAIT_SECONDS = 7 * 24 * 3600;
/** The longest settling time at one scan point: one hour. */
export const MAX_DWELL_SECONDS = 3600;

/** Numbers or strings as given; preflight checks them against the device's type. */
const value = z.union([z.number(), z.string()]).describe("Value to set, in the device's units");

export const ReadAction = z.strictObject({
  type: z.literal("read"),
  devices: z.array(device).min(1).max(200).describe("Devices to read, in one batch"),
  label: freeText(TEXT_LIMITS.label).optional().describe("What this read is for"),
});

export const WriteAction = z.strictObject({
  type: z.literal("write"),
  device,
  value,
  reason: freeText(TEXT_LIMITS.reason).min(1).describe(
    "Why this value, for the operator approving it",
  ),
});

export const WaitAction = z.strictObject({
  type: z.literal("wait"),
  seconds: z.number().min(0).max(MAX_WAIT_SECONDS).describe(
    `How long to wait, at most ${MAX_WAIT_SECONDS} s`,
  ),
  reason: freeText(TEXT_LIMITS.waitReason).optional(),
});

export const ScanAction = z.strictObject({
  type: z.literal("scan"),
  writeDevice: device.describe("The device stepped through the scan"),
  start: z.number().describe("First setpoint"),
  stop: z.number().describe("Last setpoint"),
  steps: z.int().min(2).max(100_000).describe("Number of setpoints, start and stop included"),
  readDevices: z.array(device).min(1).max(200).describe("Devices read at every step"),
  dwellSeconds: z.number().min(0).max(MAX_DWELL_SECONDS).describe(
    `Settling time after each setpoint, before reading, at most ${MAX_DWELL_SECONDS} s`,
  ),
});

export const Action = z.discriminatedUnion("type", [
  ReadAction,
  WriteAction,
  WaitAction,
  ScanAction,
]);
export type Action = z.infer<typeof Action>;
export type WriteAction = z.infer<typeof WriteAction>;
export type ScanAction = z.infer<typeof ScanAction>;

export const Plan = z.strictObject({
  description: freeText(TEXT_LIMITS.description).min(1).describe(
    "What the plan does and why, in one or two sentences",
  ),
  actions: z.array(Action).min(1).max(500).describe("The steps, run in order"),
  rollback: z.array(Action).max(500).optional().describe(
    "Steps run after the plan ends, whether it completed or failed (e.g. restore the original value). " +
      "Without a rollback, a failed or aborted plan restores every device it wrote to its original value.",
  ),
  abortOnSeverity: z.enum(["MAJOR", "INVALID"]).optional().describe(
    "Abort (and restore) when a device read during the plan reaches this alarm severity or worse",
  ),
});
export type Plan = z.infer<typeof Plan>;

/**
 * Moves `params` of a nested action up into the action itself. Anything
 * else is passed through for the schema to judge.
 */
function flattenAction(raw: unknown): unknown {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
  const { params, ...rest } = raw as Record<string, unknown>;
  if (params === undefined) return raw;
  if (params === null || typeof params !== "object" || Array.isArray(params)) return raw;
  return { ...rest, ...(params as Record<string, unknown>) };
}

/** Accepts the flat and the nested action shapes; snake_case scan fields too. */
export function normalisePlanInput(raw: unknown): unknown {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
  const plan = { ...(raw as Record<string, unknown>) };
  for (const key of ["actions", "rollback"] as const) {
    if (Array.isArray(plan[key])) {
      plan[key] = (plan[key] as unknown[]).map((a) => renameSnake(flattenAction(a)));
    }
  }
  if ("abort_on_severity" in plan && !("abortOnSeverity" in plan)) {
    plan.abortOnSeverity = plan.abort_on_severity;
    delete plan.abort_on_severity;
  }
  return plan;
}

const SNAKE: Record<string, string> = {
  write_device: "writeDevice",
  read_devices: "readDevices",
  dwell_seconds: "dwellSeconds",
  dwell: "dwellSeconds",
};

function renameSnake(raw: unknown): unknown {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) out[SNAKE[k] ?? k] = v;
  return out;
}

export type ParsedPlan = { ok: true; plan: Plan } | { ok: false; errors: string[] };

/** Validates a plan in either shape; errors name the action index and field. */
export function parsePlan(raw: unknown): ParsedPlan {
  const input = normalisePlanInput(raw);
  const result = Plan.safeParse(input);
  if (result.success) return { ok: true, plan: result.data };
  return {
    ok: false,
    errors: result.error.issues.slice(0, 20).map((i) => {
      const where = i.path.length
        ? i.path.map((k) => (typeof k === "number" ? `[${k}]` : `.${String(k)}`)).join("")
          .replace(/^\./, "")
        : "plan";
      const got = valueAt(input, i.path);
      if (typeof got === "number" && !Number.isFinite(got)) {
        return `${where}: ${got} is not a finite number`;
      }
      if (typeof got === "number" && i.code === "too_big" && /seconds$/i.test(where)) {
        return `${where}: ${got} s is above the bound of ${i.maximum} s`;
      }
      if (i.code === "too_big" && typeof got === "string") {
        return `${where}: ${[...got].length} characters; at most ${String(i.maximum)}`;
      }
      if (i.code === "unrecognized_keys") {
        return `${where || "plan"}: unknown field ${i.keys.join(", ")}`;
      }
      if (i.code === "invalid_union" && where.endsWith(".type")) {
        return `${where}: unknown action type ${
          JSON.stringify(got)
        }; use read, write, wait or scan`;
      }
      return `${where}: ${i.message}`;
    }),
  };
}

/** SHA-256 (hex) of the plan's canonical JSON: description, actions, rollback, abortOnSeverity. */
export function planHash(plan: Plan): Promise<string> {
  return sha256Hex(canonicalJson(plan));
}

/** The setpoints a scan visits, start and stop included. */
export function scanPoints(scan: ScanAction): number[] {
  const step = (scan.stop - scan.start) / (scan.steps - 1);
  return Array.from(
    { length: scan.steps },
    (_, i) => (i === scan.steps - 1 ? scan.stop : scan.start + i * step),
  );
}

/** True when the plan changes nothing: no WRITE and no SCAN, in actions or rollback. */
export function isReadOnly(plan: Plan): boolean {
  return [...plan.actions, ...(plan.rollback ?? [])].every((a) =>
    a.type === "read" || a.type === "wait"
  );
}
