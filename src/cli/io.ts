/**
 * The terminal, behind a small interface so renderers can be tested and the
 * program's output goes through one place.
 *
 * @module
 */

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

/** Reads all of stdin as text. */
export async function readStdin(): Promise<string> {
  return await new Response(Deno.stdin.readable).text();
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
