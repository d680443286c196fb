/**
 * What the operator types while a turn runs. The terminal is put in cbreak
 * mode (no echo, no line editing, signals kept), so Ctrl-C still reaches
 * the turn as SIGINT and cancels it, and keystrokes never land in the
 * streamed answer; each line is handed over on Enter.
 *
 * @module
 */
import process from "node:process";

/** Key sequences a line typed during a turn ignores: arrows, function keys, Alt-combinations. */
// deno-lint-ignore no-control-regex
const ESCAPE_SEQUENCE = /\x1b(\[[0-?]*[ -/]*[@-~]|O.|.)?/g;

/**
 * Reads lines from the terminal until paused or disposed. `onLine` gets each
 * line (trimmed, not empty). Backspace erases, Ctrl-U clears the line.
 */
export class TurnInput implements Disposable {
  #line = "";
  #on = false;
  readonly #decoder = new TextDecoder();
  readonly #onData = (chunk: Uint8Array | string) => {
    const text = typeof chunk === "string" ? chunk : this.#decoder.decode(chunk, { stream: true });
    this.#feed(text);
  };

  constructor(readonly onLine: (text: string) => void) {}

  /** Starts (again) reading; nothing happens when stdin is not a terminal. */
  start(): void {
    if (this.#on || !Deno.stdin.isTerminal()) return;
    this.#on = true;
    Deno.stdin.setRaw(true, { cbreak: true });
    process.stdin.on("data", this.#onData);
    process.stdin.resume();
  }

  /** Stops reading, so a prompt (an approval, a question) has the terminal to itself. */
  pause(): void {
    if (!this.#on) return;
    this.#on = false;
    process.stdin.off("data", this.#onData);
    process.stdin.pause();
    Deno.stdin.setRaw(false);
  }

  /** True while reading. */
  get reading(): boolean {
    return this.#on;
  }

  [Symbol.dispose](): void {
    this.pause();
  }

  #feed(text: string): void {
    for (const ch of text.replace(ESCAPE_SEQUENCE, "")) {
      if (ch === "\r" || ch === "\n") {
        const line = this.#line.trim();
        this.#line = "";
        if (line) this.onLine(line);
      } else if (ch === "\x7f" || ch === "\b") {
        this.#line = [...this.#line].slice(0, -1).join("");
      } else if (ch === "\x15") {
        this.#line = "";
      } else if (ch >= " ") {
        this.#line += ch;
      }
    }
  }
}
