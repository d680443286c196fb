/**
 * What the model reads of a sandbox run: output, the one-line error, and the
 * files written (with a preview of small text files), shared by
 * `execute_code` and `run_script`.
 *
 * @module
 */
import type { OutputFile, RunResult, SandboxDeps } from "../sandbox/types.ts";
import { ToolError } from "./define.ts";
import { readRegularBytes } from "../util/bounded_read.ts";

/** Text files up to this size are shown to the model inline. */
const PREVIEW_BYTES = 2_000;

/** A file the run wrote, with its text when it is small and text. */
export interface ShownFile extends OutputFile {
  preview?: string;
}

/** What the model reads of a sandbox run (`run_script`, and `execute_code` with more). */
export interface SandboxRunResult {
  ok: boolean;
  error?: string;
  stdout: string;
  stderr?: string;
  files?: ShownFile[];
  files_omitted?: number;
  ms: number;
}

/** The sandbox, or a ToolError the model reads when it is off. */
export function requireSandbox(sandbox: SandboxDeps | undefined): SandboxDeps {
  if (!sandbox) throw new ToolError("the Python sandbox is not available in this session");
  return sandbox;
}

/** A compact result object for the model and for `--json`. */
export async function shapeRun(r: RunResult): Promise<SandboxRunResult> {
  const files: ShownFile[] = [];
  for (const f of r.files) {
    let preview: string | undefined;
    if (!f.note && f.bytes <= PREVIEW_BYTES) {
      try {
        const bytes = await readRegularBytes(f.path, PREVIEW_BYTES);
        preview = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        preview = undefined; // binary: the path is enough
      }
    }
    files.push({ ...f, ...(preview !== undefined ? { preview } : {}) });
  }
  return {
    ok: r.ok,
    ...(r.error ? { error: r.error } : {}),
    stdout: r.stdout,
    ...(r.stderr ? { stderr: r.stderr } : {}),
    ...(files.length ? { files } : {}),
    ...(r.filesOmitted ? { files_omitted: r.filesOmitted } : {}),
    ms: Math.round(r.ms),
  };
}
