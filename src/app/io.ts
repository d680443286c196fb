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

/**
 * Writes all of `text`. A terminal that is gone (closed over ssh: EIO) or a
 * reader that left (EPIPE) must not break what is running — a plan that is
 * restoring a magnet above all — so such a failure drops the text.
 */
function writeAll(file: { writeSync(p: Uint8Array): number }, text: string): void {
  const bytes = encoder.encode(text);
  let off = 0;
  try {
    while (off < bytes.length) off += file.writeSync(bytes.subarray(off));
  } catch (e) {
    if (!(e instanceof Deno.errors.BrokenPipe || isIoError(e))) throw e;
  }
}

/** EIO: what a write to a terminal whose other end was closed gets. */
function isIoError(e: unknown): boolean {
  return e instanceof Error && /\(os error 5\)|EIO|Input\/output error/i.test(e.message);
}

/** A colour or style escape (SGR), as `cli/term/style.ts` writes them. */
// deno-lint-ignore no-control-regex
const SGR = /\x1b\[[0-9;]*m/g;

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
  const stderrIsTerminal = Deno.stderr.isTerminal();
  // Colour follows stdout; stderr redirected to a file gets none unless "always" asks for it.
  const plainErr = color && setting !== "always" && !stderrIsTerminal;
  return {
    out: (t) => writeAll(Deno.stdout, t),
    err: (t) => writeAll(Deno.stderr, plainErr ? t.replace(SGR, "") : t),
    stdinIsTerminal: Deno.stdin.isTerminal(),
    stdoutIsTerminal,
    stderrIsTerminal,
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

/** The signals that stop what is running: Ctrl-C, a service manager or `kill`, a closed terminal. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
export type StopSignal = typeof STOP_SIGNALS[number];

/** The exit code after a stop signal, as a shell reports a process it ended: 128 + its number. */
export const SIGNAL_EXIT: Record<StopSignal, 129 | 130 | 143> = {
  SIGHUP: 129,
  SIGINT: 130,
  SIGTERM: 143,
};

/** Listening for stop signals; `received` is the first that came, if any. */
export interface SignalWatch extends Disposable {
  readonly received: StopSignal | undefined;
}

/**
 * Aborts `controller` on SIGINT, SIGTERM or SIGHUP until disposed, with
 * `reason(signal)` as the abort's message. While it listens, none of them
 * ends the process: what is running (a plan above all) stops the way
 * Ctrl-C stops it, restores what it changed and records it; the caller then
 * exits with {@link SIGNAL_EXIT} for the signal. A repeated signal changes
 * nothing. Once disposed, each signal has its default effect again.
 * `already`: a signal that came before (see `EarlyStop`), taken as if it
 * came now.
 *
 * @example
 * ```ts
 * using watch = abortOnSignals(controller, (sig) => `cancelled by ${sig}`);
 * ```
 */
export function abortOnSignals(
  controller: AbortController,
  reason: (signal: StopSignal) => string,
  already?: StopSignal,
): SignalWatch {
  let received: StopSignal | undefined = already;
  if (already && !controller.signal.aborted) controller.abort(new Error(reason(already)));
  const listeners = STOP_SIGNALS.map((signal) => {
    const listener = () => {
      received ??= signal;
      if (!controller.signal.aborted) controller.abort(new Error(reason(signal)));
    };
    Deno.addSignalListener(signal, listener);
    return [signal, listener] as const;
  });
  return {
    get received() {
      return received;
    },
    [Symbol.dispose]: () => {
      for (const [signal, listener] of listeners) Deno.removeSignalListener(signal, listener);
    },
  };
}

/**
 * Stop signals listened for since the program started (see
 * `src/cli/early_signals.ts`), until a command takes them over.
 */
export interface EarlyStop {
  /** The first stop signal that came, if any. */
  readonly received: StopSignal | undefined;
  /** Stops listening; the caller listens itself from the same step on. */
  release(): void;
}

/** The abort message for a stop signal in a command without a terminal of its own. */
export function cancelledBy(signal: StopSignal): string {
  return `cancelled by ${signal}`;
}
