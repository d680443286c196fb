/**
 * JSON read from disk is parsed with a schema at the boundary: a file the
 * program wrote comes back typed, and a damaged or foreign one is named in
 * one line (what it is not, where, why) instead of failing later, far away.
 *
 * @module
 */
import type { z } from "zod";
import { errorMessage } from "./errors.ts";

/** The value, or why the text is not JSON of the schema (one line, no file name). */
export type JsonRead<T> = { ok: true; value: T } | { ok: false; why: string };

/**
 * Parses `text` as JSON and checks it against `schema`.
 *
 * @example
 * ```ts
 * const read = readJson(z.object({ at: z.string() }), '{"at":1}');
 * // { ok: false, why: "at: expected string, got number" }
 * ```
 */
export function readJson<S extends z.ZodType>(schema: S, text: string): JsonRead<z.output<S>> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, why: `not JSON: ${errorMessage(e).split("\n")[0]}` };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, why: firstIssue(parsed.error.issues, json) };
}

/** A file, or a line of one, that is not what the program wrote. */
export class CorruptFileError extends Error {
  override name = "CorruptFileError";
}

/**
 * Like {@link readJson}, but throws a {@link CorruptFileError} saying
 * `<where>: not <what> (<why>); <fix>`, e.g. "sessions/a.jsonl:3: not a
 * session record (m.role: …); the file is left as it is: …".
 */
export function parseJsonFile<S extends z.ZodType>(
  schema: S,
  text: string,
  at: { where: string; what: string; fix: string },
): z.output<S> {
  const read = readJson(schema, text);
  if (read.ok) return read.value;
  throw new CorruptFileError(`${at.where}: not ${at.what} (${read.why}); ${at.fix}`);
}

function firstIssue(issues: readonly z.core.$ZodIssue[], json: unknown): string {
  const issue = issues[0];
  if (!issue) return "does not match";
  const where = issue.path.length ? `${issue.path.map(String).join(".")}: ` : "";
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
  if (issue.code === "invalid_type") {
    const got = valueAt(json, issue.path);
    const gotText = got === undefined
      ? "nothing"
      : got === null
      ? "null"
      : Array.isArray(got)
      ? "array"
      : typeof got;
    return `${where}expected ${issue.expected}, got ${gotText}${more}`;
  }
  const message = issue.message.split("\n")[0] ?? "";
  return `${where}${message.charAt(0).toLowerCase()}${message.slice(1)}${more}`;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}
