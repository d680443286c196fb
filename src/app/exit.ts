/**
 * Exit codes, and the error that carries one up to `main`.
 *
 * @module
 */

export const Exit = {
  /** Answered, or the command did what it was asked. */
  OK: 0,
  /** Runtime failure: model unreachable, tool backend down, max iterations… */
  FAILURE: 1,
  /** Bad usage or configuration. */
  USAGE: 2,
  /** A plan needs approval but there is no terminal to ask on. */
  APPROVAL_REQUIRED: 3,
  /** Stopped by a closed terminal (SIGHUP): what was running stopped, restored and was recorded. */
  HANGUP: 129,
  /** Cancelled by SIGINT (Ctrl-C). */
  CANCELLED: 130,
  /** Stopped by SIGTERM (a service manager, `kill`), as SIGINT stops it. */
  TERMINATED: 143,
} as const;

export type ExitCode = typeof Exit[keyof typeof Exit];

/** An error that ends the program with a one-line message and a code. */
export class CliError extends Error {
  override name = "CliError";
  readonly code: ExitCode;
  constructor(message: string, code: ExitCode) {
    super(message);
    this.code = code;
  }
}

/** Bad command-line usage: exit 2. */
export class UsageError extends CliError {
  override name = "UsageError";
  constructor(message: string) {
    super(message, Exit.USAGE);
  }
}
