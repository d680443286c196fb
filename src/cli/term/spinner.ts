/**
 * A one-line spinner on stderr while waiting for the model or a tool, with
 * the time waited once it passes a second ("⠋ thinking… 14 s"), so a model
 * that stalls is seen. Silent when stderr is not a terminal.
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
  #since = 0;
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

  /**
   * Shows `label`, counting the time waited from `since` (a time on the
   * spinner's timers; default now). A running spinner takes the new label
   * and count at its next frame.
   */
  start(label: string, since?: number): void {
    this.#label = label;
    this.#since = since ?? this.timers.now();
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
    const waited = Math.floor((this.timers.now() - this.#since) / 1000);
    const count = waited >= 1 ? ` ${waited} s` : "";
    this.#out(`\r\x1b[2K\x1b[2m${f} ${this.#label}${count}\x1b[22m`);
  }
}
