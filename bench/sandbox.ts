/**
 * Sandbox figures for `deno task bench`, each beside a baseline measured in
 * the same run:
 *
 * - a warm run of a small analysis script (CSV statistics and an output
 *   file) on a prewarmed Pyodide sandbox process (one process per run, the
 *   next started when a run ends), against the seed's design: a
 *   `python3` subprocess per run with a guard preamble (AST scan of imports,
 *   an import blocker, a patched `open()`), reconstructed here;
 * - two runs back to back: the second (on the spare process, started
 *   beside the first run's) against a warm run, and the same without a spare;
 * - a busy loop's result under a 1 s time limit, and the host's event loop
 *   meanwhile (the tests check what stops a run, never how soon);
 * - the cold first run, sandbox process start included (from the memory
 *   snapshot), against the same `python3` subprocess;
 * - the CPU a prewarmed process uses until it is idle with V8 optimizing
 *   eagerly (the default) against optimizing only hot code, and when that is;
 * - the resident memory of an idle prewarmed sandbox process (after that
 *   compiling), against an idle `deno` process, and of an idle spare: what
 *   `[sandbox] spare_processes = 1` costs.
 *
 * @module
 */
import { defaultPyodideDir, PyodideSandbox } from "../src/sandbox/mod.ts";
import { atMost, type Figure, median } from "./figure.ts";

const SCRIPT = `
import csv, json, math, statistics
rows = list(csv.DictReader(open(DATA_DIR + "/orbit.csv")))
xs = [float(r["x_mm"]) for r in rows]
ys = [float(r["y_mm"]) for r in rows]
out = {"n": len(xs), "rms_x": math.sqrt(sum(x * x for x in xs) / len(xs)),
       "std_y": statistics.pstdev(ys), "worst": max(rows, key=lambda r: abs(float(r["x_mm"])))["bpm"]}
json.dump(out, open(WORK_DIR + "/stats.json", "w"))
print(out["n"], round(out["rms_x"], 4))
`;

/** The seed's guard, reconstructed: checks by pattern, then runs the code in-process. */
const SEED_PREAMBLE = `
import ast, builtins, os, sys
DATA_DIR, WORK_DIR = sys.argv[1], sys.argv[2]
BLOCKED = {"socket", "subprocess", "ctypes", "epics", "tango", "requests", "urllib", "http"}
code = open(sys.argv[3]).read()
for node in ast.walk(ast.parse(code)):
    names = [a.name for a in node.names] if isinstance(node, ast.Import) else \\
        [node.module or ""] if isinstance(node, ast.ImportFrom) else []
    if any(n.split(".")[0] in BLOCKED for n in names):
        sys.exit("blocked import")
_real_import, _real_open = builtins.__import__, builtins.open
def _guarded_import(name, *a, **k):
    if name.split(".")[0] in BLOCKED:
        raise ImportError(name + " is blocked")
    return _real_import(name, *a, **k)
def _guarded_open(path, mode="r", *a, **k):
    p = os.path.realpath(path)
    if any(c in mode for c in "wax+") and not p.startswith(WORK_DIR):
        raise PermissionError(path)
    if not (p.startswith(DATA_DIR) or p.startswith(WORK_DIR)):
        raise PermissionError(path)
    return _real_open(path, mode, *a, **k)
builtins.__import__, builtins.open = _guarded_import, _guarded_open
os.chdir(WORK_DIR)
exec(compile(code, "<code>", "exec"), {"__name__": "__main__", "DATA_DIR": DATA_DIR, "WORK_DIR": WORK_DIR})
`;

/** The pause before a timed warm run (after its process is ready) and before a seed run. */
const SETTLE_MS = 500;

