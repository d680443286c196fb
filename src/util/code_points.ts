/**
 * Code points described for people: `U+0421 CYRILLIC CAPITAL LETTER ES`, and
 * the ASCII a look-alike name reads as. A small table of the characters that
 * pass for ASCII or hide (Cyrillic and Greek capitals and small letters that
 * look Latin, fullwidth forms, the long s, Kelvin and Ångström signs,
 * invisible and bidi characters); other code points are named by number only.
 *
 * @module
 */
import { escapeCodePoint } from "./untrusted_text.ts";

import lookAlikes from "./look_alikes.json" with { type: "json" };

/** Code point → [Unicode name, the ASCII it passes for ("" when it is invisible)]. */
const LOOK_ALIKES = new Map<number, readonly [string, string]>();
for (const { prefix, rows } of lookAlikes.groups) {
  for (const [hex = "", name = "", ascii = ""] of rows) {
    LOOK_ALIKES.set(parseInt(hex, 16), [`${prefix}${name}`, ascii]);
  }
}

/** `U+0421` — at least four hex digits, upper case. */
export function codePointLabel(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** `U+0421 CYRILLIC CAPITAL LETTER ES`, or `U+XXXX` alone when the name is not in the table. */
export function describeCodePoint(cp: number): string {
  const known = LOOK_ALIKES.get(cp);
  if (known) return `${codePointLabel(cp)} ${known[0]}`;
  if (cp >= 0xff01 && cp <= 0xff5e) return `${codePointLabel(cp)} FULLWIDTH FORM`;
  return codePointLabel(cp);
}

/**
 * The ASCII `name` reads as: look-alikes replaced by their ASCII letter,
 * fullwidth forms by their ASCII form, invisible characters dropped.
 * Undefined when some character has no ASCII reading.
 */
export function asciiReading(name: string): string | undefined {
  let out = "";
  for (const ch of name) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp >= 0x21 && cp <= 0x7e) out += ch;
    else if (cp >= 0xff01 && cp <= 0xff5e) out += String.fromCodePoint(cp - 0xfee0);
    else {
      const known = LOOK_ALIKES.get(cp);
      if (known === undefined || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return undefined;
      out += known[1];
    }
  }
  return out;
}

/** `name` with every character outside printable ASCII as an escape, so no two names print alike. */
export function asciiEscaped(name: string): string {
  let out = "";
  for (const ch of name) {
    const cp = ch.codePointAt(0) ?? 0;
    out += cp >= 0x21 && cp <= 0x7e ? ch : escapeCodePoint(cp);
  }
  return out;
}
