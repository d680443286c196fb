/**
 * Whether a search text is a pattern or an operator's words. The rule, in
 * order: `/…/` is a regular expression; text with `*` or `?` is a wildcard
 * pattern; one word holding a `:` (a name or part of one, `RING:BPM`) is a
 * pattern matched as a substring of names; anything else is informal.
 *
 * @module
 */

/** How a search text is read. */
export type SearchMode = "regex" | "pattern" | "informal";

/** The mode the rule above gives `text`. */
export function searchModeOf(text: string): SearchMode {
  const t = text.trim();
  if (t.length > 2 && t.startsWith("/") && t.lastIndexOf("/") > 0) return "regex";
  if (/[*?]/.test(t)) return "pattern";
  if (!/\s/.test(t) && t.includes(":")) return "pattern";
  return "informal";
}
