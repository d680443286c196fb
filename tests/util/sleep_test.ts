import assert from "node:assert/strict";
import { MAX_TIMER_MS, sleep, timeoutSignal, type Timers } from "../../src/util/misc.ts";

/** A fake clock: timers fire in order when `run` advances time; every delay asked is kept. */
class FakeTimers implements Timers {
  t = 0;
  delays: number[] = [];
  #next = 1;
  #due = new Map<number, { at: number; fn: () => void }>();
  setTimeout = (fn: () => void, ms: number) => {
    // What a real timer does with a delay it cannot hold: fire at once.
    const held = ms > MAX_TIMER_MS ? 1 : ms;
    this.delays.push(ms);
    const id = this.#next++;
    this.#due.set(id, { at: this.t + held, fn });
    return id as unknown as ReturnType<typeof setTimeout>;
  };
  clearTimeout = (id: ReturnType<typeof setTimeout>) => {
    this.#due.delete(id as unknown as number);
  };
  now = () => this.t;
  /** Fires due timers until none is left; yields to promises between them. */
  async run(): Promise<void> {
    while (this.#due.size > 0) {
      const [id, first] = [...this.#due].sort((a, b) => a[1].at - b[1].at)[0]!;
      this.#due.delete(id);
      this.t = Math.max(this.t, first.at);
      first.fn();
      await Promise.resolve();
    }
  }
}

const WEEK_MS = 7 * 24 * 3600 * 1000;

Deno.test("a sleep longer than a timer can hold waits its full length in chunks", async () => {
  for (const ms of [MAX_TIMER_MS + 1, 2 ** 31 + 1000, WEEK_MS * 5, MAX_TIMER_MS * 3]) {
    const timers = new FakeTimers();
    let done = false;
    const p = sleep(ms, undefined, timers).then(() => (done = true));
    await Promise.resolve();
    assert.equal(done, false);
    await timers.run();
    await p;
    assert.equal(done, true);
    assert.ok(timers.t >= ms, `woke at ${timers.t} of ${ms}`);
    assert.ok(timers.delays.every((d) => d <= MAX_TIMER_MS), String(timers.delays));
    assert.ok(timers.delays.length >= 2);
  }
});

Deno.test("a timer that fires early does not end a sleep", async () => {
  const timers = new FakeTimers();
  const early = { ...timers, now: () => timers.t, setTimeout: timers.setTimeout };
  // A timer that fires after a tenth of the time asked for.
  early.setTimeout = (fn, ms) => timers.setTimeout(fn, Math.max(1, Math.floor(ms / 10)));
  const p = sleep(1000, undefined, early);
  await timers.run();
  await p;
  assert.ok(timers.t >= 1000, String(timers.t));
});

Deno.test("a sleep of a length that is not finite is refused, not skipped", async () => {
  await assert.rejects(sleep(NaN), /cannot sleep for NaN ms/);
  await assert.rejects(sleep(Infinity), /cannot sleep for Infinity ms/);
  assert.throws(() => timeoutSignal(NaN), /cannot time out after NaN ms/);
});

Deno.test("an abort ends a long sleep at once and clears its timer", async () => {
  const timers = new FakeTimers();
  const c = new AbortController();
  const p = sleep(WEEK_MS, c.signal, timers);
  c.abort(new Error("stop"));
  await assert.rejects(p, /stop/);
  await timers.run();
  assert.equal(timers.t, 0);
});

Deno.test("a timeout signal past the timer range aborts only when its time has passed", async () => {
  const timers = new FakeTimers();
  const ms = MAX_TIMER_MS + 60_000;
  const signal = timeoutSignal(ms, timers);
  assert.equal(signal.aborted, false);
  let abortedAt = -1;
  signal.addEventListener("abort", () => (abortedAt = timers.t));
  await timers.run();
  assert.ok(abortedAt >= ms, `aborted at ${abortedAt}`);
  assert.equal((signal.reason as DOMException).name, "TimeoutError");
});

Deno.test("the real sleep and timeout signal wait about as long as asked", async () => {
  const t0 = performance.now();
  await sleep(30);
  assert.ok(performance.now() - t0 >= 29);
  const signal = timeoutSignal(20);
  await new Promise((r) => signal.addEventListener("abort", r));
  assert.ok(performance.now() - t0 >= 49);
});
