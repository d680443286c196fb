/**
 * The memory cap fails closed: a sandbox process whose memory reports stop
 * (here: stopped with SIGSTOP, as a process wedged by anything would be) is
 * killed, and the run says why, instead of running on unmeasured.
 */
import assert from "node:assert/strict";
import { startTestSandbox } from "../support/sandbox.ts";

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
