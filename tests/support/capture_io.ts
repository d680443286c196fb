/**
 * An {@link Io} that keeps what is written, for tests of commands that print.
 *
 * @module
 */
import type { Io } from "../../src/app/io.ts";

/** `text()` returns what was written since the last call (stdout and stderr together). */
export function captureIo(
  env: Record<string, string> = {},
  cwd = "/",
): Io & { text: () => string } {
  let out = "";
  return {
    out: (t) => void (out += t),
    err: (t) => void (out += t),
    stdinIsTerminal: false,
    stdoutIsTerminal: false,
    stderrIsTerminal: false,
    color: false,
    columns: () => 100,
    env: (n) => env[n],
    cwd,
    text: () => {
      const t = out;
      out = "";
      return t;
    },
  };
}
