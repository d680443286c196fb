/**
 * Stop signals (SIGINT, SIGTERM, SIGHUP) that come while the program starts
 * — its modules load, its configuration is read, its app is built — before
 * a command listens for them itself. Under `--json` or `--stream-json` they
 * are heard from the first line of `main.ts` on, instead of killing the
 * program with nothing printed: `ask` takes them over (releasing this watch
 * and listening itself in one step, so none falls between) and ends its turn
 * at once with its one JSON result and the signal's exit code (128 + n); any
 * other command that has not started yet ends with one JSON error object and
 * that code. Once a command's result is out, a stop signal no longer kills
 * the program mid-exit (the launcher would take that for a program that
 * printed nothing).
 *
 * Nothing this module imports is heavy: it is loaded with `main.ts`.
 *
 * @module
 */
import { type EarlyStop, STOP_SIGNALS, type StopSignal } from "../app/io.ts";
import { wantsJson } from "./term/json_error.ts";

/**
 * Listens from now on when `args` ask for JSON; undefined otherwise (the
 * signals keep their default effect, as they always had).
 */
export function watchEarlySignals(args: readonly string[]): EarlyStop | undefined {
  if (!wantsJson(args).json) return undefined;
  let received: StopSignal | undefined;
  const listeners = STOP_SIGNALS.map((signal) => {
    const listener = () => received ??= signal;
    Deno.addSignalListener(signal, listener);
    return [signal, listener] as const;
  });
  let released = false;
  return {
    get received() {
      return received;
    },
    release() {
      if (released) return;
      released = true;
      for (const [signal, listener] of listeners) Deno.removeSignalListener(signal, listener);
    },
  };
}

/**
 * After a command's result is out, until the program exits: a stop signal
 * changes nothing (the exit is under way, with the result's own code). Only
 * where the signals were watched from the start (`watch` given).
 */
export function holdStopSignals(watch: EarlyStop | undefined): void {
  if (!watch) return;
  for (const signal of STOP_SIGNALS) Deno.addSignalListener(signal, () => {});
}
