/** The plan table fits the terminal it is drawn in: the reason column takes what is left. */
import assert from "node:assert/strict";
import {
  PLAN_TABLE_COLUMNS,
  planColumns,
  planColumnWidths,
  renderPlan,
} from "../../src/cli/term/plan_table.ts";
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

const widest = (text: string) => Math.max(...stripAnsi(text).split("\n").map((l) => l.length));

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
  // Narrower still: the device column keeps its names, value and reason 16 each.
  assert.equal(widest(renderPlan(p, s, 50)), 6 + 9 + 21 + 16 + 16 + 6);
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
