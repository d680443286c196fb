/**
 * When sandbox processes start and end, and with which V8 flags: the next
 * run's process is prewarmed once a result is out (not while a run still
 * waits for its own), closing the sandbox ends every process it started,
 * and `optimize` decides whether V8 optimizes the interpreter eagerly.
 * Timings are in `deno task bench`.
 */
import assert from "node:assert/strict";
import { cpuTicks, startTestSandbox } from "../support/sandbox.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** The command line the kernel has for a process. */
function cmdline(pid: number): string[] {
  return Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0").filter(Boolean);
}

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
    "the next process is prewarmed after a result, never beside a run still waiting for its own",
  ...opts,
  async fn() {
    await using env = await startTestSandbox();
    const { sandbox, workRoot } = env;
    await sandbox.ready();
    // The next run is asked for the moment the first result is out (as the
    // model's next tool call can be); it starts its own process.
    assert.equal((await sandbox.run({ code: "print('first')" })).stdout, "first\n");
    const second = sandbox.run({
      code: "import time\ntime.sleep(1.5)\nprint('second')",
      timeoutMs: 10_000,
    });
    await new Promise((r) => setTimeout(r, 300));
    // The first run wrote nothing, so its directory is gone: only the second's process exists.
    assert.equal(
      (await runDirs(workRoot)).length,
      1,
      "a process was prewarmed beside the waiting run",
    );
    const r = await second;
    assert.equal(r.stdout, "second\n");
    // Once that result is out, one process is prewarmed for the next run,
    // unasked (the second run's directory goes once its process has exited).
    const secondDir = r.workDir.slice(workRoot.length + 1, -"/work".length);
    const t = performance.now();
    const settled = (d: string[]) => d.length === 1 && d[0] !== secondDir;
    while (!settled(await runDirs(workRoot)) && performance.now() - t < 5_000) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const dirs = await runDirs(workRoot);
    assert.equal(dirs.length, 1, "no process was prewarmed after the result");
    // It is the one the next run takes.
    assert.equal((await sandbox.ready()).workDir, `${workRoot}/${dirs[0]}/work`);
  },
});

Deno.test({
  name: "closing the sandbox stops a run in progress, and nothing starts afterwards",
  ...opts,
  async fn() {
    await using env = await startTestSandbox({ timeoutMs: 30_000 });
    const { sandbox, workRoot } = env;
    const { pid } = await sandbox.ready();
    const running = sandbox.run({ code: "while True:\n    pass" });
    const queued = sandbox.run({ code: "print('never')" });
    let settled = false;
    void running.finally(() => settled = true);
    await new Promise((r) => setTimeout(r, 300));
    const t = performance.now();
    await sandbox.close();
    assert.ok(settled, "close returns after the run's result");
    const r = await running;
    assert.equal(r.killed, "cancelled");
    const q = await queued;
    assert.equal(q.killed, "cancelled");
    assert.equal(q.error, "the sandbox is closed");
    assert.equal(r.ok, false);
    assert.ok(performance.now() - t < 5_000, "close waits for the kill, not the time limit");
    assert.equal(cpuTicks(pid), undefined, "the run's process is gone");
    await assert.rejects(sandbox.ready(), /the sandbox is closed/);
    sandbox.prewarm();
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await runDirs(workRoot), [], "no process was started after close");
  },
});
