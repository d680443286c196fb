import assert from "node:assert/strict";
import { MarkdownStream } from "../../src/cli/term/markdown.ts";
import { summarizeResult } from "../../src/cli/term/render.ts";
import { stripAnsi, style } from "../../src/cli/term/style.ts";

function render(pieces: string[], color = false): string {
  let out = "";
  const md = new MarkdownStream(style(color), (t) => (out += t));
  for (const p of pieces) md.push(p);
  md.end();
  return out;
}

Deno.test("streamed Markdown renders the same whatever the chunking", () => {
  const text =
    "# Orbit\n\nAll **BPMs** read `0.1 mm`:\n- H01 ok\n1. first\n> quoted\n---\n```\ncode *x*\n```\ntail";
  const whole = render([text]);
  const pieces = render(text.match(/.{1,3}/gs) ?? []);
  assert.equal(pieces, whole);
  assert.equal(
    whole,
    "Orbit\n\nAll BPMs read 0.1 mm:\n  • H01 ok\n  1. first\n│ quoted\n" + "─".repeat(40) +
      "\n┌───\n│ code *x*\n└───\ntail\n",
  );
});

Deno.test("styles are applied as ANSI when colour is on and nothing else changes", () => {
  const colored = render(["## Head\nsome **bold** and *it* and `code`\n"], true);
  assert.ok(colored.includes("\x1b[1m"));
  assert.equal(stripAnsi(colored), "Head\nsome bold and it and code\n");
});

Deno.test("underscores inside device names are not taken for emphasis", () => {
  assert.equal(render(["read RING_BPM_01 and a_b_c\n"]), "read RING_BPM_01 and a_b_c\n");
});

Deno.test("tool results are summarised on one line that fits the width", () => {
  const readings = {
    readings: [1, 2, 3, 4].map((i) => ({
      device: `LINAC:BPM:0${i}:X`,
      value: 0.1 * i,
      units: "mm",
      severity: i === 2 ? "MINOR" : "NONE",
    })),
  };
  assert.equal(
    summarizeResult(readings, 200),
    "LINAC:BPM:01:X = 0.1 mm, LINAC:BPM:02:X = 0.2 mm MINOR, LINAC:BPM:03:X = 0.30000000000000004 mm, +1 more",
  );
  assert.equal(summarizeResult(readings, 30).length, 30);
  assert.equal(summarizeResult({ total: 120, devices: [{}, {}] }), "120 matches, 2 shown");
  assert.equal(summarizeResult({ source: "elog", entries: [{}, {}] }), "2 elog entries");
  assert.equal(
    summarizeResult({ error: "get_parameter failed: boom" }),
    "get_parameter failed: boom",
  );
});

Deno.test("on a terminal, an unfinished line shows at once and is redrawn styled when complete", () => {
  let out = "";
  const md = new MarkdownStream(style(false), (t) => (out += t), () => 80);
  md.push("- Let me");
  assert.equal(out, "- Let me");
  md.push(" check\nnext");
  assert.equal(out, "- Let me\r\x1b[2K  • Let me check\nnext");
  md.end();
  assert.equal(out, "- Let me\r\x1b[2K  • Let me check\nnext\r\x1b[2Knext\n");
});

Deno.test("a streamed line wider than the terminal is finished raw, not redrawn", () => {
  let out = "";
  const md = new MarkdownStream(style(false), (t) => (out += t), () => 10);
  md.push("**a long line here**");
  md.push("\n");
  assert.equal(out, "**a long line here**\n");
});

Deno.test("the model's text draws no table glyph: box drawing and blocks are escaped, whatever the chunking, and only the program's own marks use them", () => {
  const text = "┌──┐\n│ 1 │ write │\n```\n╞ x ▌\n```\n";
  const whole = render([text]);
  assert.equal(render([...text]), whole);
  assert.equal(
    whole,
    "\\u{250c}\\u{2500}\\u{2500}\\u{2510}\n\\u{2502} 1 \\u{2502} write \\u{2502}\n" +
      "┌───\n│ \\u{255e} x \\u{258c}\n└───\n",
  );
});
