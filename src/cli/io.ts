/**
 * The terminal, behind a small interface so renderers can be tested and the
 * program's output goes through one place.
 *
 * @module
 */
import { bytesText, readCapped, TooLargeError } from "../util/bounded_read.ts";
import { UsageError } from "./exit.ts";

export interface Io {
  out(text: string): void;
  err(text: string): void;
  readonly stdinIsTerminal: boolean;
  readonly stdoutIsTerminal: boolean;
  readonly stderrIsTerminal: boolean;
  readonly color: boolean;
  /** Width of the terminal, or 100 when there is none. */
  columns(): number;
  env(name: string): string | undefined;
  readonly cwd: string;
}

const encoder = new TextEncoder();

function writeAll(file: { writeSync(p: Uint8Array): number }, text: string): void {
  const bytes = encoder.encode(text);
  let off = 0;
  while (off < bytes.length) off += file.writeSync(bytes.subarray(off));
}

/** The real terminal. `color` follows the flag, NO_COLOR and whether stdout is a terminal. */
export function denoIo(opts: { noColor: boolean; colorSetting?: "auto" | "always" | "never" }): Io {
  const env = (name: string) => {
    try {
      return Deno.env.get(name);
    } catch {
      return undefined;
    }
  };
  const stdoutIsTerminal = Deno.stdout.isTerminal();
  const setting = opts.colorSetting ?? "auto";
  const color = !opts.noColor && env("NO_COLOR") === undefined &&
    (setting === "always" || (setting === "auto" && stdoutIsTerminal));
  return {
    out: (t) => writeAll(Deno.stdout, t),
    err: (t) => writeAll(Deno.stderr, t),
    stdinIsTerminal: Deno.stdin.isTerminal(),
    stdoutIsTerminal,
    stderrIsTerminal: Deno.stderr.isTerminal(),
    color,
    columns: () => {
      try {
        return Deno.consoleSize().columns || 100;
      } catch {
        return 100;
      }
    },
    env,
    cwd: Deno.cwd(),
  };
}

/** The most `ask` reads from stdin: a question, not a data file. */
export const MAX_STDIN_BYTES = 1 << 20;

/**
 * Reads all of stdin as text, at most {@link MAX_STDIN_BYTES}; more is a
 * usage error (exit 2) as soon as the cap is passed, so `< /dev/zero` ends.
 */
export async function readStdin(maxBytes = MAX_STDIN_BYTES): Promise<string> {
  try {
    return await readCapped(Deno.stdin.readable, maxBytes, "");
  } catch (e) {
    if (!(e instanceof TooLargeError)) throw e;
    throw new UsageError(
      `stdin holds more than ${
        bytesText(maxBytes)
      }: ask reads a question, not a data file; put the data in a file the agent can read`,
    );
  }
}

/**
 * Aborts `controller` on SIGINT until disposed.
 *
 * @example
 * ```ts
 * using _sigint = abortOnSigint(controller, "cancelled by SIGINT");
 * ```
 */
export function abortOnSigint(controller: AbortController, reason: string): Disposable {
  const onSigint = () => controller.abort(new Error(reason));
  Deno.addSignalListener("SIGINT", onSigint);
  return { [Symbol.dispose]: () => Deno.removeSignalListener("SIGINT", onSigint) };
}

/** The signals that end a one-shot command: Ctrl-C, a service manager or `kill`, a closed terminal. */
const ENDING_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const satisfies Deno.Signal[];

/**
 * Aborts `controller` on SIGINT, SIGTERM or SIGHUP until disposed, with
 * "cancelled by SIGTERM" (and so on) as the reason, so a command killed by a
 * service manager or a closed ssh session still ends the way Ctrl-C does:
 * cancelled, with its result printed.
 *
 * @example
 * ```ts
 * using _signals = abortOnSignals(controller);
 * ```
 */
export function abortOnSignals(controller: AbortController): Disposable {
  const listeners: [Deno.Signal, () => void][] = [];
  for (const sig of ENDING_SIGNALS) {
    const fn = () => controller.abort(new Error(`cancelled by ${sig}`));
    try {
      Deno.addSignalListener(sig, fn);
      listeners.push([sig, fn]);
    } catch { /* not a signal on this platform */ }
  }
  return {
    [Symbol.dispose]: () => {
      for (const [sig, fn] of listeners) Deno.removeSignalListener(sig, fn);
    },
  };
}
