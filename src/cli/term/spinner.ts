/**
 * A one-line spinner on stderr while waiting for the model or a tool.
 * Silent when stderr is not a terminal.
 *
 * @module
 */

import { realTimers, type Timers } from "../../util/misc.ts";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** A frame every 80 ms on `timers` (tests pass fake ones). */
export class Spinner {
  #timer?: ReturnType<typeof setTimeout>;
  #frame = 0;
  #label = "";
  readonly #out: (text: string) => void;
  readonly #enabled: boolean;

  constructor(
    write: (text: string) => void,
    enabled: boolean,
    readonly timers: Timers = realTimers,
  ) {
    this.#out = write;
    this.#enabled = enabled;
  }

  start(label: string): void {
    this.#label = label;
    if (!this.#enabled || this.#timer !== undefined) return;
    const tick = () => {
      this.#draw();
      this.#timer = this.timers.setTimeout(tick, 80);
    };
    tick();
  }

  stop(): void {
    if (this.#timer === undefined) return;
    this.timers.clearTimeout(this.#timer);
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
