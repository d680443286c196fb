/**
 * Resource limits, run against the real runner: time (interrupt, then the
 * hard kill), memory (the WebAssembly heap cap, then the RSS kill), output,
 * files; and what one run leaves for the next. Each run has its own process,
 * killed after its result. A test of one limit gives every other limit
 * ample room (the shared sandbox's time limit is 120 s), and none bounds
 * the wall-clock time a run takes: timings are in `deno task bench`.
 */
import assert from "node:assert/strict";
import {
  cpuTicks,
  gone,
  runCode,
  sandboxTest,
  SNAPSHOT_PATH,
  startFileSandbox,
  startTestSandbox,
} from "../support/sandbox.ts";
import { ClockTimers } from "../support/clock_timers.ts";
import { ManualClock } from "../../src/adapters/clock.ts";
import { shapeRun } from "../../src/tools/sandbox_result.ts";

const env = await startFileSandbox();
const { sandbox } = env;
/** For the interrupt alone: a grace period no busy machine reaches, so nothing is killed. */
const patient = await startFileSandbox({ graceMs: 60_000 });

const attack = sandboxTest;
const run = (code: string) => runCode(sandbox, code);

const TRY = (expr: string) =>
  `try:\n    print("LEAK:", str(${expr})[:80])\nexcept BaseException as e:\n    print("BLOCKED:", type(e).__name__, str(e)[:120])\n`;

attack(
  "a busy loop is interrupted at the time limit; its process ends, the next one idles",
  async () => {
    const ran = await patient.sandbox.ready();
    const r = await patient.sandbox.run({ code: "while True: pass", timeoutMs: 1_000 });
    assert.equal(r.timedOut, true);
    assert.match(r.error ?? "", /time limit of 1 s/);
    assert.equal(r.killed, undefined, "the interrupt stopped it, not the kill");
    assert.ok(await gone(ran.pid), "the process that ran the loop is gone");
    // The next process does not spin: once V8 has optimized its interpreter
    // (about a second of background compiling after its start, longer on a
    // loaded machine), it uses no CPU over half a second.
    const { pid } = await patient.sandbox.ready();
    const t = performance.now();
    let idle = false;
    while (!idle && performance.now() - t < 120_000) {
      const a = cpuTicks(pid) ?? 0;
      await new Promise((res) => setTimeout(res, 500));
      idle = (cpuTicks(pid) ?? 0) - a <= 2;
    }
    assert.ok(idle, "the next process never went idle");
    assert.equal((await runCode(patient.sandbox, "print(6 * 7)")).stdout, "42\n");
  },
);

attack("a loop that catches KeyboardInterrupt is killed after the grace period", async () => {
  const { pid } = await sandbox.ready();
  const r = await sandbox.run({
    code: "open('/work/partial.txt', 'w').write('kept')\n" +
      "while True:\n    try:\n        while True: pass\n    except KeyboardInterrupt:\n        pass",
    timeoutMs: 1_000,
  });
  assert.equal(r.killed, "timeout");
  assert.match(r.error ?? "", /time limit of 1 s \(the process was killed\)/);
  // /work is in memory until the run ends: a process killed mid-run leaves no files.
  assert.deepEqual(r.files.map((f) => f.name), [], "nothing half-written is kept");
  assert.ok(await gone(pid), "the process is gone");
  assert.equal((await run("print('fresh')")).stdout, "fresh\n");
});

attack(
  "the host stays responsive while the sandbox spins: its own timer cancels the run",
  async () => {
    // Only a host whose event loop turns while the sandbox spins can fire the
    // timer; the run's time limit (120 s) is not what ends it.
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const r = await sandbox.run({ code: "while True: pass", signal: controller.signal });
    assert.equal(r.killed, "cancelled", JSON.stringify(r));
  },
);

attack("deep recursion is a RecursionError", async () => {
  const r = await run("def f(n):\n    return f(n + 1)\nf(0)");
  assert.match(r.error ?? "", /^RecursionError/);
  assert.equal((await run("print('alive')")).stdout, "alive\n");
});

attack("unbounded recursion past a raised limit is contained", async () => {
  const r = await run(
    "import sys\nsys.setrecursionlimit(10**7)\ndef f(n):\n    return f(n + 1)\nf(0)",
  );
  assert.equal(r.ok, false);
  assert.equal((await run("print('alive')")).stdout, "alive\n");
});

attack("a 10 GB allocation fails inside Python", async () => {
  const r = await run(`${TRY("len(bytearray(10 * 1024**3))")}${TRY("len(bytearray(10**9))")}`);
  assert.equal((r.stdout.match(/BLOCKED: (MemoryError|OverflowError)/g) ?? []).length, 2, r.all);
  assert.equal((await run("print('alive')")).stdout, "alive\n");
});

attack("memory grown in small pieces stops at the cap", async () => {
  const r = await run("chunks = []\nwhile True:\n    chunks.append(bytearray(10**7))");
  assert.equal(r.ok, false);
  assert.match(r.error ?? "", /MemoryError|memory/);
  assert.equal((await run("print('alive')")).stdout, "alive\n");
});

