/** The plan table fits the terminal it is drawn in: the reason column takes what is left. */
import assert from "node:assert/strict";
import {
  changeSummary,
  MAX_DESCRIPTION_LINES,
  PLAN_TABLE_COLUMNS,
  PLAN_TEXT_MARK,
  planColumns,
  planColumnWidths,
  renderPlan,
} from "../../src/cli/term/plan_table.ts";
import { CONTINUED, screenWidth } from "../../src/cli/term/screen_text.ts";
import type { Plan } from "../../src/plan_model/plan.ts";
import { stripAnsi, style } from "../../src/cli/term/style.ts";
import { parsePlan } from "../../src/plan_model/plan.ts";
import { fixture } from "../plan/fixture.ts";

const REASON = "orbit correction at BPM 3 after the RF trip: the operator asked for half a step " +
  "first, then the full step once the beam loss monitors stay quiet";

async function checkedPlan(f: Awaited<ReturnType<typeof fixture>>) {
  const parsed = parsePlan({
    description: "bump H01",
    actions: [
      { type: "read", devices: ["LINAC:BPM:01:X", "LINAC:BPM:02:X"] },
      { type: "write", device: "LINAC:COR:H01:SETPT", value: 0.1, reason: REASON },
      { type: "wait", seconds: 1, reason: "let the orbit settle" },
    ],
  });
  assert.ok(parsed.ok);
  return await f.service.check(parsed.plan);
}

const widest = (text: string) => Math.max(...text.split("\n").map(screenWidth));

Deno.test("the plan table is no wider than the terminal, and a wider one gives the reason more room", async () => {
  await using f = await fixture();
  const p = await checkedPlan(f);
  const s = style(false);
  const at120 = renderPlan(p, s, 120);
  const at160 = renderPlan(p, s, 160);
  assert.equal(widest(at120), 120);
  assert.equal(widest(at160), 160);
  assert.ok(at160.split("\n").length < at120.split("\n").length, "the reason wraps less");
  for (const table of [at120, at160]) {
    const words = stripAnsi(table).replace(/[│┌┐└┘─┬┴├┤┼]/g, " ").split(/\s+/);
    for (const word of REASON.split(" ")) assert.ok(words.includes(word), word);
  }
  // An 80-column terminal: the device and value columns narrow too.
  const at80 = renderPlan(p, s, 80);
  assert.equal(widest(at80), 80);
  for (const name of ["LINAC:COR:H01:SETPT", "LINAC:BPM:01:X", "LINAC:BPM:02:X"]) {
    assert.ok(stripAnsi(at80).includes(name), `${name} is shown whole`);
  }
  // Narrower still: the device column gives way (its names wrap), the table still fits.
  for (const columns of [44, 50, 60, 79]) {
    assert.equal(widest(renderPlan(p, s, columns)), columns, `${columns} columns`);
    assert.equal(planColumnWidths(columns, 19).reduce((a, b) => a + b) + 6, columns);
  }
  // Below the narrowest table the program cuts its lines, never the terminal.
  for (const columns of [20, 30, 43]) {
    assert.ok(widest(renderPlan(p, s, columns)) <= columns, `${columns} columns`);
  }
});

Deno.test("a plan drawn into a pipe or a file is 120 columns wide whatever the terminal", () => {
  assert.equal(planColumns({ stdoutIsTerminal: false, columns: () => 200 }), PLAN_TABLE_COLUMNS);
  assert.equal(planColumns({ stdoutIsTerminal: true, columns: () => 200 }), 200);
});

Deno.test("a device name is never cut short: the column widens for it, and one too long wraps whole", async () => {
  await using f = await fixture();
  const long = "LINAC:COR:H01:SETPT";
  const p = await checkedPlan(f);
  const s = style(false);
  const table = stripAnsi(renderPlan(p, s, 120));
  assert.ok(table.includes(long) && !table.includes("…"));
  // A name past 40 characters wraps inside its cell; every character is still there.
  const name = "SR:INJECTION:KICKER:PULSER:02:TIMING:DELAY:SETPT";
  const [x] = planColumnWidths(120, name.length).slice(2, 3);
  assert.equal(x, 40);
  const cells = stripAnsi(
    renderPlan({ ...p, plan: { ...p.plan, actions: [{ type: "read", devices: [name] }] } }, s, 120),
  );
  const column = cells.split("\n").map((l) => l.split("│")[3]?.trim() ?? "").join("");
  assert.ok(column.includes(name), column);
});

Deno.test("a refused plan's table names the check behind each violation", async () => {
  await using f = await fixture();
  const parsed = parsePlan({
    description: "too far",
    actions: [{ type: "write", device: "LINAC:COR:H01:SETPT", value: 99, reason: "test" }],
  });
  assert.ok(parsed.ok);
  const p = await f.service.check(parsed.plan);
  assert.equal(p.ok, false);
  const text = stripAnsi(renderPlan(p, style(false), 120));
  assert.match(text, /actions\[0\]: value 99 .* is above the maximum .* \[within_limits\]/);
});

/** A row as the table draws it, for a device the plan never touches. */
const FAKE_ROW = "│ 1    │ write  │ SR:COR:H01:SETPT    │ 0 → 0.05 mrad (Δ +0.05) │ H01 trim";

/** Free text aimed at the table: fake rows at line starts, wide and invisible-width characters. */
function hostileTexts(columns: number): string[] {
  return [
    "trim".padEnd(columns, " ") + FAKE_ROW,
    "x".repeat(columns - 2) + FAKE_ROW,
    "ビーム".repeat(columns / 6 | 0) + FAKE_ROW,
    "👨‍👩‍👧".repeat(columns / 4 | 0) + FAKE_ROW,
    "\u202e" + FAKE_ROW + "\n" + FAKE_ROW,
    ("e\u0301".repeat(columns) + FAKE_ROW).repeat(3),
  ];
}

