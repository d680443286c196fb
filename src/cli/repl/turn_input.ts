/**
 * What the operator types while a turn runs. The terminal is put in cbreak
 * mode (no echo, no line editing, signals kept), so Ctrl-C still reaches
 * the turn as SIGINT and cancels it, and keystrokes never land in the
 * streamed answer; each line is handed over on Enter.
 *
 * A prompt (an approval, a question) takes the keys for itself with
 * {@link TurnInput.hold}: until it lets go, `start` does nothing, so an
 * event that arrives while the prompt is up cannot hand the prompt's keys
 * (the `y` of an approval, an answer) to the model as well.
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
  /** Prompts holding the terminal now; reading waits until none is. */
  #holds = 0;
  /** Reading when the first hold was taken: resumed when the last is let go. */
  #resume = false;
  #disposed = false;
  readonly #decoder = new TextDecoder();
  readonly #onData = (chunk: Uint8Array | string) => {
    const text = typeof chunk === "string" ? chunk : this.#decoder.decode(chunk, { stream: true });
    this.#feed(text);
  };

  constructor(readonly onLine: (text: string) => void) {}

  /**
   * Starts (again) reading; nothing happens when stdin is not a terminal,
   * while a prompt holds the keys, or once disposed.
   */
  start(): void {
    if (this.#on || this.#holds > 0 || this.#disposed || !Deno.stdin.isTerminal()) return;
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

  /**
   * Gives the keys to a prompt: reading stops now and `start` does nothing
   * until the returned function is called (once per hold); reading then
   * resumes if it was on.
   */
  hold(): () => void {
    if (this.#holds++ === 0) this.#resume = this.#on;
    this.pause();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holds === 0 && this.#resume) this.start();
    };
  }

  /** True while reading. */
  get reading(): boolean {
    return this.#on;
  }

  [Symbol.dispose](): void {
    this.#disposed = true;
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
