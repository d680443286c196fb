// deno-lint-ignore-file no-control-regex -- these tests are about control characters
/** Untrusted text as a terminal shows it: one table of payloads per class of character. */
import assert from "node:assert/strict";
import {
  terminalJson,
  unsafeChars,
  untrusted,
  UntrustedStream,
} from "../../src/util/untrusted_text.ts";

/** Nothing a terminal acts on or hides (the emoji joiner U+200D aside): what no rendering may hold. */
const RAW =
  /[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b\u200c\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u061c\u00ad]/;

const CASES: [string, string, string][] = [
  // class, payload, single-line rendering
  ["CSI cursor up and erase", "ok\x1b[2A\x1b[2Kfake", "ok\\x1b[2A\\x1b[2Kfake"],
  ["CSI column move", "x\x1b[1Gy", "x\\x1b[1Gy"],
  ["OSC 52 clipboard, BEL-terminated", "\x1b]52;c;ZWNobw==\x07", "\\x1b]52;c;ZWNobw==\\x07"],
  ["OSC title, ST-terminated", "\x1b]0;root\x1b\\", "\\x1b]0;root\\x1b\\"],
  ["unterminated OSC", "a\x1b]8;;http://x", "a\\x1b]8;;http://x"],
  [
    "DCS, APC, PM, SOS",
    "\x1bP1$q\x1b\\\x1b_a\x1b^b\x1bXc",
    "\\x1bP1$q\\x1b\\\\x1b_a\\x1b^b\\x1bXc",
  ],
  ["8-bit CSI and other C1", "\u009b2J\u0085\u009d0;t", "\\x9b2J\\x85\\x9d0;t"],
  ["carriage return over a line", "write RF\r✓ approved", "write RF\\r✓ approved"],
  ["backspace and DEL", "abc\b\b\x7f", "abc\\x08\\x08\\x7f"],
  ["NUL and BEL", "\x00\x07", "\\x00\\x07"],
  ["newline and tab in one line", "a\nb\tc", "a\\nb\\tc"],
  ["bidi override", "H01\u202e10.0\u202c", "H01\\u{202e}10.0\\u{202c}"],
  [
    "bidi isolates and marks",
    "\u2066a\u2069\u200e\u200f\u061c",
    "\\u{2066}a\\u{2069}\\u{200e}\\u{200f}\\u{061c}",
  ],
  [
    "zero-width",
    "H\u200b0\u200c1\u200d\u2060\ufeff",
    "H\\u{200b}0\\u{200c}1\\u{200d}\\u{2060}\\u{feff}",
  ],
  [
    "soft hyphen, Mongolian separator, fillers",
    "a\u00adb\u180e\u115f\u3164\uffa0",
    "a\\xadb\\u{180e}\\u{115f}\\u{3164}\\u{ffa0}",
  ],
  ["line and paragraph separators", "a\u2028b\u2029", "a\\u{2028}b\\u{2029}"],
  ["tag characters", "x\u{e0041}\u{e007f}", "x\\u{e0041}\\u{e007f}"],
  ["standalone variation selector", "A\ufe0fB", "A\\u{fe0f}B"],
  ["lone surrogates", "a\ud800b\udc00", "a\\u{d800}b\\u{dc00}"],
  ["plain text, accents and emoji stay", "Strahl 5 µA ⚠️ Å 👨‍👩‍👧", "Strahl 5 µA ⚠️ Å 👨‍👩‍👧"],
];

for (const [what, payload, expected] of CASES) {
  Deno.test(`untrusted text: ${what} is shown escaped, one line`, () => {
    const shown = untrusted(payload);
    assert.equal(shown, expected);
    assert.doesNotMatch(shown, RAW);
    assert.doesNotMatch(shown, /\n/);
  });
}

Deno.test("multi-line text keeps its lines, escapes the rest of each and turns tabs into spaces", () => {
  assert.equal(
    untrusted("line 1\r\nline\t2\x1b[1A\rline 3\n", { multiline: true }),
    "line 1\nline    2\\x1b[1A\\rline 3\n",
  );
});

