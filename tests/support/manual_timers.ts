/**
 * Timers on a {@link ManualClock} that fire only when the test moves the
 * clock: `advance(ms)` runs, in due order, every timer whose time has come
 * (a timer armed by one of them fires too if it falls due within the step).
 * Unlike {@link ClockTimers}, nothing fires by itself, so a test can say
 * "not yet at 299 ms, done at 300 ms" without reading the wall clock.
 *
 * Real I/O still runs in real time: wait for what the other side saw (a
 * subscribe, a connection) or for {@link ManualTimers.armed}, then advance.
 *
 * @module
 */
import { ManualClock } from "../../src/adapters/clock.ts";
import type { Timers } from "../../src/util/misc.ts";
import { waitFor } from "./run_agent.ts";

type TimerId = ReturnType<typeof setTimeout>;

interface Due {
  at: number;
  ms: number;
  fn: () => void;
}

export class ManualTimers implements Timers {
  /** Every delay asked for, in ms, in order. */
  readonly delays: number[] = [];
  #next = 1;
  readonly #due = new Map<number, Due>();

  constructor(readonly clock = new ManualClock(0)) {}

  setTimeout = (fn: () => void, ms: number): TimerId => {
    this.delays.push(ms);
    const id = this.#next++;
    this.#due.set(id, { at: this.clock.now() + Math.max(0, ms), ms, fn });
    return id as unknown as TimerId;
  };

  clearTimeout = (id: TimerId | undefined): void => {
    if (id !== undefined) this.#due.delete(id as unknown as number);
  };

  now = (): number => this.clock.now();

  /** The delays of the timers still waiting, in the order they fall due. */
  pending(): number[] {
    return [...this.#due.values()].sort((a, b) => a.at - b.at).map((d) => d.ms);
  }

  /** Moves the clock by `ms`, firing every timer that falls due on the way, in order. */
  advance(ms: number): void {
    const end = this.clock.now() + ms;
    for (;;) {
      const next = [...this.#due].filter(([, d]) =>
        d.at <= end
      ).sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
      if (!next) {
        break;
      }
      const [id, due] = next;
      this.#due.delete(id);
      if (due.at > this.clock.now()) {
        this.clock.set(due.at);
      }
      due.fn();
    }
    this.clock.set(end);
  }

  /** Moves the clock to the next timer's due time and fires it; returns the ms moved (0: none waiting). */
  advanceToNext(): number {
    const at = Math.min(...[...this.#due.values()].map((d) => d.at));
    if (!Number.isFinite(at)) return 0;
    const step = Math.max(0, at - this.clock.now());
    this.advance(step);
    return step;
  }

  /**
   * Resolves once a timer of `ms` is waiting (any timer when `ms` is
   * omitted): the code under test has reached the wait the test will end.
   * Real time passes meanwhile (I/O), with a ceiling of 60 s.
   */
  async armed(ms?: number): Promise<void> {
    const what = ms === undefined ? "a timer" : `a timer of ${ms} ms`;
    await waitFor(
      () => [...this.#due.values()].some((d) => ms === undefined || d.ms === ms),
      60_000,
      what,
    );
  }
}

/**
 * Whether `p` has settled once the event loop has turned a few times (so
 * I/O callbacks already due have run). Nothing here waits on a clock: a
 * promise that only a fake timer can settle stays unsettled.
 */
export async function hasSettled(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  p.then(() => (settled = true), () => (settled = true));
  for (let i = 0; i < 5 && !settled; i++) await new Promise((r) => setTimeout(r, 0));
  return settled;
}
