/**
 * Time arguments of tools and commands: ISO-8601 (UTC when no zone is
 * given), "now", or a relative "-30m" / "-8h" / "-2d" before now.
 *
 * @module
 */

const RELATIVE = /^-(\d+(?:\.\d+)?)\s*(s|m|h|d)$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** Milliseconds since the epoch, or a RangeError saying what is accepted. */
export function resolveTime(text: string, nowMs: number, what = "time"): number {
  const s = text.trim();
  if (s === "now") return nowMs;
  const rel = RELATIVE.exec(s);
  if (rel) return nowMs - Number(rel[1]) * UNIT_MS[rel[2] as keyof typeof UNIT_MS];
  const iso = ISO.exec(s);
  if (iso) {
    const zoned = iso[1] ? s : `${s.length === 10 ? `${s}T00:00:00` : s}Z`;
    const ms = Date.parse(zoned.replace(" ", "T"));
    if (Number.isFinite(ms)) return ms;
  }
  throw new RangeError(
    `${what} "${text}" is not a time: use ISO-8601 like 2026-11-20T22:00:00Z, "now", or "-8h"`,
  );
}

/** Resolves a from/to pair, defaulting to the last `defaultHours` hours. */
export function resolveRange(
  from: string | undefined,
  to: string | undefined,
  nowMs: number,
  defaultHours = 24,
): { from: string; to: string } {
  const toMs = to === undefined ? nowMs : resolveTime(to, nowMs, "to");
  const fromMs = from === undefined
    ? toMs - defaultHours * 3_600_000
    : resolveTime(from, nowMs, "from");
  if (fromMs >= toMs) {
    throw new RangeError(
      `time range is empty: from ${new Date(fromMs).toISOString()} is not before to ${
        new Date(toMs).toISOString()
      }`,
    );
  }
  return { from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() };
}
