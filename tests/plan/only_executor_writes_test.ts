/**
 * The invariant behind the whole safety chain: only the plan executor's
 * modules (src/plan/executor.ts and src/plan/executor/) call
 * ControlSystem.write, at one call site. Adapters implement write; nothing
 * else calls it.
 */
import assert from "node:assert/strict";
import type { App } from "../../src/app/app.ts";
import type { FeatureDeps } from "../../src/app/features.ts";
import type { ExecuteDeps } from "../../src/plan/executor.ts";
import type { PreflightDeps } from "../../src/plan/preflight.ts";
import type { ToolDeps } from "../../src/tools/define.ts";
import { testApps } from "../support/test_app.ts";

const SRC = new URL("../../src/", import.meta.url);

/** Calls named write that are not a control system's, each with its reason. */
const NOT_A_CONTROL_SYSTEM: Record<string, string> = {
  "util/whole_append.ts: write(": "the append interface's write (audit and session files)",
  "util/whole_append.ts: f.write(": "appends to an audit or session file",
  "util/whole_append.ts: file.write(": "appends to an audit or session file",
  "plan/run_journal.ts: file.write(": "writes a running plan's marker file",
  "index/cache.ts: file.write(": "writes the device index's cache file",
  // Typed Simulator, never a facility's control system: an evaluation attempt's own fresh one.
  "eval/conditions.ts: sim.write(":
    "sets a fresh simulator's starting state before the attempt runs",
  // Typed Simulator, never a facility's control system: a prediction's own copy (Simulator.clone()).
  "app/prediction_wiring.ts: copy.write(":
    "sets a device of a prediction's copy of the simulated facility, never the live one",
  "eval/conditions.ts: write(": "the definition of that wrapper's write method",
  "eval/conditions.ts: this.inner.write(": "passes the executor's write to the attempt's simulator",
  "cli/repl/line_input.ts: process.stdout.write(":
    "bracketed paste on and off around the prompt, and a newline after Ctrl-C at it",
  "cli/repl/line_input.ts: stream.write(": "hands typed-ahead keys to the line editor's input",
  "sandbox/sandbox_process.ts: writer.write(": "sends a message to the sandbox process's stdin",
  "tools/hooks.ts: writer.write(": "gives a facility hook program its JSON on stdin",
  "safety/audit_deliver.ts: conn.write(": "sends audit records to the site's log collector",
  "sandbox/python_prelude.ts: sys.stderr.write(": "Python code run inside the sandbox",
};

async function* sources(dir: URL): AsyncGenerator<URL> {
  for await (const e of Deno.readDir(dir)) {
    const url = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
    if (e.isDirectory) yield* sources(url);
    else if (e.name.endsWith(".ts")) yield url;
  }
}

Deno.test("no module but the plan executor calls write on a control system", async () => {
  const offenders: string[] = [];
  const executorCalls: string[] = [];
  for await (const file of sources(SRC)) {
    const rel = file.pathname.slice(SRC.pathname.length);
    const text = await Deno.readTextFile(file);
    // Any call named write(…): cs.write, this.cs.write, deps.cs.write, a destructured write…
    const calls = [...text.matchAll(/(?<![\w$])(?:[\w$.]*\.)?write\s*\(/g)].map((m) => m[0]);
    if (rel === "plan/executor.ts" || rel.startsWith("plan/executor/")) {
      executorCalls.push(...calls.map((c) => `${rel}: ${c}`));
      continue;
    }
    // Adapters define write and may call their own transport's; they are the other side of the door.
    if (rel.startsWith("adapters/")) continue;
    for (const c of calls) {
      if (!(`${rel}: ${c}` in NOT_A_CONTROL_SYSTEM)) offenders.push(`${rel}: ${c}`);
    }
  }
  assert.deepEqual(offenders, []);
  assert.deepEqual(
    executorCalls,
    ["plan/executor/writer.ts: this.deps.cs.write("],
    "the executor's modules have exactly one call site, in its writer",
  );
});

Deno.test("the test control system refuses a write that does not come from the executor", async () => {
  const { SpyControlSystem } = await import("../support/spy_cs.ts");
  const { createSimulator } = await import("../../src/adapters/simulator/mod.ts");
  const cs = new SpyControlSystem(createSimulator({ seed: 1 }));
  await assert.rejects(
    cs.write("LINAC:COR:H01:SETPT", 0),
    /write to LINAC:COR:H01:SETPT from outside src\/plan\/executor\.ts/,
  );
  assert.equal(cs.attempts, 0);
});

/** True when the type has a `write` member. */
type HasWrite<T> = "write" extends keyof T ? true : false;

Deno.test("tools, sub-agents, CLI commands and preflight hold a control system without write", async () => {
  // Checked by the compiler: each line stops type-checking the day its holder can write.
  const tools: HasWrite<ToolDeps["cs"]> = false;
  const app: HasWrite<App["cs"]> = false;
  const features: HasWrite<FeatureDeps["cs"]> = false;
  const checks: HasWrite<PreflightDeps["cs"]> = false;
  const executor: HasWrite<ExecuteDeps["cs"]> = true;
  assert.deepEqual([tools, app, features, checks, executor], [false, false, false, false, true]);

  // And at run time: the app's view has no write to find, even through a cast.
  await using apps = await testApps((state) => `[state]\ndir = ${JSON.stringify(state)}\n`);
  const opened = await apps.open();
  assert.equal("write" in opened.cs, false);
  assert.equal(typeof (opened.cs as unknown as { write?: unknown }).write, "undefined");
  assert.ok(Object.isFrozen(opened.cs));
  const readings = await opened.cs.read(["LINAC:COR:H01:SETPT"]);
  assert.equal(readings[0]?.ok, true);
});
