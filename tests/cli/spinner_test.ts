/** The spinner: a frame every 80 ms while it runs, the line cleared when it stops. */
import assert from "node:assert/strict";
import { Spinner } from "../../src/cli/term/spinner.ts";
import { ManualTimers } from "../support/manual_timers.ts";

Deno.test("the spinner draws a new frame every 80 ms and clears its line when stopped", () => {
  const timers = new ManualTimers();
  const out: string[] = [];
  const spinner = new Spinner((t) => out.push(t), true, timers);
  spinner.start("thinking");
  assert.equal(out.length, 1, "the first frame at once");
  timers.advance(79);
  assert.equal(out.length, 1);
  timers.advance(1);
  timers.advance(160);
  assert.equal(out.length, 4, "one frame per 80 ms");
  assert.ok(out.every((t) => t.includes("thinking")));
  assert.notEqual(out[0], out[1], "the frames turn");
  spinner.stop();
  assert.equal(out.at(-1), "\r\x1b[2K");
  assert.equal(spinner.running, false);
  assert.deepEqual(timers.pending(), [], "no timer left behind");
});

Deno.test("a spinner on a stream that is not a terminal writes nothing and sets no timer", () => {
  const timers = new ManualTimers();
  const out: string[] = [];
  const spinner = new Spinner((t) => out.push(t), false, timers);
  spinner.start("thinking");
  timers.advance(1000);
  spinner.stop();
  assert.deepEqual(out, []);
  assert.deepEqual(timers.delays, []);
});
