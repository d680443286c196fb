/**
 * `*` and `?` wildcards matched over a whole text, case-insensitively, in
 * time bounded by the product of the two lengths. A wildcard turned into a
 * regular expression (`.*` and `.`) backtracks: `*?*?…*?X` against a name of
 * 40 characters tries every way of placing its wildcards, for hours, and
 * nothing can interrupt it. Here a `*` is only ever resumed from the last one
 * seen, which is enough for `*` and `?` and never backtracks further.
 *
 * @example
 * ```ts
 * wildcard("ring:bpm:*:x").test("RING:BPM:01:X"); // true
 * ```
 *
 * @module
 */

/** A wildcard pattern ready to test texts against. */
export interface Wildcard {
  test(text: string): boolean;
}

const STAR = 42;
const QUESTION = 63;

/** A character code folded to lower case (ASCII directly, other letters as the language does). */
function fold(c: number): number {
  if (c >= 65 && c <= 90) return c + 32;
  if (c < 128) return c;
  const lower = String.fromCharCode(c).toLowerCase();
  return lower.length === 1 ? lower.charCodeAt(0) : c;
}

/** `pattern` (`*`: any run of characters, `?`: any one) as a whole-text, case-insensitive test. */
export function wildcard(pattern: string): Wildcard {
  const p = new Uint16Array(pattern.length);
  for (let k = 0; k < pattern.length; k++) p[k] = fold(pattern.charCodeAt(k));
  // Characters other than `*` and `?` the text must hold, at least, to match.
  let fixed = 0;
  for (const c of p) if (c !== STAR) fixed++;
  return {
    test(text: string): boolean {
      const n = text.length;
      if (n < fixed) return false;
      let i = 0, j = 0, star = -1, resume = 0;
      while (j < n) {
        const c = i < p.length ? p[i] as number : -1;
        if (c === QUESTION || (c !== STAR && c >= 0 && c === fold(text.charCodeAt(j)))) {
          i++;
          j++;
        } else if (c === STAR) {
          star = i++;
          resume = j;
        } else if (star >= 0) {
          // The last `*` takes one character more; those before it keep what they took.
          i = star + 1;
          j = ++resume;
        } else return false;
      }
      while (i < p.length && p[i] === STAR) i++;
      return i === p.length;
    },
  };
}
