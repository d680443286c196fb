/**
 * The memory cap fails closed: a reading it cannot trust (zero, an error,
 * not a number) is a kill, not a pass; the watch reads on a thread of its
 * own, so its reports go on while the process's main thread is stuck; and
 * a sandbox process whose reports stop is killed, with a clear message.
 */
import assert from "node:assert/strict";
import { measure, ReservedDescriptor } from "../../src/sandbox/memory_reading.ts";
import { startTestSandbox } from "../support/sandbox.ts";
import { ROOT } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";

const MB = 1024 * 1024;

Deno.test("a resident size read as zero, failed or not a number is an error, never a pass", async () => {
  await using dir = await tempDir();
  const reserve = new ReservedDescriptor(dir.path);
  const peak = () => 200 * 1024;
  for (const rss of [() => 0, () => NaN, () => -1, () => Infinity]) {
    const r = measure(reserve, 512, { rss, maxRssKib: peak });
    assert.equal(r.rssMb, -1, JSON.stringify(r));
    assert.match(r.error ?? "", /resident size read as/);
    assert.equal(r.over, undefined);
  }
  const failed = measure(reserve, 512, {
    rss: () => {
      throw new Error("Too many open files (os error 24)");
    },
    maxRssKib: peak,
  });
  assert.match(failed.error ?? "", /Too many open files/);
  assert.ok(reserve.held, "the reserved descriptor is taken again after each reading");
});

Deno.test("past the limit in the resident size or in its peak is over", async () => {
  await using dir = await tempDir();
  const reserve = new ReservedDescriptor(dir.path);
  const at = (rssMb: number, peakMb: number | undefined) =>
    measure(reserve, 512, {
      rss: () => rssMb * MB,
      maxRssKib: () => peakMb === undefined ? undefined : peakMb * 1024,
    });
  assert.equal(at(300, 400).over, undefined);
  assert.equal(at(300, undefined).over, undefined);
  assert.equal(at(600, 600).over, true);
  // Freed again before the reading: the peak (getrusage, no descriptor needed) still saw it.
  assert.equal(at(300, 900).over, true);
  assert.equal(at(300, 900).maxRssMb, 900);
});

Deno.test("a peak no higher than when the code began is not the code's: only a rise counts", async () => {
  await using dir = await tempDir();
  const reserve = new ReservedDescriptor(dir.path);
  // A new program's peak starts at its parent's size: an agent of 1.5 GB hands it on.
  const at = (peakMb: number) =>
    measure(reserve, 512, { rss: () => 150 * MB, maxRssKib: () => peakMb * 1024 }, 1500 * 1024);
  assert.equal(at(1500).over, undefined);
  assert.equal(at(1500).maxRssMb, undefined);
  // Risen while the code ran: the peak is the code's, and past the limit.
  assert.equal(at(1600).over, true);
  assert.equal(at(1600).maxRssMb, 1600);
});

Deno.test({
  name: "an agent process far larger than the memory limit still runs code in the sandbox",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // The test process holds 1 GiB touched, so each sandbox process it spawns
    // starts with a peak twice its own 256 + 384 MB limit.
    const ballast = new Uint8Array(1024 * MB).fill(1);
    await using env = await startTestSandbox({ memoryMb: 256 });
    // Long enough for several reports (one every 100 ms).
    const r = await env.sandbox.run({ code: "import time\ntime.sleep(1)\nprint(sum(range(10)))" });
    assert.equal(r.ok, true, JSON.stringify(r));
    assert.equal(r.stdout, "45\n");
    assert.equal(ballast[12345], 1);
  },
});

Deno.test("the reserved descriptor is the one a reading takes", async () => {
  await using dir = await tempDir();
  const reserve = new ReservedDescriptor(dir.path);
  assert.ok(reserve.held);
  // While reading, the reserve is closed (its slot is the lowest free one)…
  assert.equal(reserve.around(() => reserve.held), false);
  // …and the process's own reading works through it.
  const r = measure(reserve, 100_000);
  assert.ok(r.rssMb > 0 && r.error === undefined, JSON.stringify(r));
  assert.ok(reserve.held);
});

Deno.test({
  name: "the watch's reports go on while the process's main thread is stuck",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir();
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--unstable-worker-options",
        `--allow-read=${dir.path},${ROOT}/src/sandbox`,
        `${ROOT}/tests/sandbox/fixtures/busy_main.ts`,
        dir.path,
        "3000",
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const lines = text.split("\n").filter((l) => l.startsWith("test-nonce "));
    const types = lines.map((l) => JSON.parse(l.slice("test-nonce ".length)));
    const busy = types.findIndex((m) => m.message === "busy");
    const free = types.findIndex((m) => m.message === "free");
    assert.ok(busy >= 0 && free > busy, text);
    const during = types.slice(busy + 1, free).filter((m) => m.type === "memory");
    // Every 100 ms for 3 s; one is enough to show the thread is not the main one's.
    assert.ok(during.length >= 1, `no report while the main thread was stuck:\n${text}`);
    for (const m of during) assert.ok(m.rssMb > 0, JSON.stringify(m));
  },
});

Deno.test({
  name: "a sandbox process that stops reporting its memory is killed with a clear message",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using env = await startTestSandbox({ timeoutMs: 120_000, graceMs: 5_000 }, {
      reportTimeoutMs: 2_000,
    });
    const { pid } = await env.sandbox.ready();
    const run = env.sandbox.run({ code: "while True:\n    pass" });
    await new Promise((r) => setTimeout(r, 500)); // reports are flowing
    Deno.kill(pid, "SIGSTOP");
    const r = await run;
    assert.equal(r.killed, "memory", JSON.stringify(r));
    assert.match(
      r.error ?? "",
      /memory could not be checked against its 512 MB limit .*stopped reporting its memory use/,
    );
  },
});
