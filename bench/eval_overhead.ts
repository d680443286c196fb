/**
 * Bench figure: the evaluation harness's overhead per attempt. One attempt
 * of `read-ring-current` (a fresh simulator, its state directory created and
 * removed, the app wired, the turn run, the audit read, the checks graded)
 * against a zero-latency scripted server, beside the same two streamed model
 * requests made with bare fetch: the difference is what the harness costs
 * beyond the model's time.
 *
 * Run alone: `deno run -A bench/eval_overhead.ts`.
 *
 * @module
 */
import { loadConfig } from "../src/config/mod.ts";
import { runAttempt } from "../src/eval/attempt.ts";
import { DEFAULT_TASKS_URL, loadTasks } from "../src/eval/task.ts";
import { parseScenario } from "../tests/support/scripted_llm_scenario.ts";
import { startScriptedLlm } from "../tests/support/scripted_llm.ts";
import { type Figure, median } from "./figure.ts";

/** What one attempt may cost beyond its model requests. */
const LIMIT_MS = 100;

export async function evalOverheadBench(rounds = 40): Promise<Figure> {
  const tasks = await loadTasks([decodeURIComponent(DEFAULT_TASKS_URL.pathname)]);
  const task = tasks.find((t) => t.id === "read-ring-current");
  if (!task?.scripted) throw new Error("read-ring-current is missing from the shipped tasks");
  const scenario = { ...parseScenario(task.scripted.solving, task.id), loop: true };
  await using llm = await startScriptedLlm({ scenario, record: false });
  const base = await loadConfig({ env: { get: () => undefined }, cwd: Deno.cwd() });
  const env = (n: string) => (n === "HOME" ? Deno.env.get("HOME") : undefined);
  const attempt = async () => {
    const r = await runAttempt(task, 1, base, { name: "main", baseUrl: llm.url }, env);
    if (!r.passed) throw new Error(`bench attempt failed: ${r.reason}`);
    return r.wallMs;
  };
  const question = task.turns[0] ?? "";
  // The same two streamed requests, read to the end, with nothing around them.
  const raw = async () => {
    const t = performance.now();
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${llm.url}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer bench" },
        body: JSON.stringify({
          model: "gpt-4o",
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: "user", content: question }],
        }),
      });
      await res.text();
    }
    return performance.now() - t;
  };
  for (let i = 0; i < 5; i++) {
    await attempt();
    await raw();
  }
  const attempts: number[] = [];
  const raws: number[] = [];
  for (let i = 0; i < rounds; i++) {
    attempts.push(await attempt());
    raws.push(await raw());
  }
  const overhead = median(attempts) - median(raws);
  return {
    name: "eval attempt (read task) vs its 2 bare model requests",
    value: median(attempts),
    baseline: median(raws),
    judged: `overhead ${overhead.toFixed(1)} ms`,
    goal: `≤ ${LIMIT_MS} ms`,
    ok: overhead <= LIMIT_MS,
  };
}

if (import.meta.main) console.log(JSON.stringify(await evalOverheadBench()));