Deno.test("a streamed text renders as the whole text does, however it is split", () => {
  const text = "a\x1b[2A\r\n😀 \ud83d\ude00 b\r\u202e\u009b\u200d\ufe0f end\r";
  for (const multiline of [false, true]) {
    const whole = untrusted(text, { multiline });
    for (let size = 1; size <= 4; size++) {
      const stream = new UntrustedStream({ multiline });
      let out = "";
      for (let i = 0; i < text.length; i += size) out += stream.push(text.slice(i, i + size));
      out += stream.end();
      assert.equal(out, whole, `pieces of ${size}, multiline ${multiline}`);
    }
  }
});

Deno.test("a variation selector after an emoji streamed in an earlier piece stays", () => {
  const stream = new UntrustedStream();
  assert.equal(stream.push("warn \u26a0") + stream.push("\ufe0f ok") + stream.end(), "warn ⚠️ ok");
  const emoji = new UntrustedStream();
  assert.equal(emoji.push("👍") + emoji.push("\ufe0f") + emoji.end(), "👍\ufe0f");
  const ascii = new UntrustedStream();
  assert.equal(ascii.push("A") + ascii.push("\ufe0f") + ascii.end(), "A\\u{fe0f}");
});

Deno.test("an escape sequence split across streamed pieces does not slip through", () => {
  const stream = new UntrustedStream({ multiline: true });
  const out = ["ok ", "\x1b", "[2", "A fake"].map((p) => stream.push(p)).join("") + stream.end();
  assert.equal(out, "ok \\x1b[2A fake");
});

Deno.test("unsafeChars lists each escaped code point with its position", () => {
  assert.deepEqual(unsafeChars("ok \u202eA\ufe0f\n"), [
    { at: 3, codePoint: 0x202e },
    { at: 5, codePoint: 0xfe0f },
    { at: 6, codePoint: 0x0a },
  ]);
  assert.deepEqual(unsafeChars("trim H01 by +0.05 mrad ⚠️"), []);
});

Deno.test("JSON for a terminal is the same JSON value with C1, bidi and invisible characters escaped", () => {
  const value = { reason: "a\u009b2J\u202e\u200b\u2028x\x1b", n: 1 };
  const text = terminalJson(value);
  assert.doesNotMatch(text, RAW);
  assert.deepEqual(JSON.parse(text), value);
});

Deno.test("JSON for a terminal escapes every code point the terminal renderer escapes, in both forms, and decodes to it", () => {
  // Every code point of the BMP and of the planes with tag characters and selectors, after
  // nothing, after an ASCII letter and after an emoji (the contexts untrusted() tells apart).
  const ranges: [number, number][] = [[0, 0xffff], [0xe0000, 0xe01ef]];
  for (const [from, to] of ranges) {
    for (let cp = from; cp <= to; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue; // lone surrogates: below
      const ch = String.fromCodePoint(cp);
      for (const before of ["", "a", "\u26a0"]) {
        if (untrusted(before + ch) === before + ch) continue;
        const value = { text: `${before}${ch}` };
        for (const space of [0, 2]) {
          const json = terminalJson(value, space);
          // (The pretty form's own line breaks and indentation are not text.)
          const strings = json.replace(/\n */g, "");
          assert.ok(!strings.includes(ch), `U+${cp.toString(16)} after "${before}" raw in JSON`);
          assert.deepEqual(JSON.parse(json), value);
        }
      }
    }
  }
  const lone = { text: "a\ud800b\udfff" };
  assert.ok(!/[\ud800-\udfff]/.test(terminalJson(lone, 0)));
  assert.deepEqual(JSON.parse(terminalJson(lone, 0)), lone);
  assert.equal(terminalJson({ t: "ok ⚠️ é" }, 0), '{"t":"ok ⚠\\ufe0f é"}');
  assert.equal(terminalJson(undefined, 0), "null");
});
