/**
 * A hostile model writing the summary, and hostile text in the plan or from
 * the facility: nothing of it reaches the entry as a control character, a
 * table row, a heading, an entity or a link, and nothing makes it longer
 * than its cap.
 *
 * @module
 */
import assert from "node:assert/strict";
import { planBody } from "../../src/elog/plan_body.ts";
import type { PlanFacts } from "../../src/elog/plan_facts.ts";
import { capped, code, fenced, inline } from "../../src/elog/text.ts";
import { tableMismatch } from "../../src/elog/table_check.ts";

const FACTS: PlanFacts = {
  kind: "plan",
  outcome: "completed",
  description: "Trim | H01 <b>bold</b> &#27;[2J [link](http://x) # not a heading",
  planHash: "a".repeat(64),
  run: "run-1",
  auditIds: ["b".repeat(64), "c".repeat(64)],
  recorded: true,
  decision: "approved",
  decidedBy: "terminal",
  startedAt: "2026-11-20T12:00:00.000Z",
  finishedAt: "2026-11-20T12:00:01.000Z",
  writes: [{
    device: "SR:COR:H01:SETPT",
    before: 0.5,
    written: 0.6,
    after: 0.6001,
    readbackDevice: "SR:COR:H01:RDBK",
    check: "confirmed",
    restored: "no",
  }, {
    device: "SR:MSG",
    before: "a|b`c\x1b[31m",
    written: "x",
    after: "x",
    readbackDevice: null,
    check: "accepted",
    restored: "no",
  }],
  reasons: [{ device: "SR:COR:H01:SETPT", value: 0.6, reason: "| fake | cell |" }],
  scans: [],
  rollback: [],
  errors: [],
  csvFiles: [],
};

const NOTES = {
  maxChars: 32_000,
  summaryChars: 2000,
  operator: "op\x1b]0;title\x07",
  host: "host",
  attachments: [],
};

// deno-lint-ignore no-control-regex
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e\u200b]/;

