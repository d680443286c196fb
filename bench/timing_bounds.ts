/**
 * Bench figures for promptness the tests no longer bound in wall time (a
 * busy machine made such bounds fail; the tests now assert the behaviour on
 * a clock they move). Each beside a baseline from the same run:
 *
 * - a read of a PV that never connects (read timeout 300 ms, real timers,
 *   fake pvws gateway), against a bare 300 ms sleep: the read costs its
 *   timeout and little more.
 * - SIGINT to exit of `ask --json` on a model stream that stalls, against
 *   SIGINT to exit of an empty program that exits on SIGINT.
 *
 * @module
 */
import { createEpics } from "../src/adapters/epics/mod.ts";
import { sleep } from "../src/util/misc.ts";
import { startFakeEpics } from "../tests/support/facility/fake_epics.ts";
import { AGENT_FLAGS, childEnv, MAIN, ROOT, waitFor } from "../tests/support/run_agent.ts";
import { startScriptedLlm } from "../tests/support/scripted_llm.ts";
import { type Figure, median } from "./figure.ts";

const SAMPLES = 5;

/** A figure judged on value ÷ baseline. */
function ratioAtMost(name: string, value: number[], base: number[], limit: number): Figure {
  const v = median(value);
  const b = median(base);
  return {
    name,
    value: v,
    baseline: b,
    judged: `${(v / b).toFixed(2)}× the baseline`,
    goal: `≤ ${limit}×`,
    ok: v / b <= limit,
  };
}

/** A figure judged on value − baseline. */
function excessAtMost(name: string, value: number[], base: number[], limit: number): Figure {
  const v = median(value);
  const b = median(base);
  return {
    name,
    value: v,
    baseline: b,
    judged: `${(v - b).toFixed(0)} ms over the baseline`,
    goal: `≤ ${limit} ms over`,
    ok: v - b <= limit,
  };
}

async function readTimeout(): Promise<Figure> {
  await using fake = startFakeEpics();
  const cs = createEpics({
    pvwsUrl: fake.pvws.url,
    pvget: "off",
    readTimeoutMs: 300,
    monitorLingerMs: 0,
  });
  await cs.read(["SR:BPM:01:X"]); // the socket open, as in a session
  const reads: number[] = [];
  const sleeps: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    let t = performance.now();
    const [, ghost] = await cs.read(["SR:BPM:01:X", "SR:GHOST:PV"]);
    if (ghost?.ok !== false) throw new Error("timing bench: the ghost PV read a value");
    reads.push(performance.now() - t);
    t = performance.now();
    await sleep(300);
    sleeps.push(performance.now() - t);
  }
  await cs.close();
  return ratioAtMost("a PV that never connects vs its 300 ms read timeout", reads, sleeps, 1.5);
}

/** Ms from SIGINT to the exit of `argv`, sent once `ready()` holds. */
async function sigintToExit(argv: string[], env: Record<string, string>, ready: () => boolean) {
  const child = new Deno.Command(argv[0] as string, {
    args: argv.slice(1),
    cwd: ROOT,
    clearEnv: true,
    env: childEnv(env),
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  await waitFor(ready, 60_000, "the program to be ready");
  const t = performance.now();
  child.kill("SIGINT");
  await child.status;
  return performance.now() - t;
}

async function sigintExit(): Promise<Figure> {
  const dir = await Deno.makeTempDir({ prefix: "accel-agent-bench-sigint-" });
  try {
    const marker = `${dir}/ready`;
    const empty = `${dir}/empty.ts`;
    await Deno.writeTextFile(
      empty,
      `Deno.addSignalListener("SIGINT", () => Deno.exit(130));\n` +
        `Deno.writeTextFileSync(${JSON.stringify(marker)}, "");\nsetInterval(() => {}, 1000);\n`,
    );
    const exists = () => {
      try {
        Deno.statSync(marker);
        return true;
      } catch {
        return false;
      }
    };
    const asks: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      await using llm = await startScriptedLlm({
        scenario: { turns: [{ respond: { fault: "stall", afterText: "Looking" } }] },
      });
      asks.push(
        await sigintToExit(
          [Deno.execPath(), "run", ...AGENT_FLAGS, MAIN, "ask", "--json", "the beam current?"],
          { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
          () => llm.requests.length === 1,
        ),
      );
      await Deno.remove(marker).catch(() => {});
      base.push(
        await sigintToExit([Deno.execPath(), "run", `--allow-write=${dir}`, empty], {}, exists),
      );
    }
    return excessAtMost("SIGINT to exit of a stalled ask vs an empty program", asks, base, 1000);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The figures of this file. */
export async function timingBoundsBench(): Promise<Figure[]> {
  return [await readTimeout(), await sigintExit()];
}
