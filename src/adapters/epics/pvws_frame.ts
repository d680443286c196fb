/**
 * One text frame from a pvws gateway (spec §a.3–a.4), checked before it is
 * merged: an update whose fields have the wrong types (a value that is an
 * object, a severity that is a number, Base64 that is not Base64) is
 * reported as a malformed frame for that PV, and a frame that is no JSON at
 * all as a malformed frame of the gateway — never read as a value, nor
 * hidden behind "the PV did not connect".
 *
 * @module
 */
import { z } from "zod";
import { mismatch, snippet } from "../reply.ts";

const b64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, "not Base64");
/** Display metadata: numbers, or the text "NaN" for non-finite ones. */
const limit = z.union([z.number(), z.string(), z.null()]).optional();

/** The fields of a PV's update (also the whole of a pvget answer), without `type` and `pv`. */
export const PvFieldsSchema = z.looseObject({
  vtype: z.string().optional(),
  value: z.union([z.number(), z.string(), z.null()]).optional(),
  text: z.string().optional(),
  severity: z.string().optional(),
  seconds: z.number().optional(),
  nanos: z.number().optional(),
  units: z.string().optional(),
  description: z.string().optional(),
  labels: z.array(z.string()).optional(),
  readonly: z.boolean().optional(),
  precision: limit,
  min: limit,
  max: limit,
  warn_low: limit,
  warn_high: limit,
  alarm_low: limit,
  alarm_high: limit,
  b64dbl: b64.optional(),
  b64flt: b64.optional(),
  b64int: b64.optional(),
  b64srt: b64.optional(),
  b64byt: b64.optional(),
});

const UpdateSchema = PvFieldsSchema.extend({ type: z.literal("update"), pv: z.string() });

/** What one frame means to the client. */
export type Frame =
  | { kind: "update"; pv: string; msg: Record<string, unknown> }
  | { kind: "error"; message: string }
  | { kind: "malformed"; pv?: string; why: string }
  | { kind: "other" };

/** Classifies one frame; `malformed.why` says what was wrong, in a few words. */
export function parseFrame(data: unknown): Frame {
  if (typeof data !== "string") return { kind: "malformed", why: "a binary frame" };
  let msg: unknown;
  try {
    msg = JSON.parse(data);
  } catch {
    return { kind: "malformed", why: `text that is not JSON: ${JSON.stringify(snippet(data))}` };
  }
  if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
    return {
      kind: "malformed",
      why: `${Array.isArray(msg) ? "a list" : "JSON"} that is no message`,
    };
  }
  const m = msg as Record<string, unknown>;
  if (m.type === "error") return { kind: "error", message: String(m.message ?? "unknown error") };
  if (typeof m.type !== "string") return { kind: "malformed", why: "a message without a type" };
  if (m.type !== "update") return { kind: "other" };
  const r = UpdateSchema.safeParse(m);
  if (r.success) return { kind: "update", pv: r.data.pv, msg: r.data };
  return {
    kind: "malformed",
    ...(typeof m.pv === "string" ? { pv: m.pv } : {}),
    why: `an update ${mismatch(m, r.error).replace(/^an object /, "")}`,
  };
}
