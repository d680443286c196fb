/**
 * When sandbox processes start and end, and with which V8 flags: the next
 * run's process and its spare are prewarmed once a result is out (not while
 * a run still waits for its own), a run straight after another takes the
 * spare, closing the sandbox ends every process it started, and `optimize`
 * decides whether V8 optimizes the interpreter eagerly.
 * Timings are in `deno task bench`.
 */
import assert from "node:assert/strict";
import { cmdline, cpuTicks, startTestSandbox } from "../support/sandbox.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function runDirs(workRoot: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(workRoot)) if (e.name.startsWith("run-")) names.push(e.name);
  return names;
}

Deno.test({
  name: "optimize = eager starts the sandbox process without V8's dynamic tiering; hot keeps it",
  ...opts,
  async fn() {
    await using eager = await startTestSandbox({ memoryMb: 256 }, { optimize: "eager" });
    await using hot = await startTestSandbox({ memoryMb: 256 }, { optimize: "hot" });
    const flagsOf = async (s: typeof eager) => {
      const args = cmdline((await s.sandbox.ready()).pid);
      return args.find((a) => a.startsWith("--v8-flags="))?.slice("--v8-flags=".length).split(",");
    };
    assert.deepEqual(await flagsOf(eager), [
      "--wasm-max-mem-pages=4096",
      "--no-wasm-dynamic-tiering",
    ]);
    assert.deepEqual(await flagsOf(hot), ["--wasm-max-mem-pages=4096"]);
    // Both run Python the same way.
    for (const s of [eager, hot]) {
      const r = await s.sandbox.run({ code: "print(sum(range(10)))" });
      assert.equal(r.stdout, "45\n");
    }
  },
});

Deno.test({
  name:
    "without spares, the next process is prewarmed after a result, never beside a run still waiting for its own",
  ...opts,
  async fn() {
    await using env = await startTestSandbox({}, { spareProcesses: 0 });
    const { sandbox, workRoot } = env;
    await sandbox.ready();
    // The next run is asked for the moment the first result is out (as the
    // model's next tool call can be); it starts its own process.
    const first = await sandbox.run({ code: "print('first')" });
    assert.equal(first.stdout, "first\n");
    // A run that lasts until the test ends it.
    const stop = new AbortController();
    const second = sandbox.run({ code: "import time\ntime.sleep(600)", signal: stop.signal });
    // The first run wrote nothing, so its directory goes with its process:
    // then only the second's process exists.
    const firstDir = first.workDir.slice(workRoot.length + 1, -"/work".length);
    await until(async () => !(await runDirs(workRoot)).includes(firstDir), "the first run's exit");
    assert.equal(
      (await runDirs(workRoot)).length,
      1,
      "a process was prewarmed beside the waiting run",
    );
    stop.abort();
    const r = await second;
    assert.equal(r.killed, "cancelled");
    // Once that result is out, one process is prewarmed for the next run,
    // unasked (the second run's directory goes once its process has exited).
    const secondDir = r.workDir.slice(workRoot.length + 1, -"/work".length);
    const t = performance.now();
    const settled = (d: string[]) => d.length === 1 && d[0] !== secondDir;
    while (!settled(await runDirs(workRoot)) && performance.now() - t < 60_000) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const dirs = await runDirs(workRoot);
    assert.equal(dirs.length, 1, "no process was prewarmed after the result");
    // It is the one the next run takes.
    assert.equal((await sandbox.ready()).workDir, `${workRoot}/${dirs[0]}/work`);
  },
});

/** Polls `cond` until it holds (a generous deadline: a busy machine is slow, never wrong). */
async function until(cond: () => Promise<boolean>, what: string): Promise<void> {
  const t = performance.now();
  while (!await cond()) {
    if (performance.now() - t > 60_000) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test({
  name:
    "a run straight after another takes the spare, ready before it was asked; both are refilled after, one process per run",
  ...opts,
  async fn() {
    await using env = await startTestSandbox({}, { spareProcesses: 1 });
    const { sandbox, workRoot } = env;
    sandbox.prewarm();
    const idle = await sandbox.idle();
    assert.equal(idle.length, 2, "the next run's process and one spare");
    assert.ok(idle.every((p) => p.ready), "both started");
    // The spare has the very command line (grants, V8 flags) of the other, but its own run directory.
    const dirOf = (p: { workDir: string }) => p.workDir.slice(0, -"/work".length);
    const [next, spare] = idle as [typeof idle[0], typeof idle[0]];
    assert.deepEqual(
      cmdline(spare.pid),
      cmdline(next.pid).map((a) => a.replaceAll(dirOf(next), dirOf(spare))),
    );
    const first = await sandbox.run({ code: "print('first')" });
    const second = await sandbox.run({ code: "print('second')" }); // asked the moment the first is out
    assert.deepEqual([first.stdout, second.stdout], ["first\n", "second\n"]);
    assert.equal(first.workDir, next.workDir);
    assert.equal(second.workDir, spare.workDir, "the second run took the ready spare");
    // Each process ran one run and is gone; two fresh ones wait for the next runs.
    await until(async () => {
      const now = await sandbox.idle();
      return now.length === 2 && now.every((p) => p.pid !== next.pid && p.pid !== spare.pid);
    }, "two fresh processes after the runs");
    await until(
      () => Promise.resolve(cpuTicks(next.pid) === undefined && cpuTicks(spare.pid) === undefined),
      "the processes that ran are gone",
    );
    const refilled = await sandbox.idle();
    await sandbox.close();
    for (const p of refilled) assert.equal(cpuTicks(p.pid), undefined, "close ends the spares");
    assert.deepEqual(await runDirs(workRoot), [], "their run directories go with them");
  },
});

Deno.test({
  name: "a spare that dies while idle is not taken by the next run",
  ...opts,
  async fn() {
    await using env = await startTestSandbox({}, { spareProcesses: 1 });
    const { sandbox } = env;
    sandbox.prewarm();
    const [next, spare] = await sandbox.idle();
    assert.ok(next && spare);
    Deno.kill(next.pid, "SIGKILL"); // as the kernel's OOM killer would
    await until(
      async () => (await sandbox.idle()).every((p) => p.pid !== next.pid),
      "the dead process left the idle list",
    );
    const r = await sandbox.run({ code: "print('ok')" });
    assert.equal(r.stdout, "ok\n");
    assert.equal(r.workDir, spare.workDir);
  },
});

Deno.test({
  name: "closing the sandbox stops a run in progress, and nothing starts afterwards",
  ...opts,
  async fn() {
    // A time limit no test outlives: the run ends by close, or the test hangs.
    await using env = await startTestSandbox({ timeoutMs: 600_000 });
    const { sandbox, workRoot } = env;
    const { pid } = await sandbox.ready();
    const running = sandbox.run({ code: "while True:\n    pass" });
    const queued = sandbox.run({ code: "print('never')" });
    let settled = false;
    void running.finally(() => settled = true);
    await new Promise((r) => setTimeout(r, 300));
    await sandbox.close();
    assert.ok(settled, "close returns after the run's result");
    const r = await running;
    assert.equal(r.killed, "cancelled");
    const q = await queued;
    assert.equal(q.killed, "cancelled");
    assert.equal(q.error, "the sandbox is closed");
    assert.equal(r.ok, false);
    assert.equal(cpuTicks(pid), undefined, "the run's process is gone");
    await assert.rejects(sandbox.ready(), /the sandbox is closed/);
    sandbox.prewarm();
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await runDirs(workRoot), [], "no process was started after close");
  },
});
