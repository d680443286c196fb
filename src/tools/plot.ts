/**
 * `plot`: a line chart of archived series, live values sampled for a short
 * time, a plan's scan, or a CSV file of the sandbox's work directory. It
 * writes an SVG (and the data) into the work directory's `plots/` and
 * returns the paths and a summary per series (n, min, max, mean, where the
 * extremes are); the REPL draws the chart in the terminal.
 *
 * @module
 */
import { z } from "zod";
import type { Timers } from "../util/misc.ts";
import { DeviceName } from "../plan_model/plan.ts";
import { summarise } from "../plots/data.ts";
import { PlotError } from "../plots/csv.ts";
import { archiveData, csvData, liveData, scanData } from "../plots/sources.ts";
import { savePlot } from "../plots/write.ts";
import { defineTool, type Tool, ToolError } from "./define.ts";

/** Where plots read scans and CSV files, and write their files. */
export interface PlotDeps {
  /** The sandbox's work root: CSV files are read from it, `plots/` is written in it. */
  workDir: string;
  /** Where plans record their scans. */
  scansDir: string;
  /** Timers for live sampling (tests pass fake ones). */
  timers?: Timers;
}

const Parameters = z.strictObject({
  source: z.enum(["archive", "live", "scan", "csv"]).describe(
    "archive: devices over a time range; live: read devices now, repeatedly, for a few seconds; " +
      "scan: a plan's recorded scan; csv: a CSV file in the sandbox's work directory",
  ),
  devices: z.array(DeviceName).min(1).max(8).optional().describe(
    "archive and live: exact device names, plotted together",
  ),
  from: z.string().optional().describe(
    'archive: start, ISO-8601 or relative like "-8h" (default: 24 hours before to)',
  ),
  to: z.string().optional().describe('archive: end, ISO-8601 or "now" (default)'),
  seconds: z.number().positive().max(50).optional().describe(
    "live: how long to sample, in seconds (default 10, at most 50)",
  ),
  every: z.number().min(0.1).max(600).optional().describe(
    "live: seconds between reads (default 1)",
  ),
  scan: z.string().optional().describe(
    "scan: the scan file's name from the plan's result (csv_files) or the plan hash",
  ),
  file: z.string().optional().describe(
    "csv: the file's path relative to the work directory (e.g. run-…/work/out.csv); " +
      "first column x (ISO times or numbers), a header row, one numeric series per other column",
  ),
  columns: z.array(z.string()).max(20).optional().describe(
    "csv and scan: only these columns (header names, e.g. a scan's read devices)",
  ),
});

type Args = z.output<typeof Parameters>;

/** Where the chart was saved, and each series' summary. */
export type PlotResult = ReturnType<typeof summarise> & {
  svg: string;
  data_file: string;
  /** Devices that could not be read, each with why. */
  errors?: { device: string; error: string }[];
};

/** The tool over the directories `deps()` returns at call time. */
export function plotTool(deps: () => PlotDeps | undefined = () => undefined): Tool<PlotResult> {
  return defineTool<typeof Parameters, PlotResult>({
    name: "plot",
    description:
      "Draw a line chart for the operator: archived series, live values sampled over a few seconds, " +
      "a plan's scan, or a CSV file the sandbox wrote. The operator sees the chart in the terminal; " +
      "an SVG is saved. The result gives the SVG's path and per series n, min, max, mean and where " +
      "the extremes are. Use it when a curve says more than numbers.",
    parameters: Parameters,
    readOnly: true,
    outsideText: "facility services (series names, units, errors)",
    async execute(args, { cs, now, signal }) {
      const d = deps();
      if (!d) throw new ToolError("plots are not available here");
      try {
        const { data, errors } = await load(args, d, cs, now, signal);
        const saved = await savePlot(d.workDir, data, now());
        return {
          svg: saved.svg,
          data_file: saved.data,
          ...summarise(data),
          ...(errors.length ? { errors } : {}),
        };
      } catch (e) {
        if (e instanceof PlotError) throw new ToolError(e.message);
        throw e;
      }
    },
  });
}

async function load(
  a: Args,
  d: PlotDeps,
  cs: Parameters<typeof archiveData>[0],
  now: () => number,
  signal: AbortSignal,
) {
  const need = (value: unknown, what: string) => {
    if (value === undefined) throw new PlotError(`source ${a.source} needs ${what}`);
  };
  switch (a.source) {
    case "archive":
      need(a.devices, "devices");
      return await archiveData(
        cs,
        { devices: a.devices ?? [], from: a.from, to: a.to },
        now(),
        signal,
      );
    case "live":
      need(a.devices, "devices");
      return await liveData(
        cs,
        {
          devices: a.devices ?? [],
          forMs: (a.seconds ?? 10) * 1000,
          everyMs: (a.every ?? 1) * 1000,
        },
        now,
        signal,
        d.timers,
      );
    case "scan":
      need(a.scan, "scan (a scan file's name or a plan hash)");
      return {
        data: await scanData(cs, d.scansDir, a.scan ?? "", signal, a.columns),
        errors: [],
      };
    case "csv":
      need(a.file, "file (a path in the work directory)");
      return { data: await csvData(d.workDir, a.file ?? "", a.columns), errors: [] };
  }
}
