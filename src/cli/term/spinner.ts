/**
 * A one-line spinner on stderr while waiting for the model or a tool.
 * Silent when stderr is not a terminal.
 *
 * @module
 */

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export class Spinner {
  #timer?: ReturnType<typeof setInterval>;
  #frame = 0;
  #label = "";
  readonly #out: (text: string) => void;
  readonly #enabled: boolean;

  constructor(write: (text: string) => void, enabled: boolean) {
    this.#out = write;
    this.#enabled = enabled;
  }

  start(label: string): void {
    this.#label = label;
    if (!this.#enabled || this.#timer !== undefined) return;
    this.#draw();
    this.#timer = setInterval(() => this.#draw(), 80);
  }

  stop(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#out("\r\x1b[2K");
  }

  get running(): boolean {
    return this.#timer !== undefined;
  }

  #draw(): void {
    const f = FRAMES[this.#frame++ % FRAMES.length];
    this.#out(`\r\x1b[2K\x1b[2m${f} ${this.#label}\x1b[22m`);
  }
}
