/**
 * Argument parsing for tool calls: JSON text → coerced, validated arguments,
 * or one message the model can act on.
 *
 * @module
 */
import type { z } from "zod";
import { valueAt } from "../util/misc.ts";
import { errorMessage } from "../util/errors.ts";

export type Parsed = { ok: true; args: unknown } | { ok: false; error: string };

/**
 * Deepest nesting of arrays and objects a tool call's arguments may have (a
 * plan's is 4). Deeper JSON parses, but the copy and checks that follow
 * recurse: a million levels from a hostile model ended the turn in a stack
 * overflow the program took for a bug.
 */
export const MAX_ARG_DEPTH = 64;

/** Parses the model's raw argument text. Empty text means no arguments. */
export function parseJsonArgs(raw: string): Parsed {
  if (raw.trim() === "") return { ok: true, args: {} };
  if (nestedDeeperThan(raw, MAX_ARG_DEPTH)) {
    return {
      ok: false,
      error: `arguments are nested more than ${MAX_ARG_DEPTH} levels deep; ` +
        "send one flat JSON object that matches the tool's schema",
    };
  }
  try {
    return { ok: true, args: JSON.parse(raw) };
  } catch (e) {
    const shown = raw.length > 200 ? `${raw.slice(0, 200)}…` : raw;
    return {
      ok: false,
      error: `arguments are not valid JSON (${errorMessage(e)}): ${shown}; ` +
        "send one JSON object that matches the tool's schema",
    };
  }
}

/** Whether the JSON text `raw` opens more than `max` arrays or objects inside each other. */
function nestedDeeperThan(raw: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * Validates against the schema. Models often send "3" for 3, "true" for true,
 * or one string where a list is expected; those are coerced at the reported
 * path and validation runs again.
 */
export function validateArgs(schema: z.ZodType, input: unknown): Parsed {
  let value = structuredClone(input);
  for (let round = 0; round < 20; round++) {
    const result = schema.safeParse(value);
    if (result.success) return { ok: true, args: result.data };
    let changed = false;
    for (const issue of result.error.issues) {
      if (issue.code !== "invalid_type") continue;
      const replaced = coerce(valueAt(value, issue.path), issue.expected);
      if (replaced === undefined) continue;
      value = setAt(value, issue.path, replaced.value);
      changed = true;
    }
    if (!changed) return { ok: false, error: describeIssues(result.error.issues, value) };
  }
  return { ok: false, error: "arguments could not be validated" };
}

function coerce(v: unknown, expected: string): { value: unknown } | undefined {
  if (expected === "number" || expected === "int") {
    if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) {
      return { value: Number(v) };
    }
  } else if (expected === "boolean") {
    if (v === "true" || v === "false") return { value: v === "true" };
  } else if (expected === "array") {
    if (typeof v === "string" || typeof v === "number") return { value: [v] };
  } else if (expected === "string") {
    if (typeof v === "number" || typeof v === "boolean") return { value: String(v) };
  }
  return undefined;
}

function setAt(root: unknown, path: readonly PropertyKey[], value: unknown): unknown {
  if (path.length === 0) return value;
  let v = root as Record<PropertyKey, unknown>;
  for (const k of path.slice(0, -1)) v = v[k] as Record<PropertyKey, unknown>;
  v[path[path.length - 1] as PropertyKey] = value;
  return root;
}

function describeIssues(issues: z.core.$ZodIssue[], value: unknown): string {
  const parts = issues.slice(0, 5).map((issue) => {
    const where = issue.path.length ? issue.path.map(String).join(".") : "arguments";
    if (issue.code === "invalid_type") {
      const got = valueAt(value, issue.path);
      const gotText = got === undefined ? "nothing" : Array.isArray(got) ? "array" : typeof got;
      return `${where}: expected ${issue.expected}, got ${gotText}`;
    }
    if (issue.code === "unrecognized_keys") {
      return `${where}: unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.join(", ")}`;
    }
    return `${where}: ${issue.message}`;
  });
  const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : "";
  return `invalid arguments: ${parts.join("; ")}${more}`;
}
