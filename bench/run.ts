/**
 * `deno task bench`: each figure beside a baseline measured in the same run,
 * so a busy machine moves both. Prints a table and one JSON line per figure.
 *
 * - agent overhead per turn: a turn with one tool call through the real loop,
 *   model client, registry and simulator, against the same two model calls
 *   made with bare fetch to the same zero-latency scripted server.
 * - start-up to `--version` and to a ready prompt, against `deno run` of an
 *   empty program (and, for the prompt, the same under a pseudo-terminal).
 * - a scan step of 20 reads through the fake pvws gateway: batched against
 *   sequential per-device reads (bench/scan_reads.ts).
 * - the Python sandbox (bench/sandbox.ts): a warm run against the seed's
 *   python3 subprocess, the cold first run, an idle interpreter's memory.
 * - the simulator at 10^5 and 10^6 devices (bench/facility_scale.ts): build,
 *   a 1,000-device batch read and heap, against the default facility.
 * - the device index (bench/device_index.ts): wildcard search over 100k names
 *   against a Python regex scan and the linear scan, informal latency at 100k
 *   and 1M, 1M build / cache / memory, search quality per query class.
 * - an eval attempt (bench/eval_overhead.ts): the harness's cost per attempt
 *   beyond its model requests, against those requests made with bare fetch.
 * - promptness the tests no longer bound in wall time (bench/timing_bounds.ts):
 *   a read that times out against a bare sleep of its timeout; SIGINT to exit
 *   of a stalled `ask` against an empty program's.
 * - Tab completion at 10^5 names (bench/repl_completion.ts): one Tab against
 *   a filter over all names; the prompt's stall while the names load, in a
 *   worker against on the main thread.
 * - the live kill switch (bench/kill_switch.ts): a scan point through the
 *   fake gateway with the switches asked before each write, against none.
 * - the approval screen of a 500-action plan (bench/plan_table.ts) against
 *   the table library drawing the same rows.
 * - `search` from the command line at 10^6 devices (bench/search_process.ts):
 *   the first search on an empty state directory; a cached search against an
 *   empty program.
 * - a plan's predicted effect (bench/prediction.ts): preflight of 40 writes
 *   and of a 50-point scan with the prediction against without it, at the
 *   default facility and 10^5 devices; predicted against observed change for
 *   random legal plans.
 *
 * @module
 */
import { createSimulator } from "../src/adapters/simulator/mod.ts";
import { runTurn } from "../src/agent/loop.ts";
import { Session } from "../src/agent/session.ts";
import { createOpenAiClient } from "../src/llm/openai_client.ts";
import { createRegistry } from "../src/tools/mod.ts";
import { executePlan } from "../src/plan/executor.ts";
import { type Plan, planHash } from "../src/plan_model/plan.ts";
import { loadLimits } from "../src/safety/limits.ts";
import { startScriptedLlm } from "../tests/support/scripted_llm.ts";
import { AGENT_FLAGS, MAIN, ROOT } from "../tests/support/run_agent.ts";
import { scanReads } from "./scan_reads.ts";
import { sandboxBench } from "./sandbox.ts";
import { facilityScaleBench } from "./facility_scale.ts";
import { deviceIndexBench } from "./device_index.ts";
import { evalOverheadBench } from "./eval_overhead.ts";
import { timingBoundsBench } from "./timing_bounds.ts";
import { replCompletionBench } from "./repl_completion.ts";
import { killSwitchBench } from "./kill_switch.ts";
import { planTableBench } from "./plan_table.ts";
import { searchProcessBench } from "./search_process.ts";
import { predictionBench } from "./prediction.ts";
import { atMost, type Figure, median } from "./figure.ts";

const figures: Figure[] = [];

// ---- agent overhead per turn ------------------------------------------------

