/**
 * Facility hooks under a user's real grants: the program is started with
 * exactly the grants `accel-agent permissions` computes, which run the hook
 * programs the config names and nothing else. A veto hook stops a tool call
 * (the tool never runs, the model reads why), a logging hook receives the
 * call as JSON, and a hook that cannot be started vetoes (fail closed).
 */
import assert from "node:assert/strict";
import { computeGrants } from "../../src/app/permissions.ts";
import { KILL_PROGRAM } from "../../src/tools/hooks.ts";
import { loadConfig } from "../../src/config/mod.ts";
import { UserSetup } from "../support/user_grants.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

const HOOKS = `
[[hooks.before_tool]]
name = "night-policy"
command = ["hooks/veto.sh", "--strict"]
tools = ["get_*"]
timeout_s = 5

[[hooks.before_tool]]
command = ["hooks/missing.sh"]
tools = ["read_log"]

[[hooks.after_tool]]
command = ["hooks/log.sh"]
`;

async function script(user: UserSetup, name: string, body: string): Promise<string> {
  await Deno.mkdir(`${user.dir}/hooks`, { recursive: true });
  const path = await user.file(`hooks/${name}`, `#!/bin/sh\n${body}\n`);
  await Deno.chmod(path, 0o755);
  return path;
}

Deno.test("under real grants a veto hook stops a tool call, a failing one fails closed, and a logging hook receives the call as JSON", async () => {
  await using user = await UserSetup.start({ extra: HOOKS });
  await script(
    user,
    "veto.sh",
    `cat > "${user.dir}/veto-input.json"\necho "$1: no archive reads at night" >&2\nexit 3`,
  );
  await script(user, "log.sh", `cat >> "${user.dir}/log.jsonl"\necho >> "${user.dir}/log.jsonl"`);
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        {
          respond: {
            toolCalls: [
              { id: "c1", name: "get_parameter", arguments: { devices: ["SR:COR:H01:SETPT"] } },
              { id: "c2", name: "search_device", arguments: { pattern: "SR:COR:*" } },
              { id: "c3", name: "read_log", arguments: { source: "elog" } },
            ],
          },
        },
        { respond: { text: "done" } },
      ],
    },
  });
  const r = await user.run(["ask", "--stream-json", "Where is the H01 corrector?"], {
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k", USER: "alice" },
  });
  assert.equal(r.code, 0, r.stderr);
  const events = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  const result = events.at(-1);
  const byId = new Map(result.tool_calls.map((c: { id: string }) => [c.id, c]));
  // The vetoed call did not run: the model reads the hook's reason.
  const tools = llm.requests[1]?.body.messages.filter((m) => m.role === "tool") ?? [];
  const answer = (id: string) => String(tools.find((m) => m.tool_call_id === id)?.content);
  assert.equal(
    answer("c1"),
    JSON.stringify({
      error: "vetoed by facility hook night-policy: --strict: no archive reads at night",
    }),
  );
  assert.equal((byId.get("c1") as { ok: boolean }).ok, false);
  assert.doesNotMatch(answer("c1"), /value/);
  // The hook that cannot be started stops its call too.
  assert.match(answer("c3"), /vetoed by facility hook missing\.sh: it could not be run/);
  // The call no hook objects to ran.
  assert.equal((byId.get("c2") as { ok: boolean }).ok, true, answer("c2"));
  assert.match(answer("c2"), /SR:COR:H01:SETPT/);
  const hooks = events.filter((e) => e.type === "hook");
  assert.deepEqual(hooks.map((e) => [e.id, e.outcome]).sort(), [["c1", "vetoed"], [
    "c3",
    "vetoed",
  ]]);

  const given = JSON.parse(await Deno.readTextFile(`${user.dir}/veto-input.json`));
  assert.deepEqual(given, {
    hook: "before_tool",
    tool: "get_parameter",
    call_id: "c1",
    args: { devices: ["SR:COR:H01:SETPT"] },
    session_id: events[0].sessionId,
    operator: "alice",
  });
  // The logger heard of the call that ran (vetoed calls never ran: nothing after them).
  const logged = (await Deno.readTextFile(`${user.dir}/log.jsonl`)).trim().split("\n")
    .map((l) => JSON.parse(l));
  assert.deepEqual(logged.map((l) => [l.hook, l.tool, l.call_id, l.ok]), [
    ["after_tool", "search_device", "c2", true],
  ]);
  assert.match(logged[0].result_summary, /SR:COR:H01:SETPT/);
  assert.equal(logged[0].operator, "alice");
});

