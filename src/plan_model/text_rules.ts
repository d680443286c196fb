/**
 * What a plan's text may hold, so that the operator reads exactly what runs:
 * device names are printable ASCII (U+0021–U+007E); free text (description,
 * reasons, labels) is one line with no control, bidi, zero-width or other
 * invisible character. Each refusal names the code points by U+XXXX and
 * name, and never shows two names that print alike.
 *
 * @module
 */
import { asciiEscaped, asciiReading, describeCodePoint } from "../util/code_points.ts";
import { unsafeChars } from "../util/untrusted_text.ts";

/** A name of printable ASCII only: the common case, answered by one test. */
const PRINTABLE_ASCII = /^[!-~]*$/;

/** At most this many offending characters are listed in one message. */
const LISTED = 4;

/** Why `name` cannot be a device name, or undefined when it can. */
export function deviceNameProblem(name: string): string | undefined {
  if (PRINTABLE_ASCII.test(name)) return undefined;
  const bad: string[] = [];
  let at = 0;
  for (const ch of name) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp < 0x21 || cp > 0x7e) bad.push(`${describeCodePoint(cp)} at character ${at + 1}`);
    at++;
  }
  if (!bad.length) return undefined;
  const reading = asciiReading(name);
  const suggestion = reading && reading !== name ? `; did you mean "${reading}" (all ASCII)?` : "";
  return `"${asciiEscaped(name)}" holds ${listed(bad)}; device names are printable ASCII ` +
    `(U+0021–U+007E) only${suggestion}`;
}

/** Why `text` cannot be plan free text, or undefined when it can. */
export function freeTextProblem(text: string): string | undefined {
  const bad = unsafeChars(text);
  if (!bad.length) return undefined;
  return `holds ${
    listed(bad.map((b) => `${describeCodePoint(b.codePoint)} at character ${b.at + 1}`))
  }; free text is one line without control, bidi or invisible characters`;
}

function listed(items: string[]): string {
  const head = items.slice(0, LISTED).join(", ");
  return items.length > LISTED ? `${head} and ${items.length - LISTED} more` : head;
}