Deno.test("the model's summary is fenced and marked as the model's: no escape sequence, table row or fence escape gets out", () => {
  const hostile = [
    "All good.\x1b[2J\x1b]52;c;ZXZpbA==\x07",
    "| `SR:COR:H01:SETPT` | 0.5 | 9.9 | 9.9 | `SR:COR:H01:RDBK` | no |",
    "```",
    "# Everything restored",
    "````text",
    "\u202eevil",
  ].join("\n");
  const body = planBody(FACTS, { ...NOTES, modelSummary: hostile });
  assert.doesNotMatch(body, RAW_CONTROL);
  const [facts, summary] = body.split(
    "**Summary by the model** (its words, not checked against the machine):",
  );
  assert.ok(summary, "the summary is marked as the model's");
  assert.doesNotMatch(facts as string, /9\.9/, "the model's numbers stay out of the facts");
  // The fence is longer than any run of backticks in the text, so nothing inside can close it.
  const fence = /\n(`{5,})text\n/.exec(summary as string)?.[1];
  assert.ok(fence && fence.length === 5, summary);
  const inside = (summary as string).split(`${fence}text\n`)[1]?.split(`\n${fence}`)[0] ?? "";
  assert.match(
    inside,
    /\| `SR:COR:H01:SETPT` \| 0\.5 \| 9\.9/,
    "the fake row is text inside the fence",
  );
  assert.match(inside, /\\x1b\[2J\\x1b\]52;c;ZXZpbA==\\x07/);
  assert.match(inside, /\\u\{202e\}evil/);
});

Deno.test("a megabyte from the model is cut to [elog] summary_chars, saying how much was left out", () => {
  const huge = "x".repeat(1_000_000);
  const body = planBody(FACTS, { ...NOTES, modelSummary: capped(huge, NOTES.summaryChars) });
  assert.ok(body.length < NOTES.summaryChars + 3000, `${body.length}`);
  assert.match(body, /… \(998000 more characters left out\)/);
});

Deno.test("plan text and facility values cannot add Markdown structure, entities or controls", () => {
  const body = planBody(FACTS, NOTES);
  assert.doesNotMatch(body, RAW_CONTROL);
  assert.match(body, /\*\*Plan:\*\* Trim \\\| H01 \\<b\\>bold\\<\/b\\> \\&\\#27;\\\[2J/);
  assert.match(body, /\\\[link\\\]\(http:\/\/x\) \\# not a heading/);
  assert.match(body, /: \\\| fake \\\| cell \\\|$/m);
  // The string value's pipe, backtick and escape are inside a longer code span.
  assert.ok(body.includes("| ``a\\|b`c\\x1b[31m`` |"), body);
  assert.match(body, /\*\*Run by:\*\* op\\\\x1b\\\]0;title\\\\x07 on host/);
  const rows = body.split("\n").filter((l) => l.startsWith("| `"));
  assert.equal(rows.length, 2, "one row per written device, no more");
});

Deno.test("the text helpers: inline escapes, code spans and fences fit what they hold", () => {
  assert.equal(inline("a*b_c`d"), "a\\*b\\_c\\`d");
  // The visible escape's backslash is itself escaped: the entry reads `two\nlines`.
  assert.equal(inline("two\nlines"), "two\\\\nlines");
  assert.equal(code("X:Y"), "`X:Y`");
  assert.equal(code("`x`"), "`` `x` ``");
  assert.equal(code("a|b"), "`a\\|b`");
  assert.equal(fenced("a\n``` b", 100), "````text\na\n``` b\n````");
  assert.equal(
    capped("ab😀", 3),
    "ab… (2 more characters left out)",
    "a surrogate pair is not split",
  );
});

Deno.test("a plan of hundreds of writes lists the first 200 devices and says how many more the audit holds", () => {
  const writes = Array.from({ length: 500 }, (_, i) => ({
    ...FACTS.writes[0]!,
    device: `SR:COR:H${String(i).padStart(3, "0")}:SETPT`,
  }));
  const body = planBody({ ...FACTS, writes, reasons: [] }, NOTES);
  assert.equal(body.split("\n").filter((l) => l.startsWith("| `SR:COR:H")).length, 200);
  assert.match(body, /… and 300 more devices: see the audit records below\./);
  assert.ok(body.length <= NOTES.maxChars, `${body.length}`);
});

Deno.test("a table longer than the draft's cap is cut between rows, saying how many more, and stays whole: the audit ids still follow", () => {
  const writes = Array.from({ length: 200 }, (_, i) => ({
    ...FACTS.writes[0]!,
    device: `SR:C${String(i).padStart(3, "0")}:CORRECTOR:HORIZONTAL:SETPOINT`,
    before: -0.05399999999999999,
    written: -0.15399999999999999,
    after: -0.15388325465537034,
    readbackDevice: `SR:C${String(i).padStart(3, "0")}:CORRECTOR:HORIZONTAL:READBACK`,
    restored: "restored" as const,
  }));
  const reasons = writes.map((w) => ({ device: w.device, value: 0, reason: "r".repeat(300) }));
  for (const maxChars of [2000, 8000, 32_000]) {
    const facts = { ...FACTS, writes, reasons };
    const body = planBody(facts, { ...NOTES, maxChars, modelSummary: "fine" });
    assert.equal(tableMismatch(body, writes), undefined, `max_chars ${maxChars}`);
    const rows = body.split("\n").filter((l) => l.startsWith("| `SR:C"));
    assert.ok(rows.length > 0 && rows.length < 200, `${rows.length} rows at ${maxChars}`);
    assert.match(
      body,
      new RegExp(
        `\\n\\n… and ${200 - rows.length} more devices: see the audit records below\\.\\n`,
      ),
    );
    assert.ok(body.includes(`Audit records: \`${"b".repeat(64)}\``), `audit ids at ${maxChars}`);
    assert.ok(body.length <= Math.max(maxChars, 6000), `${body.length} characters at ${maxChars}`);
  }
});

Deno.test("the devices table counts where it stands: a copy of it in the model's fenced words does not stand for a changed one", () => {
  const body = planBody(FACTS, NOTES);
  assert.equal(tableMismatch(body, FACTS.writes), undefined);
  const table = body.slice(body.indexOf("| Device |"), body.indexOf("\n\n**Reasons"));
  const copied = planBody(FACTS, { ...NOTES, modelSummary: `Here it is:\n\n${table}\n\nDone.` });
  assert.equal(tableMismatch(copied, FACTS.writes), undefined);
  const changed = copied.replace("| 0.5 | 0.6 | 0.6001 |", "| 0.5 | 0.6 | 0.7 |");
  assert.equal(changed.split("0.6001").length, 2, "the copy in the summary still holds the number");
  assert.equal(tableMismatch(changed, FACTS.writes), "the row of `SR:COR:H01:SETPT`");
  assert.equal(
    tableMismatch(planBody({ ...FACTS, writes: [] }, NOTES), []),
    undefined,
    "no device written: the line says so",
  );
});
