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
    const onSignal = Object.fromEntries(
      (["SIGTERM", "SIGHUP"] as const).map((
        signal,
      ) => [signal, () => settle({ kind: "stop", signal })]),
    ) as Record<"SIGTERM" | "SIGHUP", () => void>;
    const settle = (result: Input) => {
      if (settled) return;
      settled = true;
      for (const [signal, listener] of Object.entries(onSignal)) {
        Deno.removeSignalListener(signal as Deno.Signal, listener);
      }
      opts.onOpen?.(undefined);
      rl.close();
      input?.close();
      if (terminal) process.stdout.write(PASTE_OFF);
      resolve(result);
    };
    rl.on("SIGINT", () => {
      const line = (rl as unknown as { line: string }).line;
      process.stdout.write("\n");
      settle({ kind: "interrupt", empty: line === "" && lines.length === 0 });
    });
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
    for (const [signal, listener] of Object.entries(onSignal)) {
      Deno.addSignalListener(signal as Deno.Signal, listener);
    }
    opts.onOpen?.(rl);
    rl.setPrompt(opts.prompt);
    rl.prompt();
  });
}

/** The terminal's input as readline should see it: pastes folded by {@link PasteFilter}. */
function pasteAwareStdin(): { stream: PassThrough; close(): void } {
  const stream = new PassThrough();
  const filter = new PasteFilter();
  const decoder = new TextDecoder();
  // readline switches raw mode on the stream it reads: pass it to the terminal.
  Object.assign(stream, {
    isTTY: true,
    setRawMode(mode: boolean) {
      process.stdin.setRawMode(mode);
      return stream;
    },
  });
  const onData = (chunk: Uint8Array | string) => {
    const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    const out = filter.feed(text);
    if (out) stream.write(out);
  };
  const onEnd = () => stream.end();
  process.stdin.on("data", onData);
  process.stdin.on("end", onEnd);
  process.stdin.resume();
  return {
    stream,
    close() {
      process.stdin.off("data", onData);
      process.stdin.off("end", onEnd);
      process.stdin.pause();
      stream.end();
    },
  };
}
