/**
 * `run_script`: runs an operator script from the scripts directory in the
 * sandbox, with arguments as `sys.argv[1:]`. Not read-only for the loop:
 * the script writes files under WORK_DIR (see execute_code).
 *
 * @module
 */
import { z } from "zod";
import { readScript } from "../sandbox/scripts.ts";
import { defineTool, ToolError } from "./define.ts";
import { requireSandbox, type SandboxRunResult, shapeRun } from "./sandbox_result.ts";

const Parameters = z.strictObject({
  name: z.string().min(1).describe("Script name from list_scripts, e.g. orbit_rms"),
  args: z.array(z.string()).max(100).default([]).describe(
    "Arguments, as sys.argv[1:] (e.g. a file name under DATA_DIR)",
  ),
});

export const runScript = defineTool<typeof Parameters, SandboxRunResult>({
  name: "run_script",
  description: "Run one of the operator's saved Python scripts in the sandbox with arguments. " +
    "Find scripts with list_scripts.",
  parameters: Parameters,
  readOnly: false,
  async execute({ name, args }, { sandbox, signal }) {
    const sb = requireSandbox(sandbox);
    if (!sb.scriptsDir) throw new ToolError("no scripts directory is configured");
    let code: string;
    try {
      code = await readScript(sb.scriptsDir, name);
    } catch (e) {
      if (e instanceof RangeError) throw new ToolError(e.message);
      throw e;
    }
    const base = name.replace(/\.py$/, "");
    return await shapeRun(
      await sb.runner.run({ code, argv: [`/scripts/${base}.py`, ...args], signal }),
    );
  },
});