Deno.test("no text of a plan, at any width, draws a line that begins like the table or is wider than the terminal", async () => {
  await using f = await fixture();
  const s = style(true);
  for (const columns of [30, 44, 80, 100, 120, 200]) {
    for (const text of hostileTexts(columns)) {
      // Straight to preflight: the screen must not rely on the schema's refusals.
      const plan: Plan = {
        description: text.repeat(4),
        actions: [
          { type: "read", devices: ["LINAC:BPM:01:X"], label: text },
          { type: "write", device: "LINAC:COR:H01:SETPT", value: 0.05, reason: text },
          { type: "wait", seconds: 1, reason: text },
        ],
      };
      const lines = renderPlan(await f.service.check(plan), s, columns).trimEnd().split("\n");
      const plain = lines.map(stripAnsi);
      const top = plain.findIndex((l) => l.startsWith("┌"));
      const bottom = plain.findIndex((l) => l.startsWith("└"));
      assert.ok(top > 0 && bottom > top, plain.join("\n"));
      for (const [i, l] of plain.entries()) {
        assert.ok(screenWidth(lines[i] ?? "") <= columns, `wider than ${columns}: ${l}`);
        if (i < top || i > bottom) {
          assert.doesNotMatch(l, /^\s*[│┌└├┬┼]/, `begins like the table at ${columns}: ${l}`);
        } else {
          // Inside the table: real rows (or the program's marked continuations), no fake device.
          assert.match(l, new RegExp(`^([│┌└]|${CONTINUED})`), l);
        }
        assert.doesNotMatch(l, /^│ 1 +│ write +│ SR:COR:H01/, l);
      }
      // The description: a label, then lines behind the mark (and the program's continuations).
      assert.match(plain[0] ?? "", /^Plan description/);
      const block = plain.slice(1, top);
      assert.ok(block.length >= 1 && block.length <= MAX_DESCRIPTION_LINES + 2, block.join("\n"));
      for (const l of block) assert.ok(l.startsWith(PLAN_TEXT_MARK) || l.startsWith(CONTINUED), l);
      if (columns >= 40) assert.equal(plain.at(-1), "Writes 1 device: LINAC:COR:H01:SETPT.");
    }
  }
});

Deno.test("a description longer than the block shows its first lines and says how many more there are", async () => {
  await using f = await fixture();
  const words = Array.from({ length: 300 }, (_, i) => `word${i}`).join(" ");
  const plan: Plan = {
    description: words,
    actions: [{ type: "read", devices: ["LINAC:BPM:01:X"] }],
  };
  const text = stripAnsi(renderPlan(await f.service.check(plan), style(false), 80));
  const block = text.split("\n").filter((l) => l.startsWith(PLAN_TEXT_MARK));
  assert.equal(block.length, MAX_DESCRIPTION_LINES);
  assert.match(block.at(-1) ?? "", /^» … \d+ more lines not shown$/);
  assert.match(block[0] ?? "", /^» word0 word1 /);
  assert.match(text, /No writes: this plan only reads and waits\.\n$/);
});

Deno.test('the lines above the question name every device written, never "and K more", each scan with its points, and a device only the rollback writes', async () => {
  await using f = await fixture();
  const s = style(false);
  const write = (device: string, value: number) => ({ type: "write", device, value, reason: "r" });
  const check = async (plan: Plan) => await f.service.check(plan);
  const five = await check({
    description: "five",
    actions: [1, 2, 3, 4, 5].flatMap((n) => [
      write(`LINAC:COR:H0${n}:SETPT`, 0),
      { type: "wait", seconds: 0.1 },
    ]).concat([write("LINAC:COR:H01:SETPT", 0.01)]) as Plan["actions"],
  });
  const names = [1, 2, 3, 4, 5].map((n) => `LINAC:COR:H0${n}:SETPT`);
  for (const columns of [120, 90, 60, 30]) {
    const lines = changeSummary(five, s, columns).split("\n");
    const text = lines.map((l) => l.trim()).join(" ");
    assert.equal(text, `Writes 5 devices (6 writes): ${names.join(", ")}.`, String(columns));
    for (const [i, l] of lines.entries()) {
      assert.ok(screenWidth(l) <= columns, `${columns}: ${l}`);
      if (i > 0) assert.match(l, /^ {2}\S/, "a continuation is indented");
    }
  }
  assert.equal(
    changeSummary(five, s, 120),
    "Writes 5 devices (6 writes): LINAC:COR:H01:SETPT, LINAC:COR:H02:SETPT, LINAC:COR:H03:SETPT, " +
      "LINAC:COR:H04:SETPT,\n  LINAC:COR:H05:SETPT.",
  );

  const scan = await check({
    description: "scan, rollback elsewhere",
    actions: [{
      type: "scan",
      writeDevice: "RF:PHASE:SETPT",
      start: -4,
      stop: -5,
      steps: 5,
      readDevices: ["DIAG:ENERGY:MEAS"],
      dwellSeconds: 0.1,
    }],
    rollback: [write("RF:PHASE:SETPT", -4), write("LINAC:COR:H01:SETPT", 0)] as Plan["actions"],
  });
  assert.equal(
    changeSummary(scan, s, 120),
    "Scans RF:PHASE:SETPT (5 points); after the plan, whatever its outcome, its rollback writes LINAC:COR:H01:SETPT.",
  );
  const none = await check({
    description: "look",
    actions: [{ type: "read", devices: ["LINAC:BPM:01:X"] }, { type: "wait", seconds: 1 }],
  });
  assert.equal(changeSummary(none, s, 120), "No writes: this plan only reads and waits.");
});
