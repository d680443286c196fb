/**
 * `list_scripts`: the operator's saved Python scripts and what each does
 * (its docstring's first line), optionally filtered by keywords.
 *
 * @module
 */
import { z } from "zod";
import { listScripts, type ScriptInfo } from "../sandbox/scripts.ts";
import { defineTool, ToolError } from "./define.ts";
import { requireSandbox } from "./sandbox_result.ts";

const Parameters = z.strictObject({
  keyword: z.string().optional().describe(
    "Words that must all appear in the script's name or description, e.g. orbit",
  ),
});

/** What `list_scripts` returns. */
export interface ListScriptsResult {
  scripts: ScriptInfo[];
  total: number;
}

export const listScriptsTool = defineTool<typeof Parameters, ListScriptsResult>({
  name: "list_scripts",
  description: "List the operator's saved Python analysis scripts with their descriptions. " +
    "Run one with run_script.",
  parameters: Parameters,
  readOnly: true,
  async execute({ keyword }, { sandbox }) {
    const sb = requireSandbox(sandbox);
    if (!sb.scriptsDir) throw new ToolError("no scripts directory is configured");
    const scripts = await listScripts(sb.scriptsDir, keyword);
    return { scripts, total: scripts.length };
  },
});