async function seedRun(python: string, dir: string): Promise<number> {
  const t = performance.now();
  const out = await new Deno.Command(python, {
    args: [`${dir}/preamble.py`, `${dir}/data`, `${dir}/seedwork`, `${dir}/script.py`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t;
  if (!out.success) {
    throw new Error(`python3 baseline failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return ms;
}

interface Settled {
  /** CPU time of the process from its start until it went idle. */
  cpuMs: number;
  /** Wall time from asking for the process until it went idle. */
  ms: number;
  rssMb: number;
}

/** Waits for a new prewarmed process to go idle: no CPU used for 250 ms. */
async function settle(sandbox: PyodideSandbox): Promise<Settled> {
  const t = performance.now();
  return await settlePid((await sandbox.ready()).pid, t);
}

/** Waits for the process `pid` to go idle (asked for at `t`). */
async function settlePid(pid: number, t = performance.now()): Promise<Settled> {
  let last = cpuMs(pid);
  let lastChange = performance.now();
  while (performance.now() - lastChange < 250) {
    await new Promise((r) => setTimeout(r, 25));
    const now = cpuMs(pid);
    if (now !== last) [last, lastChange] = [now, performance.now()];
  }
  return { cpuMs: last, ms: lastChange - t, rssMb: rssMb(pid) };
}

/** Watches this process's event loop with a 10 ms timer; `stop()` gives its longest stall in ms. */
function watchEventLoop(): { stop(): number } {
  let worst = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 10);
  return {
    stop() {
      clearInterval(timer);
      return worst;
    },
  };
}

/** User and system CPU time of a process, from /proc (in USER_HZ ticks, 100 a second on Linux). */
function cpuMs(pid: number): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssMb(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
}

/** The interpreter itself, not a wrapper such as a pyenv shim (which would slow the baseline). */
async function realPython(name: string): Promise<string> {
  const out = await new Deno.Command(name, {
    args: ["-c", "import sys; print(sys.executable)"],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).trim() || name;
}

/** Measures the three sandbox figures against `python3` from PATH. */
export async function sandboxBench(pythonName = "python3"): Promise<Figure[]> {
  const python = await realPython(pythonName);
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "accel-agent-bench-" }));
  try {
    return await measure(python, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function measure(python: string, dir: string): Promise<Figure[]> {
  for (const d of ["data", "work", "seedwork", "cache"]) await Deno.mkdir(`${dir}/${d}`);
  const rows = ["bpm,x_mm,y_mm"];
  for (let i = 0; i < 200; i++) {
    rows.push(`BPM${i},${Math.sin(i) * 0.3},${Math.cos(i * 0.7) * 0.2}`);
  }
  await Deno.writeTextFile(`${dir}/data/orbit.csv`, `${rows.join("\n")}\n`);
  await Deno.writeTextFile(`${dir}/script.py`, SCRIPT);
  await Deno.writeTextFile(`${dir}/preamble.py`, SEED_PREAMBLE);
  const make = (optimize: "eager" | "hot" = "eager", spareProcesses = 1) =>
    new PyodideSandbox({
      optimize,
      spareProcesses,
      pyodideDir: defaultPyodideDir(),
      dataDirs: [`${dir}/data`],
      workRoot: `${dir}/work`,
      snapshotPath: `${dir}/cache/pyodide.snapshot`,
      limits: {
        timeoutMs: 30_000,
        graceMs: 500,
        memoryMb: 512,
        maxOutputChars: 20_000,
        maxFiles: 20,
        maxFileBytes: 1_000_000,
        maxWorkMb: 100,
        keepRuns: 50,
      },
    });
  // The first sandbox ever makes the snapshot; not measured.
  const first = make();
  await first.run({ code: SCRIPT });
  await first.close();

  // The baseline on its own, with no sandbox process alive beside it, each
  // run after the same pause as a warm sandbox run.
  const seed: number[] = [];
  for (let i = 0; i < 5; i++) await seedRun(python, dir);
  for (let i = 0; i < 30; i++) {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    seed.push(await seedRun(python, dir));
  }

  const warm: number[] = [];
  const sandbox = make();
  for (let i = 0; i < 5; i++) {
    await sandbox.idle();
    await sandbox.run({ code: SCRIPT });
  }
  // Each run has its own process, prewarmed after the last run ends: a warm
  // run is one on a prewarmed process after a pause (as when an operator or
  // the model pauses between runs). On these machines any run after a pause
  // is slower than one straight after other work (a cold CPU), so the
  // baseline pauses as long.
  for (let i = 0; i < 30; i++) {
    // The next run's process and its spare both ready (and compiled).
    await sandbox.idle();
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const t = performance.now();
    const r = await sandbox.run({ code: SCRIPT });
    warm.push(performance.now() - t);
    if (!r.ok) throw new Error(`sandbox run failed: ${r.error}`);
  }
  // Two runs back to back, as the model's next tool call comes: the second
  // takes the spare (or, without one, waits for a process to start).
  const backToBack = async (s: PyodideSandbox) => {
    const second: number[] = [];
    for (let i = 0; i < 9; i++) {
      await s.idle();
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      await s.run({ code: SCRIPT });
      const t = performance.now();
      const r = await s.run({ code: SCRIPT });
      second.push(performance.now() - t);
      if (!r.ok) throw new Error(`sandbox run failed: ${r.error}`);
    }
    return second;
  };
  const withSpare = await backToBack(sandbox);
  // The time limit as a user meets it (the tests check what stops a run,
  // not how soon): a busy loop with a 1 s limit, its result's time, and the
  // host's event loop meanwhile against the host idle as long.
  const limited: number[] = [];
  const stalls: number[] = [];
  const idleStalls: number[] = [];
  for (let i = 0; i < 5; i++) {
    await sandbox.idle();
    let watch = watchEventLoop();
    await new Promise((r) => setTimeout(r, 1_000));
    idleStalls.push(watch.stop());
    watch = watchEventLoop();
    const t = performance.now();
    const r = await sandbox.run({ code: "while True: pass", timeoutMs: 1_000 });
    limited.push(performance.now() - t);
    stalls.push(watch.stop());
    if (!r.timedOut) throw new Error(`the busy loop was not stopped by its time limit: ${r.error}`);
  }
  // What the spare costs: an idle one's resident size, once it has compiled.
  const spareRss: number[] = [];
  for (let i = 0; i < 3; i++) {
    const spare = (await sandbox.idle())[1];
    if (!spare?.ready) throw new Error("the sandbox kept no spare process");
    spareRss.push((await settlePid(spare.pid)).rssMb);
    await sandbox.run({ code: SCRIPT });
    await sandbox.run({ code: SCRIPT });
  }
  await sandbox.close();
  const single = make("eager", 0);
  const withoutSpare = await backToBack(single);
  await single.close();

  // What eager optimizing costs: the CPU a prewarmed process uses until it
  // is idle, and how long after its start that is, against "hot".
  const settled = { eager: [] as Settled[], hot: [] as Settled[] };
  for (let i = 0; i < 5; i++) {
    for (const mode of ["eager", "hot"] as const) {
      const s = make(mode);
      settled[mode].push(await settle(s));
      await s.close();
    }
  }

  const cold: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t = performance.now();
    const s = make();
    const r = await s.run({ code: SCRIPT });
    cold.push(performance.now() - t);
    if (!r.ok) throw new Error(`sandbox run failed: ${r.error}`);
    await s.close();
  }

  const empty = new Deno.Command(Deno.execPath(), {
    args: ["eval", "await new Promise((r) => setTimeout(r, 60_000))"],
    stdout: "null",
    stderr: "null",
  }).spawn();
  await new Promise((r) => setTimeout(r, 700));
  const denoIdle = rssMb(empty.pid);
  empty.kill("SIGKILL");
  await empty.status;

  const ratio = median(warm) / median(seed);
  const eagerCpu = median(settled.eager.map((s) => s.cpuMs));
  const hotCpu = median(settled.hot.map((s) => s.cpuMs));
  const idleAfter = median(settled.eager.map((s) => s.ms));
  const idleRss = settled.eager.map((s) => s.rssMb);
  return [
    {
      name: "sandbox warm run vs seed python3 subprocess + preamble",
      value: median(warm),
      baseline: median(seed),
      judged: `${ratio.toFixed(2)}× the seed`,
      goal: "≤ 0.5×",
      ok: ratio <= 0.5,
    },
    {
      name: "sandbox two runs back to back: the second (on the spare) vs a warm run",
      value: median(withSpare),
      baseline: median(warm),
      judged: `${(median(withSpare) / median(warm)).toFixed(2)}× a warm run`,
      goal: "≤ 2×",
      ok: median(withSpare) <= 2 * median(warm),
    },
    {
      name: "sandbox two runs back to back, spare_processes = 0: the second vs a warm run",
      value: median(withoutSpare),
      baseline: median(warm),
      judged: `${(median(withoutSpare) / median(warm)).toFixed(2)}× a warm run`,
      goal: "(for comparison)",
      ok: true,
    },
    atMost("sandbox busy loop with a 1 s time limit: its result after", limited, 1_000, 1_500, {
      digits: 0,
      goal: "≤ 1500 ms (the limit and the grace period)",
    }),
    atMost(
      "host event loop's longest stall while the sandbox spins vs the host idle",
      stalls,
      idleStalls,
      100,
      {
        digits: 0,
      },
    ),
    atMost("sandbox cold first run (process start) vs seed python3", cold, seed, 500, {
      digits: 0,
    }),
    {
      name: "prewarmed sandbox process CPU until idle, optimize = eager vs hot",
      value: eagerCpu,
      baseline: hotCpu,
      judged: `+${((eagerCpu - hotCpu) / 1000).toFixed(2)} CPU-s, idle ${
        (idleAfter / 1000).toFixed(2)
      } s after its start`,
      goal: "idle ≤ 2 s after its start",
      ok: idleAfter <= 2000,
    },
    atMost("idle prewarmed sandbox RSS vs idle deno process", idleRss, denoIdle, 512, {
      unit: "MB",
      digits: 0,
      goal: "≤ 512 MB (the memory cap)",
    }),
    atMost("idle memory of the spare process (RSS) vs idle deno process", spareRss, denoIdle, 512, {
      unit: "MiB",
      digits: 0,
      goal: "≤ 512 MiB (the memory cap)",
    }),
  ];
}

if (import.meta.main) {
  for (const f of await sandboxBench()) console.log(JSON.stringify(f));
}
