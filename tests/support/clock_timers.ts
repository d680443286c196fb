/**
 * Timers that run on a {@link ManualClock}: each fires on the next turn of
 * the event loop and moves the clock to its due time, so a plan's waits,
 * dwells and readback settling take simulated time, not real time, and the
 * simulator's slow signals move while the executor waits.
 *
 * @module
 */
import type { ManualClock } from "../../src/adapters/clock.ts";
import type { Timers } from "../../src/util/misc.ts";

export class ClockTimers implements Timers {
  /** Every delay asked for, in ms. */
  readonly delays: number[] = [];

  constructor(readonly clock: ManualClock) {}

  setTimeout = (fn: () => void, ms: number): ReturnType<typeof setTimeout> => {
    this.delays.push(ms);
    const due = this.clock.now() + ms;
    return setTimeout(() => {
      if (this.clock.now() < due) this.clock.set(due);
      fn();
    }, 0);
  };

  clearTimeout = (id: ReturnType<typeof setTimeout>): void => clearTimeout(id);

  now = (): number => this.clock.now();
}
