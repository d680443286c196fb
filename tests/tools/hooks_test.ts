/**
 * The hook runner spawns the program without a shell, gives it the JSON on
 * stdin, keeps its stderr, and reports a program that cannot start or that
 * outlives its time, on injected timers.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../src/adapters/clock.ts";
import { processHookRunner } from "../../src/tools/hooks.ts";
import { ClockTimers } from "../support/clock_timers.ts";
import { tempDir } from "../support/temp.ts";
import type { Timers } from "../../src/util/misc.ts";

const never = new AbortController().signal;

Deno.test("a hook program reads its JSON on stdin and its exit status and stderr come back", async () => {
  await using dir = await tempDir();
  const run = processHookRunner();
  const ran = await run(
    ["/bin/sh", "-c", `cat > "${dir.path}/in.json"; echo "no: it is night" >&2; exit 4`],
    '{"tool":"read"}',
    10_000,
    never,
  );
  assert.deepEqual(ran, { status: "exited", code: 4, stderr: "no: it is night\n" });
  assert.equal(await Deno.readTextFile(`${dir.path}/in.json`), '{"tool":"read"}');
});

Deno.test("a hook program that does not exist is reported as failed to run, not thrown", async () => {
  const ran = await processHookRunner()(["/nonexistent/hook"], "{}", 10_000, never);
  assert.equal(ran.status, "failed");
});

Deno.test("a hook program that outlives its time is killed and reported as timed out", async () => {
  const timers = new ClockTimers(new ManualClock(0));
  const ran = await processHookRunner(timers)(["/bin/sleep", "30"], "{}", 5_000, never);
  assert.deepEqual(ran, { status: "timeout" });
  assert.deepEqual(timers.delays, [5_000]);
});

/** Timers whose callbacks run only when the test says. */
class HeldTimers implements Timers {
  #due: (() => void)[] = [];
  setTimeout = (fn: () => void): ReturnType<typeof setTimeout> => {
    this.#due.push(fn);
    return 0 as unknown as ReturnType<typeof setTimeout>;
  };
  clearTimeout = (): void => {};
  #now = 0;
  now = (): number => this.#now;
  /** Moves the clock past every deadline and runs what was due. */
  fire(): void {
    this.#now += 1e9;
    for (const fn of this.#due.splice(0)) fn();
  }
}

Deno.test("a hook that exits but leaves a child holding stderr open ends at its timeout, not the child's", async () => {
  await using dir = await tempDir();
  const timers = new HeldTimers();
  const marker = `${dir.path}/started`;
  const running = processHookRunner(timers)(
    ["/bin/sh", "-c", `sleep 30 & touch "${marker}"; exit 0`],
    "{}",
    5_000,
    never,
  );
  while (!(await Deno.stat(marker).then(() => true, () => false))) {
    await new Promise((r) => setTimeout(r, 10));
  }
  timers.fire();
  assert.deepEqual(await running, { status: "timeout" });
});
