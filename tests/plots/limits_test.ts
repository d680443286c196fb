/**
 * Plots at every size their limits allow: a CSV of the largest number of
 * rows and series is parsed, summarised, drawn and saved (as the plot tool
 * and `accel-agent plot` do), under the user's grants too.
 */
import assert from "node:assert/strict";
import { MAX_ROWS, MAX_SERIES, parseCsv } from "../../src/plots/csv.ts";
import { summarise } from "../../src/plots/data.ts";
import { MAX_CSV_BYTES } from "../../src/plots/sources.ts";
import { chartSvg } from "../../src/plots/svg.ts";
import { readPlotData, savePlot } from "../../src/plots/write.ts";
import { loadSyncReader } from "../../src/util/bounded_read.ts";
import { tempDir } from "../support/temp.ts";
import { UserSetup } from "../support/user_grants.ts";

/** MAX_ROWS rows of an x and MAX_SERIES series, the last row holding each series' peak. */
function largestCsv(): string {
  const rows = [["x", ...Array.from({ length: MAX_SERIES }, (_, k) => `s${k} [mA]`)].join(",")];
  for (let i = 0; i < MAX_ROWS - 1; i++) {
    rows.push([i, ...Array.from({ length: MAX_SERIES }, (_, k) => (i * (k + 1)) % 97)].join(","));
  }
  rows.push([MAX_ROWS - 1, ...Array.from({ length: MAX_SERIES }, (_, k) => 1000 + k)].join(","));
  return `${rows.join("\n")}\n`;
}

Deno.test("a CSV of the most rows and series allowed is summarised, drawn and saved", async () => {
  const text = largestCsv();
  assert.ok(text.length <= MAX_CSV_BYTES, `${text.length} bytes`);
  const data = parseCsv(text, "largest.csv");
  assert.equal(data.series.length, MAX_SERIES);
  const summary = summarise(data);
  assert.deepEqual(summary.x, { kind: "value", label: "x", from: 0, to: MAX_ROWS - 1 });
  for (const [k, s] of summary.series.entries()) {
    assert.equal(s.n, MAX_ROWS);
    assert.equal(s.max, 1000 + k);
    assert.equal(s.max_at, MAX_ROWS - 1);
  }
  const svg = chartSvg(data);
  assert.equal(svg.match(/<polyline class="series"/g)?.length, MAX_SERIES);
  assert.doesNotMatch(svg, /NaN|Infinity/);
  await using dir = await tempDir();
  const saved = await savePlot(dir.path, data, Date.parse("2026-01-01T00:00:00Z"));
  // In the program the config's read has loaded the synchronous reader by now.
  await loadSyncReader();
  assert.equal(readPlotData(saved.data)?.series.length, MAX_SERIES);
});

Deno.test({
  name:
    "accel-agent plot charts a CSV of the most rows and series allowed, under the user's grants",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using user = await UserSetup.start({
      extra: `[sandbox]\nwork_dir = "work"\nprewarm = false\n`,
    });
    await Deno.mkdir(`${user.dir}/work/run-1/work`, { recursive: true });
    await Deno.writeTextFile(`${user.dir}/work/run-1/work/largest.csv`, largestCsv());
    const r = await user.run(["plot", "--csv", "run-1/work/largest.csv", "--json"], {
      ceilingMs: 600_000,
    });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.series.length, MAX_SERIES);
    assert.ok(out.series.every((s: { n: number }) => s.n === MAX_ROWS));
    assert.match(await Deno.readTextFile(out.svg), /<\/svg>\n$/);
  },
});
