/**
 * How the limits file's names and patterns are read: ASCII-only case
 * folding, `*`/`?` wildcards, and which patterns are catch-alls.
 *
 * @module
 */

/** Upper-cases ASCII letters only: `ſ`, `ı` and the Kelvin sign stay what they are. */
export function asciiUpper(s: string): string {
  return s.replace(/[a-z]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 32));
}

/** A wildcard pattern as an anchored, case-sensitive RegExp: `*` any run, `?` one character. */
export function patternRegExp(pattern: string): RegExp {
  const body = [...pattern].map((c) =>
    c === "*" ? ".*" : c === "?" ? "." : SPECIAL.includes(c) ? `\\${c}` : c
  ).join("");
  return new RegExp(`^${body}$`, "su");
}

const SPECIAL = "\\^$.|?*+()[]{}";

export const isPattern = (name: string) => /[*?]/.test(name);

/**
 * True when a pattern's wildcard spans the part of a name that tells devices
 * apart: a wildcard in the first name segment (`*`, `*:SETPT`, `SR*`);
 * nothing fixed after that segment but separators (`SR:*`, or `sr/*`); or a
 * `*` in the second segment, the family, or a second segment of `?` only
 * (`BTS:*T` reaches `BTS:SEPTUM:CURRENT`; `SR:*:H01:SETPT` every family's
 * H01). A `*` further on, after a fixed subsystem and family
 * (`LINAC:COR:*:SETPT`), ranges over one family's members; a `?` beside
 * fixed letters (`RING:Q?:CURRENT`) over a few named families.
 */
export function isCatchAll(pattern: string): boolean {
  const [first = "", second] = pattern.split(/[:/]/);
  const rest = pattern.slice(first.length + 1);
  if (isPattern(first) || !/[^*?:/]/.test(rest)) return true;
  return second !== undefined && (second.includes("*") || !/[^?]/.test(second));
}

/** "U+0131": a code point as the messages name it. */
export function codePoint(c: string): string {
  return `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
}
