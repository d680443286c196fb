/** Plan text the operator must read as written: free-text caps, no invisible characters, ASCII device names. */
import assert from "node:assert/strict";
import { parsePlan, TEXT_LIMITS } from "../../src/plan_model/plan.ts";

const write = (over: Record<string, unknown> = {}) => ({
  type: "write",
  device: "SR:COR:H01:SETPT",
  value: 0.1,
  reason: "trim",
  ...over,
});

function errors(raw: unknown): string[] {
  const parsed = parsePlan(raw);
  assert.equal(parsed.ok, false, "the plan is refused");
  return parsed.ok ? [] : parsed.errors;
}

Deno.test("a reason holding a cursor-up sequence is invalid, named by field and code point", () => {
  const [e] = errors({ description: "d", actions: [write({ reason: "x\x1b[3Atrim H01" })] });
  assert.match(e ?? "", /^actions\[0\]\.reason: holds U\+001B ESCAPE at character 2/);
});

Deno.test("free text with bidi, zero-width, CR or newline is invalid in every free-text field", () => {
  const cases: [unknown, RegExp][] = [
    [
      { description: "a\u202eb", actions: [write()] },
      /^description: .*U\+202E RIGHT-TO-LEFT OVERRIDE/,
    ],
    [
      { description: "d", actions: [{ type: "read", devices: ["A:B"], label: "x\u200by" }] },
      /^actions\[0\]\.label: .*U\+200B ZERO WIDTH SPACE/,
    ],
    [
      { description: "d", actions: [{ type: "wait", seconds: 1, reason: "a\rb" }] },
      /^actions\[0\]\.reason: .*U\+000D CARRIAGE RETURN/,
    ],
    [{ description: "two\nlines", actions: [write()] }, /^description: .*U\+000A LINE FEED/],
    [
      { description: "d", actions: [write()], rollback: [write({ reason: "\u009b2J" })] },
      /^rollback\[0\]\.reason: .*U\+009B/,
    ],
  ];
  for (const [raw, re] of cases) assert.match(errors(raw)[0] ?? "", re);
});

Deno.test("free text longer than its cap is invalid with its length and the cap", () => {
  const long = "x".repeat(TEXT_LIMITS.reason + 1);
  assert.deepEqual(errors({ description: "d", actions: [write({ reason: long })] }), [
    `actions[0].reason: ${TEXT_LIMITS.reason + 1} characters; at most ${TEXT_LIMITS.reason}`,
  ]);
  const desc = "d".repeat(TEXT_LIMITS.description + 1);
  assert.match(
    errors({ description: desc, actions: [write()] })[0] ?? "",
    /^description: 1001 characters/,
  );
});

Deno.test("a Cyrillic look-alike device name is invalid and the message never prints the two names alike", () => {
  const [e = ""] = errors({
    description: "d",
    actions: [write({ device: "SR:\u0421OR:H01:SETPT" })],
  });
  assert.match(e, /U\+0421 CYRILLIC CAPITAL LETTER ES at character 4/);
  assert.match(e, /did you mean "SR:COR:H01:SETPT" \(all ASCII\)/);
  assert.ok(e.includes('"SR:\\u{0421}OR:H01:SETPT"'), e);
  assert.ok(!e.includes("\u0421"), "the look-alike itself is not printed");
});

Deno.test("an invisible character in a device name is invalid; the name without it is suggested", () => {
  const [e = ""] = errors({
    description: "d",
    actions: [{ type: "read", devices: ["SR:COR:H01\u200b:SETPT"] }],
  });
  assert.match(e, /^actions\[0\]\.devices\[0\]: .*U\+200B ZERO WIDTH SPACE/);
  assert.match(e, /did you mean "SR:COR:H01:SETPT"/);
});

Deno.test("a Greek, fullwidth or spaced device name is invalid", () => {
  for (const device of ["SR:COR:\u0397\u039f1:SETPT", "SR\uff1aCOR:H01:SETPT", "SR:COR H01"]) {
    assert.match(
      errors({ description: "d", actions: [write({ device })] })[0] ?? "",
      /printable ASCII/,
    );
  }
});

Deno.test("one-line free text with accents and emoji is valid", () => {
  const parsed = parsePlan({
    description: "Strahl 5 µA ⚠️ trim",
    actions: [write({ reason: "Δ small" })],
  });
  assert.equal(parsed.ok, true);
});
