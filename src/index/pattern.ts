/**
 * Narrowing a wildcard pattern to candidate devices through the name-segment
 * postings, so a pattern over 10^6 names tests only the names that can match.
 * The pattern's regular expression still decides; this only picks whom to test.
 *
 * @module
 */
import { SEPARATORS } from "./data.ts";

/** What a literal piece of a pattern says about one name segment. */
export interface SegmentConstraint {
  text: string;
  how: "equals" | "startsWith" | "endsWith" | "contains";
}

/**
 * The constraints a `*`/`?` pattern puts on name segments (upper case): each
 * literal run between wildcards is split at separators; a piece bounded by a
 * separator or the pattern's edge on both sides is a whole segment.
 *
 * @example
 * ```ts
 * segmentConstraints("LINAC:COR:H*:SETPT");
 * // LINAC equals, COR equals, H startsWith, SETPT equals
 * ```
 */
export function segmentConstraints(pattern: string): SegmentConstraint[] {
  const out: SegmentConstraint[] = [];
  const p = pattern.toUpperCase();
  const runs = p.split(/[*?]+/);
  runs.forEach((run, r) => {
    if (run === "") return;
    const atStart = r === 0;
    const atEnd = r === runs.length - 1;
    const pieces = run.split(SEPARATORS);
    pieces.forEach((text, j) => {
      if (text === "") return;
      const left = j > 0 || atStart;
      const right = j < pieces.length - 1 || atEnd;
      const how = left && right ? "equals" : left ? "startsWith" : right ? "endsWith" : "contains";
      out.push({ text, how });
    });
  });
  return out;
}

/** True when `segment` satisfies `c`. */
export function satisfies(segment: string, c: SegmentConstraint): boolean {
  switch (c.how) {
    case "equals":
      return segment === c.text;
    case "startsWith":
      return segment.startsWith(c.text);
    case "endsWith":
      return segment.endsWith(c.text);
    case "contains":
      return segment.includes(c.text);
  }
}
