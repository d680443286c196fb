/**
 * CSV files as plot data, and the one-line errors a bad file gives.
 */
import assert from "node:assert/strict";
import { parseCsv, PlotError } from "../../src/plots/csv.ts";
import { csvData } from "../../src/plots/sources.ts";
import { tempDir } from "../support/temp.ts";

Deno.test("a CSV with a time column gives a time axis, units from the header and gaps for empty cells", () => {
  const d = parseCsv(
    'time,"RING:DCCT:CURRENT [mA]",RF:AMPL:RDBK (%)\n' +
      "2026-11-20T10:00:00Z,300.1,99.9\n2026-11-20T10:00:01Z,,100.1\n2026-11-20T10:00:02,299.5,100\n",
    "out.csv",
  );
  assert.equal(d.xKind, "time");
  assert.deepEqual(d.series.map((s) => [s.name, s.units, s.points.length]), [
    ["RING:DCCT:CURRENT", "mA", 2],
    ["RF:AMPL:RDBK", "%", 3],
  ]);
  assert.deepEqual(d.series[0]?.points[1], [Date.parse("2026-11-20T10:00:02Z"), 299.5]);
});

Deno.test("a CSV with a numeric first column gives a value axis named by its header", () => {
  const d = parseCsv("phase,energy\n-4,100\n-5,101.5\n", "scan.csv", { columns: ["energy"] });
  assert.equal(d.xKind, "value");
  assert.equal(d.xLabel, "phase");
  assert.deepEqual(d.series[0]?.points, [[-4, 100], [-5, 101.5]]);
});

Deno.test("a bad CSV is refused in one line naming the file, the line and the column", () => {
  const bad: [string, RegExp, string[]?][] = [
    ["", /^e\.csv:1: needs a header row/],
    ["only\n1\n", /^e\.csv:1: needs a header row/],
    ["x,a\n1,2\n2,abc\n", /^e\.csv:3: column a: "abc" is not a number$/],
    ["x,a\n1,2\nnope,3\n", /^e\.csv:3: x "nope" is not a number$/],
    ['x,a\n1,"2\n', /^e\.csv:2: a quoted cell is not closed$/],
    ["x,a\n1,\n2,\n", /^e\.csv: no numeric values to plot$/],
    ["x,a\n1,2\n", /^e\.csv: no column "b"; columns: x, a$/, ["b"]],
    [`x,${Array.from({ length: 21 }, (_, i) => `c${i}`).join(",")}\n`, /at most 20/],
  ];
  for (const [text, re, columns] of bad) {
    assert.throws(() => parseCsv(text, "e.csv", { columns }), (e: Error) => {
      assert.ok(e instanceof PlotError, String(e));
      assert.match(e.message, re);
      assert.ok(!e.message.includes("\n"));
      return true;
    });
  }
});

Deno.test("a CSV file is read only from inside the work directory", async () => {
  await using dir = await tempDir();
  const work = `${dir.path}/work`;
  await Deno.mkdir(`${work}/run-1/work`, { recursive: true });
  await Deno.writeTextFile(`${work}/run-1/work/out.csv`, "x,y\n1,2\n2,3\n");
  await Deno.writeTextFile(`${dir.path}/secret.csv`, "x,y\n1,2\n");
  await Deno.symlink(`${dir.path}/secret.csv`, `${work}/run-1/work/link.csv`);
  await Deno.writeFile(`${work}/bin.csv`, new Uint8Array([120, 44, 121, 10, 0, 1, 2]));
  assert.equal((await csvData(work, "run-1/work/out.csv")).series[0]?.points.length, 2);
  await assert.rejects(csvData(work, "../secret.csv"), /not inside the work directory/);
  await assert.rejects(csvData(work, "run-1/work/link.csv"), /not inside the work directory/);
  await assert.rejects(csvData(work, `${dir.path}/secret.csv`), /not inside the work directory/);
  await assert.rejects(
    csvData(work, "missing.csv"),
    /missing\.csv: no such file in the work directory/,
  );
  await assert.rejects(csvData(work, "bin.csv"), /bin\.csv: not a text file/);
  await assert.rejects(csvData(work, "run-1"), PlotError);
});
