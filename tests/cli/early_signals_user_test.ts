/**
 * `ask --json` stopped by a signal at any moment — while the launcher loads,
 * while the program's modules load and its app is built, while the model
 * answers — prints exactly one JSON object on stdout and exits with the
 * signal's code (128 + n), as a user runs it (through the launcher). The
 * moments are spread from the first instant the launcher can listen (its
 * SIGTERM handler is in place) to well into the turn.
 */
import assert from "node:assert/strict";
import { runAsUser } from "../support/user_grants.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

const CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

/** Whether `pid` has a handler for `signal` (its bit in SigCgt of /proc/PID/status). */
async function listens(pid: number, signal: keyof typeof CODES): Promise<boolean> {
  const number = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[signal];
  try {
    const status = await Deno.readTextFile(`/proc/${pid}/status`);
    const mask = BigInt(`0x${/SigCgt:\s+([0-9a-f]+)/.exec(status)?.[1] ?? "0"}`);
    return (mask & (1n << BigInt(number - 1))) !== 0n;
  } catch {
    return false;
  }
}

async function stoppedAt(
  signal: keyof typeof CODES,
  delayMs: number,
  url: string,
  stream: boolean,
) {
  return await runAsUser(
    ["ask", stream ? "--stream-json" : "--json", "What is the ring current?"],
    {
      env: { OPENAI_BASE_URL: url, OPENAI_API_KEY: "k" },
      ceilingMs: 120_000,
      onSpawn: async (launcher) => {
        // From the first instant the launcher can hear it.
        for (let i = 0; i < 6000 && !(await listens(launcher.pid, signal)); i++) {
          await new Promise((r) => setTimeout(r, 5));
        }
        await new Promise((r) => setTimeout(r, delayMs));
        try {
          Deno.kill(launcher.pid, signal);
        } catch {
          // It had ended already: then it printed its own answer.
        }
      },
    },
  );
}

Deno.test("a signal at any moment of ask --json gives exactly one JSON object and the signal's exit code", async () => {
  // The model takes its time, so late signals land mid-turn.
  await using llm = await startScriptedLlm({
    scenario: {
      loop: true,
      turns: [{ respond: { fault: "delay", ms: 30_000, then: { text: "301 mA" } } }],
    },
  });
  const moments: [keyof typeof CODES, number][] = [
    ["SIGTERM", 0],
    ["SIGTERM", 30],
    ["SIGTERM", 100],
    ["SIGHUP", 200],
    ["SIGTERM", 400],
    ["SIGINT", 700],
    ["SIGTERM", 1_200],
    ["SIGTERM", 2_500],
    ["SIGHUP", 5_000],
  ];
  for (const [signal, ms] of moments) {
    const r = await stoppedAt(signal, ms, llm.url, false);
    const what = `${signal} after ${ms} ms: ${JSON.stringify(r.stdout)} ${r.stderr}`;
    assert.equal(r.code, CODES[signal], what);
    // Exactly one JSON object: the whole of stdout parses as one value.
    const out = JSON.parse(r.stdout);
    assert.equal(typeof out, "object", what);
    assert.equal(out.ok, false, what);
    assert.equal(out.exit_code, CODES[signal], what);
    assert.ok(
      out.cancelled === true || out.error?.kind === "cancelled",
      `${what}: said to be cancelled`,
    );
  }
});

Deno.test("a signal at any moment of ask --stream-json ends the stream with one result line", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      loop: true,
      turns: [{ respond: { fault: "delay", ms: 30_000, then: { text: "301 mA" } } }],
    },
  });
  for (const ms of [0, 150, 600, 3_000]) {
    const r = await stoppedAt("SIGTERM", ms, llm.url, true);
    const what = `after ${ms} ms: ${JSON.stringify(r.stdout)} ${r.stderr}`;
    assert.equal(r.code, 143, what);
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const results = lines.filter((l) => l.type === "result");
    assert.equal(results.length, 1, what);
    assert.equal(lines.at(-1)?.type, "result", what);
    assert.equal(results[0].exit_code, 143, what);
  }
});
