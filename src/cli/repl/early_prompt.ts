/**
 * The REPL's prompt drawn as soon as the configuration is read, while the
 * rest of the program (tools, plans, sandbox, sub-agents) loads behind it.
 * The terminal is in raw mode meanwhile, so what the operator types (Ctrl-C
 * too) waits unechoed in its input buffer and reaches the line editor when
 * it takes over, as if typed at its prompt; the early prompt is erased, and
 * the terminal's mode restored, just before the session draws its banner
 * and its own prompt in its place (or anything else is printed). A signal
 * that stops the program meanwhile (SIGINT, SIGTERM, SIGHUP) restores the
 * terminal first, so the shell does not get it back in raw mode.
 *
 * @module
 */
import type { Io } from "../../app/io.ts";
import type { ConfigGlance } from "../../config/glance.ts";
import { style } from "../term/style.ts";

/** The prompt, as `repl.ts` draws it. */
export const PROMPT_TEXT = "accel› ";

/** An early prompt on screen; `erase` removes it (once) before anything else is printed. */
export interface EarlyPrompt {
  erase(): void;
}

/**
 * Draws the prompt when a session will start at once: both ends a terminal
 * and a model that looks callable (else the session's own message comes
 * first, with no prompt before it). Undefined when it drew nothing.
 */
export function earlyPrompt(glance: ConfigGlance | undefined, io: Io): EarlyPrompt | undefined {
  if (!glance?.modelReady || !io.stdinIsTerminal || !io.stdoutIsTerminal) return undefined;
  try {
    Deno.stdin.setRaw(true);
  } catch {
    return undefined;
  }
  io.out(style(io.color).cyan(PROMPT_TEXT));
  let shown = true;
  const stops = STOP_SIGNALS.map(([signal, code]) => {
    const stop = () => {
      prompt.erase();
      Deno.exit(code);
    };
    Deno.addSignalListener(signal, stop);
    return () => Deno.removeSignalListener(signal, stop);
  });
  const prompt = {
    erase() {
      if (!shown) return;
      shown = false;
      for (const remove of stops) remove();
      io.out("\r\x1b[2K");
      try {
        Deno.stdin.setRaw(false);
      } catch { /* the terminal is gone; nothing to restore */ }
    },
  };
  return prompt;
}

/** Signals that end the program while the early prompt is up, and the exit code each gives. */
const STOP_SIGNALS: readonly [Deno.Signal, number][] = [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
];