Deno.test("the grants run the configured hook programs, resolved beside the config, and the kill program, nothing more", async () => {
  await using user = await UserSetup.start({ extra: HOOKS });
  const loaded = await loadConfig({
    path: user.configPath,
    env: { get: () => undefined },
    cwd: "/",
  });
  // HOME is set, as it always is for the launcher (without it the default's ~ paths are an error).
  const env = (n: string) => n === "HOME" ? user.dir : undefined;
  const grants = computeGrants(loaded, { env, cwd: "/", run: ["/usr/bin/deno"] });
  assert.deepEqual(grants.run, [
    "/usr/bin/deno",
    `${user.dir}/hooks/veto.sh`,
    `${user.dir}/hooks/missing.sh`,
    `${user.dir}/hooks/log.sh`,
    // What stops a hook's process group past its timeout.
    KILL_PROGRAM,
  ]);
});

/** Whether process `pid` is gone (or only a zombie waiting to be reaped). */
async function dead(pid: number): Promise<boolean> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

Deno.test("under real grants a hook that ignores SIGTERM is stopped with its children after the grace, and an after_tool hook that fails is in --json", async () => {
  await using user = await UserSetup.start({
    extra: `
[[hooks.before_tool]]
name = "stuck"
command = ["hooks/stuck.sh"]
tools = ["get_*"]
timeout_s = 1

[[hooks.after_tool]]
name = "logger"
command = ["hooks/fail.sh"]
`,
  });
  const pids = `${user.dir}/pids`;
  // It ignores SIGTERM, and so does the child it starts (ignored signals are inherited).
  await script(user, "stuck.sh", `trap '' TERM\nsleep 600 &\necho "$$ $!" > "${pids}"\nwait`);
  await script(user, "fail.sh", `cat > /dev/null\necho "log disk full" >&2\nexit 2`);
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        {
          respond: {
            toolCalls: [
              { id: "c1", name: "get_parameter", arguments: { devices: ["SR:COR:H01:SETPT"] } },
              { id: "c2", name: "search_device", arguments: { pattern: "SR:COR:*" } },
            ],
          },
        },
        { respond: { text: "done" } },
      ],
    },
  });
  // Far inside the hook's own 600 s: the run ends because the hook was stopped, not because it ended.
  const r = await user.run(["ask", "--json", "Where is the H01 corrector?"], {
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
    ceilingMs: 120_000,
  });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  // The two calls ran concurrently: the hooks' reports come in the order they ended.
  const hooks = [...out.hooks].sort((a, b) => a.call_id.localeCompare(b.call_id));
  assert.deepEqual(
    hooks.map((h: Record<string, string>) => [h.stage, h.hook, h.call_id, h.outcome, h.message]),
    [
      [
        "before_tool",
        "stuck",
        "c1",
        "vetoed",
        "vetoed by facility hook stuck: it did not finish within 1 s and was stopped",
      ],
      [
        "after_tool",
        "logger",
        "c2",
        "failed",
        "facility hook logger after search_device failed: it exited with status 2: log disk full",
      ],
    ],
  );
  // The hook and the child it left were killed, though both ignore SIGTERM.
  const [hook, child] = (await Deno.readTextFile(pids)).trim().split(/\s+/).map(Number);
  for (let i = 0; i < 600 && !(await dead(hook!) && await dead(child!)); i++) {
    await new Promise((res) => setTimeout(res, 100));
  }
  assert.ok(await dead(hook!), "the hook is gone");
  assert.ok(await dead(child!), "the child it started is gone");
});

Deno.test("under real grants a hook that ignores SIGTERM does not outlive the program when its turn is stopped", async () => {
  await using user = await UserSetup.start({
    extra: `
[[hooks.before_tool]]
name = "stuck"
command = ["hooks/stuck.sh"]
timeout_s = 300
`,
  });
  const pids = `${user.dir}/pids`;
  await script(user, "stuck.sh", `trap '' TERM\nsleep 600 &\necho "$$ $!" > "${pids}"\nwait`);
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [{
        respond: {
          toolCalls: [{ name: "get_parameter", arguments: { devices: ["SR:COR:H01:SETPT"] } }],
        },
      }],
    },
  });
  const r = await user.run(["ask", "--json", "Where is the H01 corrector?"], {
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
    ceilingMs: 120_000,
    onSpawn: async (launcher) => {
      // The hook runs (well inside its 300 s): the operator's script stops the program.
      for (let i = 0; i < 1200 && !(await Deno.stat(pids).catch(() => undefined)); i++) {
        await new Promise((res) => setTimeout(res, 50));
      }
      Deno.kill(launcher.pid, "SIGTERM");
    },
  });
  assert.equal(r.code, 143, r.stderr);
  assert.equal(JSON.parse(r.stdout).exit_code, 143);
  // Gone with the program: no hook left running for minutes with nobody to stop it.
  const [hook, child] = (await Deno.readTextFile(pids)).trim().split(/\s+/).map(Number);
  for (let i = 0; i < 100 && !(await dead(hook!) && await dead(child!)); i++) {
    await new Promise((res) => setTimeout(res, 100));
  }
  assert.ok(await dead(hook!), "the hook outlived the program");
  assert.ok(await dead(child!), "the hook's child outlived the program");
});
