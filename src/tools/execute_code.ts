/**
 * `execute_code`: runs Python in the sandbox (no network, no environment, no
 * subprocesses; data read-only; files written to WORK_DIR come back), and can
 * save the code as an operator script.
 *
 * Not read-only for the loop: a run writes files under WORK_DIR and `save_as`
 * writes into the scripts directory, so a later call in the same response
 * (run_script of the saved name, a run reading an earlier output) must see
 * them; and there is one interpreter, so concurrent calls would only queue.
 *
 * @module
 */
import { z } from "zod";
import { analyse } from "../sandbox/analysis.ts";
import { saveScript } from "../sandbox/scripts.ts";
import { defineTool, ToolError } from "./define.ts";
import { requireSandbox, type SandboxRunResult, shapeRun } from "./sandbox_result.ts";
import { errorMessage } from "../util/errors.ts";

const Parameters = z.strictObject({
  code: z.string().min(1).max(200_000).describe(
    "Python 3 source. Standard library (csv, json, statistics, math, sqlite3…) plus local packages. " +
      "DATA_DIR/DATA_DIRS (read-only data), SCRIPTS_DIR and WORK_DIR (write output files here) " +
      "are global variables. Print the results you need.",
  ),
  description: z.string().min(1).max(500).describe(
    "One sentence saying what the code computes (shown to the operator; the docstring of a saved script)",
  ),
  save_as: z.string().optional().describe(
    "Save the code, when it runs without error, as an operator script of this name (e.g. orbit_rms)",
  ),
});

/** What `execute_code` returns: the run, the analysis's warnings, and whether it was saved. */
export interface ExecuteCodeResult extends SandboxRunResult {
  warnings?: string[];
  /** Where the script was saved, or why it was not. */
  saved?: string;
}

export const executeCode = defineTool<typeof Parameters, ExecuteCodeResult>({
  name: "execute_code",
  description: "Run Python analysis code in an isolated sandbox that cannot reach the machine, " +
    "the network or the host. Use it for statistics, fits and file outputs on exported data. " +
    "It cannot read or write devices: use the device tools for that.",
  parameters: Parameters,
  readOnly: false,
  async execute({ code, description, save_as }, { sandbox, signal }) {
    const sb = requireSandbox(sandbox);
    const { blocked, warnings } = analyse(code, sb.packages);
    if (blocked.length) throw new ToolError(`not run: ${blocked.join("; ")}`);
    const result = await shapeRun(await sb.runner.run({ code, argv: ["<code>"], signal }));
    let saved: string | undefined;
    if (save_as) {
      if (!sb.scriptsDir) throw new ToolError("no scripts directory is configured; not saved");
      if (result.ok) {
        saved = await saveScript(sb.scriptsDir, save_as, description, code, new Date())
          .catch((e: unknown) => `not saved: ${errorMessage(e)}`);
      } else saved = "not saved: the code failed";
    }
    return {
      ...result,
      ...(warnings.length ? { warnings } : {}),
      ...(saved ? { saved } : {}),
    };
  },
});
