/**
 * The JSON a `--json` (or `--stream-json`) run prints when it ends before a
 * command produced its own result: a usage or config error, an empty question,
 * an internal error. Scripts read the same fields as in an `ask` result —
 * `ok`, `error.message`, `error.retryable`, `exit_code` — so one check covers
 * both.
 *
 * @example
 * ```ts
 * import { errorJson } from "./json_error.ts";
 * errorJson({ message: "unknown option --jsno", kind: "usage", code: 2, stream: false });
 * // {"schema":"accel-agent.error/1","ok":false,"error":{"message":"unknown option --jsno","kind":"usage","retryable":false},"exit_code":2}
 * ```
 *
 * @module
 */

import { terminalJson } from "../../util/untrusted_text.ts";

/** The schema id of the error object. */
export const ERROR_SCHEMA = "accel-agent.error/1";

/**
 * What went wrong: bad usage (exit 2), the config (exit 2), a runtime failure
 * (1), a bug (1), a signal (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
 */
export type ErrorKind = "usage" | "config" | "failure" | "internal" | "cancelled";

/** One line of JSON; under `--stream-json` it is the stream's `result` line. */
export function errorJson(
  e: { message: string; kind: ErrorKind; code: number; stream: boolean },
): string {
  const body = {
    ...(e.stream ? { type: "result" } : {}),
    schema: ERROR_SCHEMA,
    ok: false,
    error: { message: e.message.split("\n")[0] ?? "", kind: e.kind, retryable: false },
    exit_code: e.code,
  };
  return `${terminalJson(body, 0)}\n`;
}

/** Whether the raw arguments ask for JSON output (read before parsing, which may fail). */
export function wantsJson(args: readonly string[]): { json: boolean; stream: boolean } {
  const options = args.slice(0, args.includes("--") ? args.indexOf("--") : undefined);
  const stream = options.includes("--stream-json");
  return { json: stream || options.includes("--json"), stream };
}