attack("a 1 GB print comes back truncated to the output cap, head and tail", async () => {
  const r = await sandbox.run({
    code:
      "import sys\nsys.stdout.write('HEAD')\nfor _ in range(1024):\n    sys.stdout.write('x' * 2**20)\nprint('TAIL')",
  });
  assert.ok(r.stdout.length < 4_200, `${r.stdout.length} characters`);
  assert.ok(r.stdout.startsWith("HEAD"));
  assert.ok(r.stdout.endsWith("TAIL\n"));
  assert.match(r.stdout, /\[10737\d+ characters left out\]/);
});

attack("a million output files are cut off by the time limit and the file cap", async () => {
  // Interrupted, not killed: a killed run keeps no files.
  const r = await patient.sandbox.run({
    code: "i = 0\nwhile i < 10**6:\n    open(f'/work/f{i}', 'w').close()\n    i += 1",
    timeoutMs: 1_500,
  });
  assert.equal(r.timedOut, true);
  assert.equal(r.files.length, 10);
  assert.ok(r.filesOmitted > 0);
  await Deno.remove(r.workDir, { recursive: true });
});

attack("each run starts with clean globals and builtins", async () => {
  await run("import builtins\nsecret = 1\nbuiltins.open = None\nbuiltins.len = lambda x: 0");
  const r = await run(`${TRY("secret")}print(len([1, 2]), open is not None)`);
  assert.match(r.stdout, /BLOCKED: NameError/);
  assert.match(r.stdout, /2 True/);
});

attack("a forged snapshot message from Python is not persisted", async () => {
  const r = await run(
    `from js import postMessage, Object, Uint8Array\nfrom pyodide.ffi import to_js\n` +
      `postMessage(to_js({"type": "ready", "ms": 0, "fromSnapshot": False, "packages": [], "snapshot": Uint8Array.new(8)}, dict_converter=Object.fromEntries))\nprint("sent")`,
  );
  assert.match(r.stdout, /sent/);
  await new Promise((res) => setTimeout(res, 100));
  assert.ok(Deno.statSync(SNAPSHOT_PATH).size > 1_000_000, "the snapshot file is intact");
  const fresh = await startTestSandbox();
  try {
    assert.equal((await fresh.sandbox.ready()).fromSnapshot, true);
    assert.equal((await fresh.sandbox.run({ code: "print(1 + 1)" })).stdout, "2\n");
  } finally {
    await fresh[Symbol.asyncDispose]();
  }
});

attack("memory taken through js outside the WebAssembly heap gets the process killed", async () => {
  const r = await sandbox.run({
    code:
      "import js\nkeep = []\nwhile True:\n    keep.append(js.Uint8Array.new(256 * 1024 * 1024).fill(1))",
    timeoutMs: 120_000, // the memory cap, not the clock, must stop it
  });
  assert.equal(r.killed, "memory", JSON.stringify(r));
  assert.match(r.error ?? "", /used more than 512 MB of memory/);
  assert.equal((await run("print('fresh')")).stdout, "fresh\n");
});

attack("an output file past the size cap is listed with a note, not returned", async () => {
  const r = await run(
    "open('/work/big.bin', 'wb').write(b'x' * 200_000)\nopen('/work/small.txt', 'w').write('ok')",
  );
  assert.deepEqual(r.files.map((f) => [f.name, f.bytes, f.note !== undefined]), [
    ["big.bin", 200_000, true],
    ["small.txt", 2, false],
  ]);
  const shaped = await shapeRun(r);
  const files = shaped.files as { name: string; preview?: string }[];
  assert.equal(files[0]?.preview, undefined);
  assert.equal(files[1]?.preview, "ok");
});

Deno.test({
  name: "a prewarmed interpreter starts from the memory snapshot (timing: deno task bench)",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using fresh = await startTestSandbox();
    fresh.sandbox.prewarm();
    const ready = await fresh.sandbox.ready();
    assert.equal(ready.fromSnapshot, true);
  },
});

attack("a sleep that ignores the interrupt is killed after the grace period", async () => {
  await sandbox.ready();
  const r = await sandbox.run({ code: "import time\ntime.sleep(600)", timeoutMs: 1_000 });
  assert.equal(r.killed, "timeout");
  assert.equal((await run("print('fresh')")).stdout, "fresh\n");
});

Deno.test({
  name:
    "the runner kills a run at its time limit plus the grace period on its own clock, whatever the code does",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // The runner's deadline on a fake clock: reached at once, with no real
    // waiting, while the process's own interrupt (600 s) never comes.
    const timers = new ClockTimers(new ManualClock(0));
    await using fake = await startTestSandbox({ graceMs: 700 }, { timers, spareProcesses: 0 });
    const { pid } = await fake.sandbox.ready();
    const r = await fake.sandbox.run({ code: "import time\ntime.sleep(600)", timeoutMs: 600_000 });
    assert.equal(r.killed, "timeout", JSON.stringify(r));
    assert.equal(r.error, "stopped by the time limit of 600 s (the process was killed)");
    assert.deepEqual(timers.delays, [600_700], "one deadline: the limit and the grace period");
    assert.ok(await gone(pid), "the process is gone");
  },
});
