/**
 * Spare sandbox processes never outlive the program, run as a user runs it
 * (through the launcher, grants from the config): `ask` prewarms the next
 * run's process and a spare, and whether the program ends by itself, by a
 * stop signal while its turn waits or runs, or is killed outright, no
 * sandbox process it started is left.
 */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import type { Respond } from "../support/scripted_llm_types.ts";
import { LAUNCHER_FLAGS, programPid, UserSetup } from "../support/user_grants.ts";
import { cpuTicks, sandboxPids, SNAPSHOT_PATH } from "../support/sandbox.ts";
import { childEnv, ROOT } from "../support/run_agent.ts";
import { AMPLE } from "./attack_user.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** A user's set-up whose `[sandbox]` keeps one spare, with every limit ample. */
async function spareUser(): Promise<{ user: UserSetup; workRoot: string }> {
  const user = await UserSetup.start();
  const workRoot = `${user.dir}/work`;
  await Deno.mkdir(`${user.dir}/data`);
  await Deno.mkdir(`${user.dir}/scripts`);
  const table = Object.entries(AMPLE).map(([k, v]) => `${k} = ${v}`).join("\n");
  await Deno.writeTextFile(
    user.configPath,
    `${await Deno.readTextFile(user.configPath)}\n[agent]\ntool_timeout_s = 3600\n[sandbox]\n` +
      `data_dirs = [${JSON.stringify(`${user.dir}/data`)}]\n` +
      `scripts_dir = ${JSON.stringify(`${user.dir}/scripts`)}\n` +
      `work_dir = ${JSON.stringify(workRoot)}\n` +
      `cache_dir = ${JSON.stringify(SNAPSHOT_PATH.slice(0, SNAPSHOT_PATH.lastIndexOf("/")))}\n` +
      `prewarm = true\nspare_processes = 1\n${table}\n`,
  );
  return { user, workRoot };
}

/** Polls `cond` (a generous deadline: a busy machine is slow, never wrong). */
async function until(cond: () => boolean, what: string): Promise<void> {
  const t = performance.now();
  while (!cond()) {
    if (performance.now() - t > 90_000) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function executeCode(code: string): Respond {
  return { toolCalls: [{ name: "execute_code", arguments: { description: "check", code } }] };
}

/** Resident size of a process in MiB (0 once it is gone). */
function rssMib(pid: number): number {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

Deno.test({
  name: "after the program ends by itself, no sandbox process (run, spare or refill) is left",
  ...opts,
  async fn() {
    const { user, workRoot } = await spareUser();
    await using _user = user;
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          { respond: executeCode("print(6 * 7)") },
          { expect: { toolResultIncludes: ['"stdout":"42\\n"'] }, respond: { text: "Done." } },
        ],
      },
    });
    // The question comes on stdin, once both prewarmed processes are there.
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...LAUNCHER_FLAGS, `${ROOT}/launch.ts`, "--config", user.configPath, "--json"],
      cwd: ROOT,
      clearEnv: true,
      env: childEnv({ OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "test-key" }),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const output = child.output();
    let seen: number[] = [];
    await until(() => (seen = sandboxPids(workRoot)).length === 2, "two sandbox processes");
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode("what is six times seven?\n"));
    await w.close();
    // A program that does not end (a sandbox process it waits for) is ended here, and fails below.
    const guard = setTimeout(() => child.kill("SIGKILL"), 120_000);
    const out = await output;
    clearTimeout(guard);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.deepEqual(llm.failures, []);
    assert.equal(llm.remaining(), 0);
    // Closed on the way out: gone when the program is, with no waiting.
    assert.deepEqual(sandboxPids(workRoot), [], "sandbox processes outlived the program");
    for (const pid of seen) assert.equal(cpuTicks(pid), undefined);
  },
});

const STOPS = [
  { signal: "SIGTERM", code: 143 },
  { signal: "SIGINT", code: 130 },
  { signal: "SIGHUP", code: 129 },
  { signal: "SIGKILL", code: "non-zero" },
] as const;

for (const { signal, code } of STOPS) {
  Deno.test({
    name:
      `${signal} to the program while its turn waits on the model leaves no sandbox process (exit ${code})`,
    ...opts,
    async fn() {
      const { user, workRoot } = await spareUser();
      await using _user = user;
      await using llm = await startScriptedLlm({
        scenario: { turns: [{ respond: { fault: "stall" } }] },
      });
      let seen: number[] = [];
      const r = await user.run(["ask", "--json", "wait"], {
        env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "test-key" },
        onSpawn: async (launcher) => {
          // Both prewarmed processes started: the next run's and the spare.
          await until(() => (seen = sandboxPids(workRoot)).length === 2, "two sandbox processes");
          Deno.kill(await programPid(launcher), signal);
        },
      });
      if (signal === "SIGKILL") assert.notEqual(r.code, 0);
      else assert.equal(r.code, code, r.stderr);
      // Killed outright, the program closes nothing: each process ends when its stdin does.
      await until(() => sandboxPids(workRoot).length === 0, "no sandbox process left");
      assert.equal(seen.length, 2);
    },
  });
}

Deno.test({
  name: "SIGKILL to the program mid-run leaves no sandbox process",
  ...opts,
  async fn() {
    const { user, workRoot } = await spareUser();
    await using _user = user;
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          { respond: executeCode("print(1)") },
          // 400 MB touched, then a long sleep: the run is visible from outside by its size.
          { respond: executeCode("import time\nkeep = b'x' * (400 * 2**20)\ntime.sleep(600)") },
        ],
      },
    });
    const r = await user.run(["ask", "--json", "run and hang"], {
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "test-key" },
      onSpawn: async (launcher) => {
        await until(
          () => sandboxPids(workRoot).some((pid) => rssMib(pid) > 400),
          "the second run holding its memory",
        );
        Deno.kill(await programPid(launcher), "SIGKILL");
      },
    });
    assert.notEqual(r.code, 0);
    await until(() => sandboxPids(workRoot).length === 0, "no sandbox process left");
  },
});
