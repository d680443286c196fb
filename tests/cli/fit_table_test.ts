/** Tables fit the terminal: columns give way widest first, cells wrap between words. */
import assert from "node:assert/strict";
import { fitTable, fitWidths } from "../../src/cli/term/fit_table.ts";
import { stripAnsi, style } from "../../src/cli/term/style.ts";

const ROWS = [
  [
    "RING:VAC:IP:019:PRES",
    "mbar",
    "Storage ring ion pump 019 (cell 04) pressure (from pump current)",
    "ion pump (name), pressure (name), cell 4 (property)",
  ],
  ["LINAC:BPM:01:X", "mm", "Linac BPM 01 horizontal position", "bpm (name)"],
];

const words = (text: string) =>
  stripAnsi(text).replace(/[│┌┐└┘─┬┴├┤┼]/g, " ").split(/\s+/).filter(Boolean);

Deno.test("a table is no wider than the terminal and splits no word, at 80 columns and wider", () => {
  for (const width of [80, 100, 132, 200]) {
    const t = fitTable(["Device", "Units", "Description", "Why"], style(true), width);
    for (const r of ROWS) t.push(r);
    const text = t.toString();
    const lines = stripAnsi(text).split("\n");
    assert.ok(
      lines.every((l) => l.length <= width),
      `${width}: ${lines.find((l) => l.length > width)}`,
    );
    const shown = words(text);
    for (const w of ROWS.flat().join(" ").split(" ")) {
      assert.ok(shown.includes(w), `${width}: ${w}`);
    }
  }
});

Deno.test("a table that fits is drawn at its natural width, one line a row", () => {
  const t = fitTable(["Device", "Units"], style(false), 200);
  for (const r of ROWS) t.push(r.slice(0, 2));
  const lines = t.toString().split("\n");
  assert.equal(lines.length, 2 + 1 + ROWS.length);
  assert.equal(lines[0]?.length, 2 + 20 + 3 + 5 + 2);
});

Deno.test("the widest column gives way first, down to its widest word", () => {
  // Room for 30 columns of text: the 40-wide column shrinks, the 5-wide one keeps its width.
  assert.deepEqual(fitWidths([40, 5], [10, 5], 30 + 3 + 4), [25, 5]);
  // Words are broken only when the widest words alone do not fit.
  assert.deepEqual(fitWidths([40, 30], [30, 30], 40 + 3 + 4), [20, 20]);
});

Deno.test("a cell spanning the row wraps within all its columns", () => {
  const t = fitTable(["Device", "Points", "Min"], style(false), 40);
  t.push(["X", { content: "the archiver does not hold this device at all, it says", colSpan: 2 }]);
  const lines = t.toString().split("\n");
  assert.ok(lines.every((l) => l.length <= 40), lines.join("\n"));
  assert.ok(words(t.toString()).includes("archiver"));
});

Deno.test("columns whose words cannot stand side by side become one record per row, no word split", () => {
  const head = ["Device", "Points", "Min", "Max", "Mean", "Last", "Worst"];
  const row = [
    "DIAG:ENERGY:MEAS (MeV)",
    "1964",
    "149.522",
    "149.583",
    "149.554",
    "149.54 @ 2026-11-28T02:49:43.000Z",
    "NONE",
  ];
  const t = fitTable(head, style(false), 80);
  t.push(row);
  t.push(["RF:PHASE:SETPT (deg)", { content: "not archived", colSpan: 6 }]);
  const text = t.toString();
  assert.deepEqual(text.split("\n").slice(0, 8), [
    "DIAG:ENERGY:MEAS (MeV)",
    "  Points  1964",
    "  Min     149.522",
    "  Max     149.583",
    "  Mean    149.554",
    "  Last    149.54 @ 2026-11-28T02:49:43.000Z",
    "  Worst   NONE",
    "",
  ]);
  assert.match(text, /RF:PHASE:SETPT \(deg\)\n {10}not archived$/);
  // Wide enough, the same rows are a table.
  const wide = fitTable(head, style(false), 120);
  wide.push(row);
  assert.match(wide.toString(), /^┌/);
});

Deno.test("into a pipe (no width limit) a spanning cell stays on one line and no stray border is drawn", () => {
  const t = fitTable(["Device", "Points", "Min"], style(false), Infinity);
  t.push(["A", "1", "2"]);
  t.push(["SR:DCCT:CURRENT", {
    content: "archiver at http://x: the response exceeded 1 MiB",
    colSpan: 2,
  }]);
  const lines = t.toString().split("\n");
  assert.ok(lines.some((l) => l.includes("archiver at http://x: the response exceeded 1 MiB")));
  assert.ok(!lines.some((l) => /^[┴┬┼]+$/.test(l)), lines.join("\n"));
  assert.equal(new Set(lines.map((l) => l.length)).size, 1, "every line as wide as the table");
});
