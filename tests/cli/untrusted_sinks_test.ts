// deno-lint-ignore-file no-control-regex -- these tests are about control characters
/**
 * Every place a person reads outside text shows it escaped: the plan table,
 * the REPL's streamed answer, tool summaries, errors, plan progress and
 * decisions. Colour stays on, so the program's own styling is checked to
 * survive while nothing else reaches the terminal.
 */
import assert from "node:assert/strict";
import type { Io } from "../../src/app/io.ts";
import { renderPlan } from "../../src/cli/term/plan_table.ts";
import { summarizeResult, TerminalRenderer } from "../../src/cli/term/render.ts";
import { style } from "../../src/cli/term/style.ts";
import type { Plan } from "../../src/plan_model/plan.ts";
import { fixture } from "../plan/fixture.ts";

/** The program's own sequences: SGR colours and the line redraw `\r\x1b[2K`. */
const OWN = /\x1b\[[0-9;]*m|\r\x1b\[2K/g;
/** After removing our own sequences: a raw control, bidi or invisible character. */
const RAW = new RegExp(
  "[\\x00-\\x09\\x0b-\\x1f\\x7f-\\x9f\\u200b\\u200c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029\\u2060\\ufeff]",
);

function assertOnlyOwnSequences(text: string, what: string): void {
  assert.doesNotMatch(text.replace(OWN, ""), RAW, `${what} holds a raw character`);
}

/** A colour terminal 100 columns wide that keeps what is written. */
function terminal(): Io & { text: () => string } {
  let out = "";
  return {
    out: (t) => void (out += t),
    err: (t) => void (out += t),
    stdinIsTerminal: true,
    stdoutIsTerminal: true,
    stderrIsTerminal: false,
    color: true,
    columns: () => 100,
    env: () => undefined,
    cwd: "/",
    text: () => out,
  };
}

Deno.test("a plan table whose text bypassed the schema shows every payload escaped and keeps its colours", async () => {
  await using f = await fixture();
  // Straight to preflight, as a plan built in code would be: the table must not rely on the schema.
  const plan: Plan = {
    description: "trim\x1b[2A\x1b[2Ktrim H01 by +0.05 mrad",
    actions: [
      { type: "read", devices: ["LINAC:BPM:01:X"], label: "orbit\u202e\u200b" },
      {
        type: "write",
        device: "LINAC:COR:H01:SETPT",
        value: 0.1,
        reason: "rf phase\r✓ approved\u009b1A",
      },
      { type: "wait", seconds: 1, reason: "\x1b]52;c;cm0gLXJm\x07settle" },
    ],
  };
  const checked = await f.service.check(plan);
  const table = renderPlan(checked, style(true), 120);
  assertOnlyOwnSequences(table, "the plan table");
  for (
    const shown of [
      "trim\\x1b[2A\\x1b[2Ktrim H01",
      "orbit\\u{202e}\\u{200b}",
      "\\r✓ approved\\x9b1A",
      "\\x1b]52;c;cm0gLXJm\\x07settle",
    ]
  ) {
    const flat = (t: string) => t.replace(OWN, "").replace(/[\s│]/g, "");
    assert.ok(flat(table).includes(flat(shown)), shown);
  }
  assert.match(table, /\x1b\[33mwrite\x1b\[39m/, "the action is still coloured");
});

Deno.test("the REPL's streamed answer shows an escape sequence split across pieces as text", () => {
  const io = terminal();
  const r = new TerminalRenderer(io, { showUsage: false });
  for (
    const delta of ["Orbit is fine.", "\x1b", "]0;", "pwned\x07 **bold**\r", "\n", "\u202eend"]
  ) {
    r.handle({ type: "text", delta });
  }
  r.end();
  const text = io.text();
  assertOnlyOwnSequences(text, "the streamed answer");
  assert.match(text, /Orbit is fine\.\\x1b\]0;pwned\\x07 \x1b\[1mbold\x1b\[22m\n/);
  assert.match(text, /\\u\{202e\}end/);
});

Deno.test("tool names, tool results, errors, progress and decisions are shown escaped", () => {
  const io = terminal();
  const r = new TerminalRenderer(io, { showUsage: false });
  r.handle({ type: "tool_start", id: "1", name: "get\x1b[2J", args: {} });
  r.handle({
    type: "tool_end",
    id: "1",
    name: "execute_code\x1b[1A",
    ok: true,
    result: { stdout: "done\r✓ approved\x1b]52;c;eA==\x07\n", files: [] },
    ms: 3,
  });
  r.handle({
    type: "tool_end",
    id: "2",
    name: "read_log",
    ok: false,
    result: { error: "olog said \x1b[31mOK\u2066" },
    ms: 3,
  });
  r.handle({ type: "plan_progress", step: 1, total: 2, detail: "wrote X\x9b2K" });
  r.handle({
    type: "plan_decided",
    planHash: "ab".repeat(32),
    decision: "rejected",
    reason: "no\r✓ approved",
  });
  r.handle({ type: "error", message: "server says \x1b]0;t\x07\nsecond line", retryable: false });
  r.end();
  const text = io.text();
  assertOnlyOwnSequences(text, "the event lines");
  for (
    const shown of [
      "execute_code\\x1b[1A",
      "done\\r✓ approved\\x1b]52;c;eA==\\x07",
      "olog said \\x1b[31mOK\\u{2066}",
      "wrote X\\x9b2K",
      "no\\r✓ approved",
      "server says \\x1b]0;t\\x07\nsecond line",
    ]
  ) assert.ok(text.includes(shown), shown);
});

Deno.test("a tool summary is one escaped line however the result is shaped", () => {
  const results: unknown[] = [
    "plain \x1b[2A",
    { readings: [{ device: "X", value: "on\x1b[1G", units: "\u202eA" }] },
    { entries: [], source: "elog\x1b[2J" },
    { other: "\u009b2J\u2028" },
  ];
  for (const result of results) {
    const line = summarizeResult(result);
    assert.doesNotMatch(line, RAW);
    assert.doesNotMatch(line, /\n/);
  }
});
