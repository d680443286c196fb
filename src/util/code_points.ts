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

/** Code point → [Unicode name, the ASCII it passes for ("" when it is invisible)]. */
const LOOK_ALIKES = new Map<number, readonly [string, string]>();

function table(prefix: string, rows: readonly (readonly [number, string, string])[]): void {
  for (const [cp, name, ascii] of rows) LOOK_ALIKES.set(cp, [`${prefix}${name}`, ascii]);
}

table("CYRILLIC CAPITAL LETTER ", [
  [0x0405, "DZE", "S"],
  [0x0406, "BYELORUSSIAN-UKRAINIAN I", "I"],
  [0x0408, "JE", "J"],
  [0x0410, "A", "A"],
  [0x0412, "VE", "B"],
  [0x0415, "IE", "E"],
  [0x041a, "KA", "K"],
  [0x041c, "EM", "M"],
  [0x041d, "EN", "H"],
  [0x041e, "O", "O"],
  [0x0420, "ER", "P"],
  [0x0421, "ES", "C"],
  [0x0422, "TE", "T"],
  [0x0425, "HA", "X"],
]);
table("CYRILLIC SMALL LETTER ", [
  [0x0430, "A", "a"],
  [0x0435, "IE", "e"],
  [0x043e, "O", "o"],
  [0x0440, "ER", "p"],
  [0x0441, "ES", "c"],
  [0x0443, "U", "y"],
  [0x0445, "HA", "x"],
  [0x0455, "DZE", "s"],
  [0x0456, "BYELORUSSIAN-UKRAINIAN I", "i"],
  [0x0458, "JE", "j"],
]);
table("GREEK CAPITAL LETTER ", [
  [0x0391, "ALPHA", "A"],
  [0x0392, "BETA", "B"],
  [0x0395, "EPSILON", "E"],
  [0x0396, "ZETA", "Z"],
  [0x0397, "ETA", "H"],
  [0x0399, "IOTA", "I"],
  [0x039a, "KAPPA", "K"],
  [0x039c, "MU", "M"],
  [0x039d, "NU", "N"],
  [0x039f, "OMICRON", "O"],
  [0x03a1, "RHO", "P"],
  [0x03a4, "TAU", "T"],
  [0x03a5, "UPSILON", "Y"],
  [0x03a7, "CHI", "X"],
]);
table("", [
  [0x03bf, "GREEK SMALL LETTER OMICRON", "o"],
  [0x017f, "LATIN SMALL LETTER LONG S", "s"],
  [0x0131, "LATIN SMALL LETTER DOTLESS I", "i"],
  [0x212a, "KELVIN SIGN", "K"],
  [0x212b, "ANGSTROM SIGN", "A"],
  [0x2010, "HYPHEN", "-"],
  [0x2011, "NON-BREAKING HYPHEN", "-"],
  [0x2212, "MINUS SIGN", "-"],
  [0x2236, "RATIO", ":"],
  [0x02d0, "MODIFIER LETTER TRIANGULAR COLON", ":"],
  // Spaces and invisible characters: they read as nothing.
  [0x0020, "SPACE", ""],
  [0x00a0, "NO-BREAK SPACE", ""],
  [0x00ad, "SOFT HYPHEN", ""],
  [0x061c, "ARABIC LETTER MARK", ""],
  [0x180e, "MONGOLIAN VOWEL SEPARATOR", ""],
  [0x200b, "ZERO WIDTH SPACE", ""],
  [0x200c, "ZERO WIDTH NON-JOINER", ""],
  [0x200d, "ZERO WIDTH JOINER", ""],
  [0x200e, "LEFT-TO-RIGHT MARK", ""],
  [0x200f, "RIGHT-TO-LEFT MARK", ""],
  [0x2028, "LINE SEPARATOR", ""],
  [0x2029, "PARAGRAPH SEPARATOR", ""],
  [0x202a, "LEFT-TO-RIGHT EMBEDDING", ""],
  [0x202b, "RIGHT-TO-LEFT EMBEDDING", ""],
  [0x202c, "POP DIRECTIONAL FORMATTING", ""],
  [0x202d, "LEFT-TO-RIGHT OVERRIDE", ""],
  [0x202e, "RIGHT-TO-LEFT OVERRIDE", ""],
  [0x2060, "WORD JOINER", ""],
  [0x2066, "LEFT-TO-RIGHT ISOLATE", ""],
  [0x2067, "RIGHT-TO-LEFT ISOLATE", ""],
  [0x2068, "FIRST STRONG ISOLATE", ""],
  [0x2069, "POP DIRECTIONAL ISOLATE", ""],
  [0x3164, "HANGUL FILLER", ""],
  [0xfeff, "ZERO WIDTH NO-BREAK SPACE", ""],
  // Controls: named so a refusal says what it found; they have no ASCII reading.
  [0x00, "NULL", ""],
  [0x07, "BELL", ""],
  [0x08, "BACKSPACE", ""],
  [0x09, "CHARACTER TABULATION", ""],
  [0x0a, "LINE FEED", ""],
  [0x0d, "CARRIAGE RETURN", ""],
  [0x1b, "ESCAPE", ""],
  [0x7f, "DELETE", ""],
  [0x85, "NEXT LINE", ""],
  [0x9b, "CONTROL SEQUENCE INTRODUCER", ""],
  [0x9d, "OPERATING SYSTEM COMMAND", ""],
]);

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
