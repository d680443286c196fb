/**
 * How the plan and audit commands end on an error: the JSON object under
 * `--json`, and always the one-line message with its exit code.
 *
 * @module
 */
import type { Io } from "../../app/io.ts";
import { CliError, type ExitCode } from "../../app/exit.ts";
import { terminalJson } from "../../util/untrusted_text.ts";

/** Prints `{status, error, exit_code, …}` under --json, then ends with the one-line message. */
export function fail(
  io: Io,
  json: boolean,
  status: string,
  message: string,
  code: ExitCode,
  extra: Record<string, unknown> = {},
): never {
  if (json) {
    io.out(`${terminalJson({ status, ...extra, error: message, exit_code: code })}\n`);
  }
  throw new CliError(message, code);
}
