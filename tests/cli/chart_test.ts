/**
 * The chart the terminal shows for a plot: axes, time labels, several
 * series, each one's minimum and maximum marked, outside text escaped.
 */
import assert from "node:assert/strict";
import type { PlotData } from "../../src/plots/data.ts";
import { renderChart } from "../../src/cli/term/chart.ts";

const T0 = Date.parse("2026-11-20T10:00:00Z");
const data: PlotData = {
  title: "archive last hour",
  xKind: "time",
  xLabel: "time (UTC)",
  series: [
    {
      name: "RING:DCCT:CURRENT",
      units: "mA",
      points: Array.from({ length: 360 }, (_, i) => [T0 + i * 10_000, i === 100 ? 290 : 300]),
    },
    {
      name: "RF:AMPL:RDBK",
      units: "%",
      points: Array.from({ length: 360 }, (_, i) => [T0 + i * 10_000, i === 300 ? 310 : 296]),
    },
  ],
};

Deno.test("the terminal chart has axes, UTC time labels, a legend per series and min/max marks", () => {
  const text = renderChart(data, { columns: 100, color: false });
  const lines = text.split("\n");
  assert.match(lines[0] ?? "", /^archive last hour \[mA, %\]$/);
  assert.match(text, /▲/, "the y axis");
  assert.match(text, /└[─┬]+▶/, "the x axis with ticks");
  assert.match(text, /\b10:(00|10|20|30|40|50):00\b/, "time labels");
  assert.match(text, /┤/, "y ticks");
  assert.match(text, /^\s*310┤|^\s*305┤|^\s*300┤/m, "y tick values");
  assert.equal(
    text.match(/●/g)?.length,
    4 + 2,
    "two marks per series on the curve, one per legend line",
  );
  assert.match(
    text,
    /━━ RING:DCCT:CURRENT \[mA\] {2}● min 290 mA at 10:16:40, max 300 mA at 10:00:00/,
  );
  assert.match(text, /━━ RF:AMPL:RDBK \[%\] {2}● min 296 % at 10:00:00, max 310 % at 10:50:00/);
  assert.ok(!text.includes("\x1b"), "no colour when colour is off");
  assert.ok(lines.every((l) => [...l].length <= 100), "fits the terminal");
});

Deno.test("the chart's colours distinguish the series when colour is on", () => {
  const text = renderChart(data, { columns: 100, color: true });
  assert.ok(text.includes("\x1b[36m━━\x1b[0m RING"), "cyan for the first series");
  assert.ok(text.includes("\x1b[33m━━\x1b[0m RF"), "yellow for the second");
});

Deno.test("device names and units in a chart are shown escaped", () => {
  const evil: PlotData = {
    ...data,
    title: "t\x1b]0;pwned\x07",
    series: [{ name: "X\x1b[2J", units: "m\u202eA", points: [[T0, 1], [T0 + 1000, 2]] }],
  };
  const text = renderChart(evil, { columns: 80, color: false });
  assert.ok(!text.includes("\x1b") && !text.includes("\x07") && !text.includes("\u202e"));
  assert.match(text, /X\\x1b\[2J/);
  assert.match(text, /t\\x1b\]0;pwned\\x07/);
});

Deno.test("a scan's chart has a value axis", () => {
  const scan: PlotData = {
    title: "scan",
    xKind: "value",
    xLabel: "RF:PHASE:SETPT",
    series: [{ name: "DIAG:ENERGY:MEAS", units: "MeV", points: [[-4, 100], [-5, 102], [-6, 101]] }],
  };
  const text = renderChart(scan, { columns: 80, color: false });
  assert.match(text, /x: RF:PHASE:SETPT/);
  assert.match(text, /max 102 MeV at -5/);
});
