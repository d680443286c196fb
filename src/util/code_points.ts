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

/** Look-alikes: code point → [Unicode name, the ASCII it passes for ("" = invisible)]. */
const LOOK_ALIKES: Record<number, [string, string]> = {};

function add(from: number, names: string, ascii: string, prefix: string): void {
  names.split(" ").forEach((n, i) => {
    LOOK_ALIKES[from + i] = [`${prefix} ${n}`, ascii[i] ?? ""];
  });
}
// Cyrillic: А В Е К М Н О Р С Т Х and а е о р с у х, ѕ і ј.
for (
  const [cp, name, ascii] of [
    [0x0410, "CAPITAL LETTER A", "A"],
    [0x0412, "CAPITAL LETTER VE", "B"],
    [0x0415, "CAPITAL LETTER IE", "E"],
    [0x041a, "CAPITAL LETTER KA", "K"],
    [0x041c, "CAPITAL LETTER EM", "M"],
    [0x041d, "CAPITAL LETTER EN", "H"],
    [0x041e, "CAPITAL LETTER O", "O"],
    [0x0420, "CAPITAL LETTER ER", "P"],
    [0x0421, "CAPITAL LETTER ES", "C"],
    [0x0422, "CAPITAL LETTER TE", "T"],
    [0x0425, "CAPITAL LETTER HA", "X"],
    [0x0430, "SMALL LETTER A", "a"],
    [0x0435, "SMALL LETTER IE", "e"],
    [0x043e, "SMALL LETTER O", "o"],
    [0x0440, "SMALL LETTER ER", "p"],
    [0x0441, "SMALL LETTER ES", "c"],
    [0x0443, "SMALL LETTER U", "y"],
    [0x0445, "SMALL LETTER HA", "x"],
    [0x0455, "SMALL LETTER DZE", "s"],
    [0x0456, "SMALL LETTER BYELORUSSIAN-UKRAINIAN I", "i"],
    [0x0458, "SMALL LETTER JE", "j"],
    [0x0405, "CAPITAL LETTER DZE", "S"],
    [0x0406, "CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I", "I"],
    [0x0408, "CAPITAL LETTER JE", "J"],
  ] as const
) LOOK_ALIKES[cp] = [`CYRILLIC ${name}`, ascii];
// Greek capitals that look Latin, and the small omicron.
for (
  const [cp, name, ascii] of [
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
  ] as const
) LOOK_ALIKES[cp] = [`GREEK CAPITAL LETTER ${name}`, ascii];
LOOK_ALIKES[0x03bf] = ["GREEK SMALL LETTER OMICRON", "o"];
LOOK_ALIKES[0x017f] = ["LATIN SMALL LETTER LONG S", "s"];
LOOK_ALIKES[0x0131] = ["LATIN SMALL LETTER DOTLESS I", "i"];
LOOK_ALIKES[0x212a] = ["KELVIN SIGN", "K"];
LOOK_ALIKES[0x212b] = ["ANGSTROM SIGN", "A"];
LOOK_ALIKES[0x0020] = ["SPACE", ""];
LOOK_ALIKES[0x00a0] = ["NO-BREAK SPACE", ""];
LOOK_ALIKES[0x2010] = ["HYPHEN", "-"];
LOOK_ALIKES[0x2011] = ["NON-BREAKING HYPHEN", "-"];
LOOK_ALIKES[0x2212] = ["MINUS SIGN", "-"];
LOOK_ALIKES[0x2236] = ["RATIO", ":"];
LOOK_ALIKES[0x02d0] = ["MODIFIER LETTER TRIANGULAR COLON", ":"];
add(0x200b, "SPACE NON-JOINER JOINER", "", "ZERO WIDTH");
add(0x200e, "LEFT-TO-RIGHT_MARK RIGHT-TO-LEFT_MARK", "", "");
add(0x202a, "LEFT-TO-RIGHT_EMBEDDING RIGHT-TO-LEFT_EMBEDDING POP_DIRECTIONAL_FORMATTING", "", "");
add(0x202d, "LEFT-TO-RIGHT_OVERRIDE RIGHT-TO-LEFT_OVERRIDE", "", "");
add(0x2066, "LEFT-TO-RIGHT_ISOLATE RIGHT-TO-LEFT_ISOLATE FIRST_STRONG_ISOLATE", "", "");
LOOK_ALIKES[0x2069] = ["POP DIRECTIONAL ISOLATE", ""];
LOOK_ALIKES[0x2060] = ["WORD JOINER", ""];
LOOK_ALIKES[0xfeff] = ["ZERO WIDTH NO-BREAK SPACE", ""];
LOOK_ALIKES[0x00ad] = ["SOFT HYPHEN", ""];
LOOK_ALIKES[0x061c] = ["ARABIC LETTER MARK", ""];
LOOK_ALIKES[0x180e] = ["MONGOLIAN VOWEL SEPARATOR", ""];
LOOK_ALIKES[0x3164] = ["HANGUL FILLER", ""];
LOOK_ALIKES[0x2028] = ["LINE SEPARATOR", ""];
LOOK_ALIKES[0x2029] = ["PARAGRAPH SEPARATOR", ""];
const C0 = [
  "NUL",
  "SOH",
  "STX",
  "ETX",
  "EOT",
  "ENQ",
  "ACK",
  "BEL",
  "BACKSPACE",
  "TAB",
  "LINE FEED",
];
C0.forEach((n, i) => (LOOK_ALIKES[i] ??= [n, ""]));
LOOK_ALIKES[0x0d] = ["CARRIAGE RETURN", ""];
LOOK_ALIKES[0x1b] = ["ESCAPE", ""];
LOOK_ALIKES[0x7f] = ["DELETE", ""];
LOOK_ALIKES[0x9b] = ["CONTROL SEQUENCE INTRODUCER", ""];
for (const cp of Object.keys(LOOK_ALIKES).map(Number)) {
  const entry = LOOK_ALIKES[cp];
  if (entry) entry[0] = entry[0].replaceAll("_", " ").trim();
}

/** `U+0421` — at least four hex digits, upper case. */
export function codePointLabel(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** `U+0421 CYRILLIC CAPITAL LETTER ES`, or `U+XXXX` alone when the name is not in the table. */
export function describeCodePoint(cp: number): string {
  const known = LOOK_ALIKES[cp];
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
    else if (LOOK_ALIKES[cp] !== undefined) out += LOOK_ALIKES[cp][1];
    else return undefined;
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
