/**
 * Saves a plot in the work directory's `plots/`: the SVG, and the data
 * (thinned for a terminal) as JSON beside it, which the REPL reads to draw
 * the chart inline. The work directory's housekeeping removes only `run-*`
 * directories, so plots stay until the operator removes them.
 *
 * @module
 */
import { type PlotData, thin } from "./data.ts";
import { chartSvg } from "./svg.ts";
import { makePrivateDir, writePrivateFile } from "../util/private_files.ts";
import { readRegularTextSync } from "../util/bounded_read.ts";

/** Points per series kept in the data file: more than any terminal has columns. */
const DATA_POINTS = 400;
/** The largest data file read back (400 points per series is a few hundred KiB). */
const MAX_DATA_BYTES = 16 << 20;

/** The files of a saved plot. */
export interface SavedPlot {
  svg: string;
  data: string;
}

/** Writes `data`'s SVG and JSON into `<workDir>/plots/`; returns their paths. */
export async function savePlot(workDir: string, data: PlotData, nowMs: number): Promise<SavedPlot> {
  const dir = `${workDir}/plots`;
  await makePrivateDir(dir);
  const stamp = new Date(nowMs).toISOString().replace(/[:.]/g, "-");
  const slug = (data.series[0]?.name ?? "plot").replace(/[^A-Za-z0-9_-]+/g, "_").slice(0, 40);
  const base = `${dir}/plot-${stamp}-${slug}-${crypto.randomUUID().slice(0, 6)}`;
  const thinned: PlotData = {
    ...data,
    series: data.series.map((s) => ({ ...s, points: thin(s.points, DATA_POINTS / 4) })),
  };
  await writePrivateFile(`${base}.svg`, chartSvg(data));
  await writePrivateFile(`${base}.json`, JSON.stringify(thinned));
  return { svg: `${base}.svg`, data: `${base}.json` };
}

/** Reads a data file {@link savePlot} wrote; undefined when it is not one. */
export function readPlotData(path: string): PlotData | undefined {
  try {
    const d = JSON.parse(readRegularTextSync(path, MAX_DATA_BYTES)) as PlotData;
    return Array.isArray(d?.series) && (d.xKind === "time" || d.xKind === "value") ? d : undefined;
  } catch {
    return undefined;
  }
}
