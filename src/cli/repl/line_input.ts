/**
 * The prompt's line editor: node:readline (editing keys, history, Tab
 * completion) over the terminal's input with bracketed pastes folded into
 * the line, and continuation lines after a trailing backslash.
 *
 * @module
 */
import * as readline from "node:readline";
import process from "node:process";
import { PassThrough } from "node:stream";
import { PASTE_OFF, PASTE_ON, pastedText, PasteFilter } from "./paste.ts";
import type { Completion } from "./completion.ts";

/** What the operator gave at the prompt. */
export type Input =
  | { kind: "line"; text: string }
  | { kind: "interrupt"; empty: boolean }
  | { kind: "eof" }
  /** SIGTERM or SIGHUP came while the prompt was open; the terminal is restored. */
  | { kind: "stop"; signal: "SIGTERM" | "SIGHUP" };

/** How the prompt looks and what it knows. */
export interface LineOptions {
  prompt: string;
  /** The prompt of a continuation line (after a trailing backslash). */
  continuation: string;
  /** Newest first. */
  history: string[];
  complete?: (line: string) => Completion;
  /** Called with the editor while it is open, and with undefined once it closed. */
  onOpen?: (rl: readline.Interface | undefined) => void;
  /** Catches a Ctrl-C that arrives as SIGINT between two prompts (see {@link PromptSigint}). */
  sigint?: PromptSigint;
}

/**
 * Between two prompts the terminal is briefly out of raw mode, so a Ctrl-C
 * typed right after the last one (the second of "Ctrl-C twice") reaches the
 * process as SIGINT, whose default is to end it. Armed by the prompt and
 * left armed after it, this counts such a SIGINT as a Ctrl-C at the next
 * prompt. Disarm it before anything that handles SIGINT itself (a turn).
 */
export class PromptSigint implements Disposable {
  #listener: (() => void) | undefined;
  #missed = false;
  /** The open prompt's handler; undefined between prompts. */
  onSigint: (() => void) | undefined;

  arm(): void {
    if (this.#listener) return;
    this.#listener = () => {
      if (this.onSigint) this.onSigint();
      else this.#missed = true;
    };
    Deno.addSignalListener("SIGINT", this.#listener);
  }

  disarm(): void {
    if (this.#listener) Deno.removeSignalListener("SIGINT", this.#listener);
    this.#listener = undefined;
    this.#missed = false;
  }

  /** True once for a SIGINT that came while no prompt was open. */
  takeMissed(): boolean {
    const missed = this.#missed;
    this.#missed = false;
    return missed;
  }

  [Symbol.dispose](): void {
    this.disarm();
  }
}

/**
 * One message from the terminal: a line, or several when each but the last
 * ends in a backslash, or a paste of several lines (its line breaks are
 * kept). The terminal is back in normal mode, with pastes unmarked,
 * afterwards.
 */
export function readMessage(opts: LineOptions): Promise<Input> {
  const terminal = Deno.stdin.isTerminal();
  const input = terminal ? pasteAwareStdin() : undefined;
  const rl = readline.createInterface({
    input: input?.stream ?? process.stdin,
    output: process.stdout,
    terminal,
    history: [...opts.history],
    historySize: Math.max(opts.history.length, 1000),
    removeHistoryDuplicates: true,
    ...(opts.complete ? { completer: opts.complete } : {}),
  });
  if (terminal) process.stdout.write(PASTE_ON);
  return new Promise((resolve) => {
    let settled = false;
    const lines: string[] = [];
    // SIGTERM or SIGHUP at the prompt: end as a turn would, the terminal restored.
    const stops = (["SIGTERM", "SIGHUP"] as const).map((signal) => ({
      signal,
      listener: () => settle({ kind: "stop", signal }),
    }));
    const settle = (result: Input) => {
      if (settled) return;
      settled = true;
      if (opts.sigint) opts.sigint.onSigint = undefined;
      for (const { signal, listener } of stops) Deno.removeSignalListener(signal, listener);
      opts.onOpen?.(undefined);
      rl.close();
      input?.close();
      if (terminal) process.stdout.write(PASTE_OFF);
      resolve(result);
    };
    const interrupt = () => {
      const line = (rl as unknown as { line: string }).line;
      process.stdout.write("\n");
      settle({ kind: "interrupt", empty: line === "" && lines.length === 0 });
    };
    rl.on("SIGINT", interrupt);
    if (opts.sigint) {
      opts.sigint.arm();
      opts.sigint.onSigint = interrupt;
    }
    rl.on("close", () => settle({ kind: "eof" }));
    rl.on("line", (line: string) => {
      const text = pastedText(line);
      const continued = /(^|[^\\])(\\\\)*\\$/.test(text);
      lines.push(continued ? text.slice(0, -1) : text);
      if (!continued) {
        settle({ kind: "line", text: lines.join("\n") });
        return;
      }
      rl.setPrompt(opts.continuation);
      rl.prompt();
    });
    for (const { signal, listener } of stops) Deno.addSignalListener(signal, listener);
    opts.onOpen?.(rl);
    rl.setPrompt(opts.prompt);
    rl.prompt();
    input?.start();
    if (opts.sigint?.takeMissed()) interrupt();
  });
}

/**
 * Keys typed after the key that closed the last prompt (type-ahead: `x`,
 * Ctrl-C, Enter arriving in one read), kept for the next prompt instead of
 * going to the editor that closed.
 */
let carried = "";

/** Keys after which the editor may close: Enter, Ctrl-C, Ctrl-D. */
// deno-lint-ignore no-control-regex
const CLOSING = /[\r\n\x03\x04]/;

/**
 * The terminal's input as readline should see it: pastes folded by
 * {@link PasteFilter}, and each read cut after a key that may close the
 * editor; the rest follows once readline has handled that key, to this
 * editor when it is still open, else to the next one.
 */
function pasteAwareStdin(): { stream: PassThrough; start(): void; close(): void } {
  const stream = new PassThrough();
  const filter = new PasteFilter();
  const decoder = new TextDecoder();
  let closed = false;
  /** Text held until readline has handled a closing key. */
  let held: string | undefined;
  // readline switches raw mode on the stream it reads: pass it to the terminal.
  Object.assign(stream, {
    isTTY: true,
    setRawMode(mode: boolean) {
      process.stdin.setRawMode(mode);
      return stream;
    },
  });
  const feed = (text: string) => {
    if (closed) {
      carried += text;
      return;
    }
    if (held !== undefined) {
      held += text;
      return;
    }
    const at = text.search(CLOSING);
    if (at < 0 || at === text.length - 1) {
      if (text) stream.write(text);
      return;
    }
    // Held first: readline may handle the key, and the editor close, within this write.
    held = text.slice(at + 1);
    stream.write(text.slice(0, at + 1));
    setTimeout(() => {
      if (held === undefined) return;
      const rest = held;
      held = undefined;
      feed(rest);
    }, 0);
  };
  const onData = (chunk: Uint8Array | string) => {
    const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    feed(filter.feed(text));
  };
  const onEnd = () => stream.end();
  return {
    stream,
    start() {
      process.stdin.on("data", onData);
      process.stdin.on("end", onEnd);
      process.stdin.resume();
      const earlier = carried;
      carried = "";
      if (earlier) feed(earlier);
    },
    close() {
      if (closed) return;
      closed = true;
      carried += held ?? "";
      held = undefined;
      process.stdin.off("data", onData);
      process.stdin.off("end", onEnd);
      process.stdin.pause();
      stream.end();
    },
  };
}
