/**
 * The hook runner spawns the program without a shell, gives it the JSON on
 * stdin, keeps its stderr, and reports a program that cannot start or that
 * outlives its time, on injected timers.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../src/adapters/clock.ts";
import { HOOK_KILL_GRACE_MS, processHookRunner } from "../../src/tools/hooks.ts";
import { ManualTimers } from "../support/manual_timers.ts";
import { ClockTimers } from "../support/clock_timers.ts";
import { tempDir } from "../support/temp.ts";

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
  assert.deepEqual(timers.delays.slice(0, 2), [5_000, HOOK_KILL_GRACE_MS], "timeout, then grace");
});

/** Whether process `pid` is gone (or only a zombie waiting to be reaped). */
async function dead(pid: number): Promise<boolean> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

async function pidsIn(path: string): Promise<number[]> {
  await waitFor(async () => (await Deno.readTextFile(path).catch(() => "")).includes("\n"));
  return (await Deno.readTextFile(path)).trim().split(/\s+/).map(Number);
}

/** Resolves when `cond` holds (polled; a generous ceiling for a busy machine). */
async function waitFor(cond: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await cond())) {
    if (performance.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("a hook that ignores SIGTERM is killed with its children after the grace, and answered then", async () => {
  await using dir = await tempDir();
  const timers = new ManualTimers();
  const pids = `${dir.path}/pids`;
  let answered: unknown;
  const running = processHookRunner(timers, 2_000)(
    // Ignored signals are inherited: the child it starts ignores SIGTERM too.
    ["/bin/sh", "-c", `trap '' TERM; sleep 600 & echo "$$ $!" > "${pids}"; wait`],
    "{}",
    5_000,
    never,
  ).then((r) => answered = r);
  const [hook, child] = await pidsIn(pids) as [number, number];
  timers.advance(5_000);
  // SIGTERM went to the group; both ignore it, and the run is not answered before the grace.
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(answered, undefined);
  assert.equal(await dead(hook), false);
  timers.advance(1_999);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(answered, undefined, "not before the grace has passed");
  timers.advance(1);
  assert.deepEqual(await running, { status: "timeout" });
  await waitFor(async () => await dead(hook) && await dead(child));
});

Deno.test("a hook stopped by the turn's cancellation is killed with its process group", async () => {
  await using dir = await tempDir();
  const timers = new ManualTimers();
  const pids = `${dir.path}/pids`;
  const cancel = new AbortController();
  const running = processHookRunner(timers, 2_000)(
    ["/bin/sh", "-c", `sleep 600 & echo "$$ $!" > "${pids}"; wait`],
    "{}",
    60_000,
    cancel.signal,
  );
  const [hook, child] = await pidsIn(pids) as [number, number];
  cancel.abort();
  // SIGTERM ends both; the run is answered as soon as the hook has gone.
  assert.deepEqual(await running, { status: "failed", message: "the turn was cancelled" });
  await waitFor(async () => await dead(hook) && await dead(child));
});

Deno.test("a hook that exits but leaves a child holding stderr open is answered by its exit, not held for the child", async () => {
  const timers = new ManualTimers();
  let answered: unknown;
  processHookRunner(timers)(
    ["/bin/sh", "-c", `echo "said before the exit" >&2; sleep 30 & exit 3`],
    "{}",
    600_000,
    never,
  ).then((r) => answered = r);
  // The read of stderr after the exit is bounded by the runner's clock, not by the child's life.
  while (answered === undefined && timers.clock.now() < 600_000) {
    timers.advance(20);
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.deepEqual(answered, { status: "exited", code: 3, stderr: "said before the exit\n" });
});