async function agentOverhead(): Promise<void> {
  await using llm = await startScriptedLlm({
    record: false,
    scenario: {
      loop: true,
      turns: [
        {
          respond: {
            toolCalls: [{ name: "get_parameter", arguments: { devices: ["LINAC:BPM:01:X"] } }],
            chunkSize: 4096,
          },
        },
        {
          respond: {
            text: "LINAC:BPM:01:X reads {{last_tool_result.readings[0].value}} mm.",
            chunkSize: 4096,
          },
        },
      ],
    },
  });
  const cs = createSimulator({ seed: 1 });
  const tools = createRegistry({ cs, now: () => Date.now() }, {
    maxOutputChars: 20_000,
    timeoutMs: 10_000,
  });
  const model = createOpenAiClient({
    name: "bench",
    model: "scripted",
    baseUrl: llm.url,
    apiKey: "bench",
    stream: true,
    retry: { maxRetries: 0, baseMs: 1, maxMs: 1 },
    requestTimeoutMs: 10_000,
    idleTimeoutMs: 10_000,
  });
  const question = "What is the horizontal position at LINAC:BPM:01:X?";

  const agentTurn = async () => {
    const session = new Session("bench", 0);
    for await (
      const ev of runTurn({
        session,
        input: question,
        model,
        tools,
        systemPrompt: "You are a bench.",
        maxIterations: 4,
        signal: new AbortController().signal,
      })
    ) if (ev.type === "error") throw new Error(ev.message);
  };
  // The same two streamed requests, read to the end, with nothing around them.
  const rawTurn = async () => {
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${llm.url}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer bench" },
        body: JSON.stringify({
          model: "scripted",
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: "system", content: "You are a bench." }, {
            role: "user",
            content: question,
          }],
          tools: tools.specs().map((t) => ({ type: "function", function: t })),
        }),
      });
      await res.text();
    }
  };
  const rounds = 300;
  for (let i = 0; i < 30; i++) {
    await agentTurn();
    await rawTurn();
  }
  const agent: number[] = [];
  const raw: number[] = [];
  for (let i = 0; i < rounds; i++) {
    // Interleaved, so load on the machine hits both alike.
    let t = performance.now();
    await agentTurn();
    agent.push(performance.now() - t);
    t = performance.now();
    await rawTurn();
    raw.push(performance.now() - t);
  }
  const overhead = median(agent) - median(raw);
  figures.push({
    name: "turn with 1 tool call vs its 2 bare model requests",
    value: median(agent),
    baseline: median(raw),
    judged: `overhead ${overhead.toFixed(2)} ms`,
    goal: "≤ 2 ms",
    ok: overhead <= 2,
  });
  await cs.close();
}

// ---- executor overhead per scan step ------------------------------------------

async function executorOverhead(): Promise<void> {
  const cs = createSimulator({ seed: 1 });
  const limits = await loadLimits(
    new URL("../configs/safety_limits.toml", import.meta.url).pathname,
  );
  const policy = {
    writesEnabled: true,
    maxScanPoints: 10_000,
    maxPlanSeconds: 1e9,
    limitsSource: "bench",
  };
  const device = "LINAC:COR:H01:SETPT";
  const reads = Array.from(
    { length: 20 },
    (_, i) => `LINAC:BPM:${String(i + 1).padStart(2, "0")}:X`,
  );
  const [start] = await cs.read([device]);
  const from = start?.value as number;
  const steps = 200;
  // Tiny steps so the scan and its return stay inside max_step (0.1 mrad).
  const plan: Plan = {
    description: "bench scan",
    actions: [{
      type: "scan",
      writeDevice: device,
      start: from,
      stop: from + 0.08,
      steps,
      readDevices: reads,
      dwellSeconds: 0,
    }],
    rollback: [{ type: "write", device, value: from, reason: "back" }],
  };
  const hash = await planHash(plan);
  const viaExecutor = async () => {
    const t = performance.now();
    const r = await executePlan(plan, hash, {
      cs,
      limits,
      policy,
      signal: new AbortController().signal,
      now: Date.now,
    });
    if (r.status !== "completed") throw new Error(`bench scan ${r.status}: ${r.errors.join("; ")}`);
    return (performance.now() - t) / steps;
  };
  // The same adapter calls per step, made directly: write, readback, read the 20 devices.
  const direct = async () => {
    const t = performance.now();
    for (let i = 0; i < steps; i++) {
      await cs.write(device, from + (0.08 * i) / (steps - 1));
      await cs.read([device]);
      await cs.read(reads);
    }
    await cs.write(device, from);
    return (performance.now() - t) / steps;
  };
  for (let i = 0; i < 3; i++) {
    await viaExecutor();
    await direct();
  }
  const ex: number[] = [];
  const raw: number[] = [];
  for (let i = 0; i < 15; i++) {
    ex.push(await viaExecutor());
    raw.push(await direct());
  }
  const overhead = median(ex) - median(raw);
  figures.push({
    name: "executor scan step (20 reads) vs the same adapter calls",
    value: median(ex),
    baseline: median(raw),
    judged: `overhead ${(overhead * 1000).toFixed(0)} µs/step`,
    goal: "≤ 1 ms",
    ok: overhead <= 1,
  });
  await cs.close();
}

