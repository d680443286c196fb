/**
 * `accel-agent plot`: the `plot` tool driven by the operator — the same
 * sources, checks and files. Prints the chart and the SVG's path; `--json`
 * prints the tool's result: the SVG and data paths and the summary. Ctrl-C
 * stops live sampling.
 *
 * @module
 */
import type { App } from "../../app/app.ts";
import { CliError, Exit } from "../../app/exit.ts";
import {
  abortOnSignals,
  cancelledBy,
  type Io,
  SIGNAL_EXIT,
  type StopSignal,
} from "../../app/io.ts";
import { readPlotData } from "../../plots/write.ts";
import { renderChart } from "../term/chart.ts";
import { style } from "../term/style.ts";
import { terminalJson, untrusted } from "../../util/untrusted_text.ts";

type Row = Record<string, unknown>;

export async function runPlot(
  app: App,
  args: Record<string, unknown>,
  json: boolean,
  io: Io,
): Promise<number> {
  const controller = new AbortController();
  let stoppedBy: StopSignal | undefined;
  const outcome = await (async () => {
    using stop = abortOnSignals(controller, cancelledBy);
    try {
      return await app.tools.execute("plot", JSON.stringify(args), controller.signal);
    } finally {
      stoppedBy = stop.received;
    }
  })();
  if (stoppedBy) throw new CliError(cancelledBy(stoppedBy), SIGNAL_EXIT[stoppedBy]);
  const result = (outcome.fullResult ?? outcome.result) as Row;
  if (!outcome.ok) {
    if (json) io.out(`${terminalJson(result)}\n`);
    const e = typeof result?.error === "string" ? result.error : "the plot failed";
    throw new CliError(
      e.replace(/^plot failed: /, "").split(". Schema: ")[0] as string,
      Exit.FAILURE,
    );
  }
  const errors = (result.errors ?? []) as { device: string; error: string }[];
  if (json) {
    io.out(`${terminalJson(result)}\n`);
  } else {
    const data = readPlotData(String(result.data_file));
    if (data) io.out(renderChart(data, { columns: io.columns(), color: io.color }));
    io.out(`${style(io.color).dim(`svg: ${untrusted(String(result.svg))}`)}\n`);
    for (const e of errors) io.err(`accel-agent: ${untrusted(e.device)}: ${untrusted(e.error)}\n`);
  }
  // A device that could not be plotted is a failure for scripts, even when others were.
  return errors.length ? Exit.FAILURE : Exit.OK;
}
