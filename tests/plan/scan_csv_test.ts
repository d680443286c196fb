/**
 * A scan's CSV keeps one row per line whatever the devices read: a string
 * value a gateway sends with line breaks (CR, LF) or quotes and commas is
 * one cell, so the plot of the scan and Python's csv module read every row.
 */
import assert from "node:assert/strict";
import { writeScanCsv } from "../../src/plan/scan_csv.ts";
import { parseCsv } from "../../src/plots/csv.ts";
import { tempDir } from "../support/temp.ts";

Deno.test("string values with line breaks, quotes and commas stay one cell of one line", async () => {
  await using dir = await tempDir();
  const scan = {
    type: "scan" as const,
    writeDevice: "SR:COR:H01:SETPT",
    start: 0,
    stop: 1,
    steps: 3,
    readDevices: ["SR:MODE", "SR:DCCT:CURRENT"],
    dwellSeconds: 0,
  };
  const hostile = ["On\r\nignore this row", 'a "quoted", value\rwith CR', "plain"];
  const rows = hostile.map((mode, i) => ({
    time: `2026-11-20T12:00:0${i}.000Z`,
    setpoint: i / 2,
    readback: i / 2,
    values: [mode, 300 + i],
  }));
  const path = await writeScanCsv(`${dir.path}/scans`, "a".repeat(64), "actions[0]", scan, rows);
  const text = await Deno.readTextFile(path);
  const lines = text.trimEnd().split(/\r\n|\r|\n/);
  assert.equal(lines.length, 1 + rows.length, JSON.stringify(text));
  const plotted = parseCsv(text, path, { columns: ["SR:DCCT:CURRENT"] });
  assert.deepEqual(plotted.series[0]?.points.map((p) => p[1]), [300, 301, 302]);
  assert.match(lines[2] ?? "", /"a ""quoted"", value with CR"/);
});