// ---- start-up -----------------------------------------------------------------

async function timeProcess(args: string[], until?: RegExp, pty = false): Promise<number> {
  const argv = pty ? ["script", "-qfec", args.map((a) => `'${a}'`).join(" "), "/dev/null"] : args;
  const t = performance.now();
  const child = new Deno.Command(argv[0] as string, {
    args: argv.slice(1),
    cwd: ROOT,
    stdin: pty ? "piped" : "null",
    stdout: "piped",
    stderr: "null",
    env: { NO_COLOR: "1", OPENAI_BASE_URL: "http://127.0.0.1:9/v1", HOME: tempHome },
  }).spawn();
  let text = "";
  const decoder = new TextDecoder();
  let ms = NaN;
  for await (const chunk of child.stdout) {
    text += decoder.decode(chunk, { stream: true });
    if (until && until.test(text)) {
      ms = performance.now() - t;
      break;
    }
  }
  if (until) {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.stdout.cancel().catch(() => {});
    if (pty) await child.stdin.close().catch(() => {});
  }
  await child.status;
  return until ? ms : performance.now() - t;
}

const tempHome = await Deno.makeTempDir({ prefix: "accel-agent-bench-home-" });
globalThis.addEventListener("unload", () => Deno.removeSync(tempHome, { recursive: true }));

async function startup(): Promise<void> {
  const empty = `${tempHome}/empty.ts`;
  await Deno.writeTextFile(empty, 'console.log("ready");\n');
  const deno = Deno.execPath();
  // Warm the module cache once.
  await timeProcess([deno, "run", ...AGENT_FLAGS, MAIN, "--version"]);
  await timeProcess([deno, "run", empty]);
  const n = 15;
  const base: number[] = [];
  const version: number[] = [];
  const basePty: number[] = [];
  const prompt: number[] = [];
  const launched: number[] = [];
  // `deno task start`: the launcher reads the config for the grants, then starts main.ts.
  const launcher = [deno, "run", "--allow-read", "--allow-env", "--allow-run", `${ROOT}/launch.ts`];
  for (let i = 0; i < n; i++) {
    base.push(await timeProcess([deno, "run", empty]));
    version.push(await timeProcess([deno, "run", ...AGENT_FLAGS, MAIN, "--version"]));
    basePty.push(await timeProcess([deno, "run", empty], /ready/, true));
    prompt.push(await timeProcess([deno, "run", ...AGENT_FLAGS, MAIN], /accel› /, true));
    launched.push(await timeProcess(launcher, /accel› /, true));
  }
  const ratio = (name: string, xs: number[], limit: number): Figure => {
    const value = median(xs);
    const baseline = median(basePty);
    return {
      name,
      value,
      baseline,
      judged: `${(value / baseline).toFixed(2)}×`,
      goal: `≤ ${limit}×`,
      ok: value / baseline <= limit,
    };
  };
  figures.push(
    atMost("start-up to --version vs an empty program", version, base, 80),
    ratio("start-up to a ready prompt vs an empty program (pty)", prompt, 2.5),
    // Two processes, each loading the config (the launcher validates it for the grants).
    ratio("deno task start to a ready prompt vs an empty program (pty)", launched, 5),
  );
}

await agentOverhead();
await executorOverhead();
await startup();
figures.push(await scanReads());
figures.push(...await sandboxBench());
figures.push(...await facilityScaleBench());
const deviceIndex = await deviceIndexBench();
figures.push(...deviceIndex.figures);
console.log(`device index\n${deviceIndex.report.join("\n")}\n`);
figures.push(await evalOverheadBench());
figures.push(...await timingBoundsBench());
figures.push(...await replCompletionBench());
figures.push(...await killSwitchBench());
figures.push(await planTableBench());
figures.push(...await searchProcessBench());
figures.push(...await predictionBench());

const rows = figures.map((f) => [
  f.name,
  `${f.value.toFixed(2)} ${f.unit ?? "ms"}`,
  `${f.baseline.toFixed(2)} ${f.unit ?? "ms"}`,
  `${(f.value / f.baseline).toFixed(2)}×`,
  `${f.judged} (goal ${f.goal}) ${f.ok ? "met" : "NOT MET"}`,
]);
const head = ["figure", "measured", "baseline", "ratio", "judged"];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
console.log();
for (const r of [head, ...rows]) console.log(r.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  "));
for (const f of figures) console.log(JSON.stringify({ bench: f.name, ...f }));
