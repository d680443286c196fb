/**
 * Least privilege, proven by Deno itself: the program runs with exactly the
 * grants `accel-agent permissions` computes (as `deno task agent` and the
 * compiled executable do), and from inside that process a read of the
 * operator's SSH key, /etc/shadow, the repository's git config or a file
 * beside the config, a write outside the state/cache/work directories, an
 * environment variable not on the list, a connection to an unconfigured
 * host, a program other than the sandbox's runtime: each is refused with
 * `NotCapable`, while the normal command run in the same process works.
 */
import assert from "node:assert/strict";
import { computeGrants, isGrantFlag } from "../../src/app/permissions.ts";
import { loadConfig } from "../../src/config/mod.ts";
import { compileArgs, runGrantPaths } from "../../tools/compile.ts";
import type { Outcome, Probe } from "../support/grant_probe.ts";
import { childEnv, ROOT } from "../support/run_agent.ts";
import { UserSetup } from "../support/user_grants.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { call, routed } from "../agent/subagents/harness.ts";

const PROBE = `${ROOT}/tests/support/grant_probe.ts`;
const SECRET = "hunter2-not-for-the-agent";

/** A user's set-up with a HOME that holds an SSH key, and a file beside the config it does not name. */
async function setUp() {
  const user = await UserSetup.start();
  const home = `${user.dir}/home`;
  await Deno.mkdir(`${home}/.ssh`, { recursive: true });
  await Deno.writeTextFile(`${home}/.ssh/id_rsa`, "-----BEGIN OPENSSH PRIVATE KEY-----\n");
  await user.file("notes-beside-config.txt", "not named by the config\n");
  await Deno.mkdir(user.stateDir, { recursive: true });
  // Another service on loopback that the config does not name.
  const other = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("hi"),
  );
  const env = { HOME: home, SECRET_TOKEN: SECRET };
  return { user, home, other, env };
}

/** Where the repository's git config is (a worktree's `.git` is a file naming it). */
async function gitConfig(): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["rev-parse", "--path-format=absolute", "--git-common-dir"],
    cwd: ROOT,
    stdout: "piped",
  }).output();
  return `${new TextDecoder().decode(out.stdout).trim()}/config`;
}

/** Every attempt that must be refused, for a set-up. */
async function forbidden(s: Awaited<ReturnType<typeof setUp>>): Promise<Probe[]> {
  const port = (s.other.addr as Deno.NetAddr).port;
  const planted = `/tmp/accel-agent-planted-${crypto.randomUUID()}`;
  return [
    { kind: "read", path: `${s.home}/.ssh/id_rsa` },
    { kind: "read-node", path: `${s.home}/.ssh/id_rsa` },
    { kind: "read", path: "/etc/shadow" },
    { kind: "read", path: await gitConfig() },
    { kind: "read", path: `${ROOT}/.git` },
    { kind: "read", path: `${s.user.dir}/notes-beside-config.txt` },
    { kind: "write", path: `${s.user.dir}/planted.txt` },
    { kind: "write", path: `${s.home}/.bashrc` },
    { kind: "write", path: planted },
    { kind: "write-node", path: planted },
    // Read, but never written: the config and the limits file.
    { kind: "write", path: s.user.configPath },
    { kind: "write", path: `${s.user.dir}/limits.toml` },
    { kind: "net", url: `http://127.0.0.1:${port}/` },
    { kind: "run", path: "/bin/sh" },
    { kind: "sys", api: "osRelease" },
    { kind: "sys", api: "networkInterfaces" },
  ];
}

/** Variables off the list: they read as unset (`--ignore-env`), whatever the environment holds. */
const HIDDEN: Probe[] = [
  { kind: "env", name: "SECRET_TOKEN" },
  { kind: "env-node", name: "SECRET_TOKEN" },
  { kind: "env", name: "PATH" },
];

/** What the program needs, tried the same way: the probe is not just failing everything. */
function allowed(s: Awaited<ReturnType<typeof setUp>>): Probe[] {
  return [
    { kind: "read", path: s.user.configPath },
    { kind: "read", path: `${s.user.dir}/limits.toml` },
    { kind: "write", path: `${s.user.stateDir}/probe.txt` },
    { kind: "env", name: "HOME" },
    { kind: "net", url: `${s.user.epics.urls.alarm_logger_url}/` },
  ];
}

/** Runs `get` in the probe entry with `flags`; returns the probes' outcomes and the command's result. */
async function probeWith(flags: string[], probes: Probe[], s: Awaited<ReturnType<typeof setUp>>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...flags,
      PROBE,
      JSON.stringify(probes),
      "--",
      "--config",
      s.user.configPath,
      "get",
      "SR:COR:H01:SETPT",
      "--json",
    ],
    cwd: ROOT,
    clearEnv: true,
    env: childEnv(s.env),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  const line = stderr.split("\n").find((l) => l.startsWith("GRANT-PROBE "));
  assert.ok(line, stderr);
  return {
    outcomes: JSON.parse(line.slice("GRANT-PROBE ".length)) as Outcome[],
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr,
  };
}

/** Asserts the refusals and the controls, and that `get` worked in the same process. */
async function assertLeastPrivilege(flags: string[], s: Awaited<ReturnType<typeof setUp>>) {
  const bad = await forbidden(s);
  const r = await probeWith(flags, [...bad, ...HIDDEN, ...allowed(s)], s);
  for (const o of r.outcomes.slice(0, bad.length)) {
    assert.equal(o.outcome, "NotCapable", `${JSON.stringify(o.probe)} → ${o.outcome} ${o.value}`);
  }
  for (const o of r.outcomes.slice(bad.length, bad.length + HIDDEN.length)) {
    assert.deepEqual([o.outcome, o.value], ["ok", "undefined"], JSON.stringify(o.probe));
  }
  for (const o of r.outcomes.slice(bad.length + HIDDEN.length)) {
    assert.equal(o.outcome, "ok", `${JSON.stringify(o.probe)} → ${o.outcome}`);
  }
  assert.ok(!r.stdout.includes(SECRET) && !r.stderr.includes(SECRET));
  for (const p of bad) {
    if (p.kind === "write" || p.kind === "write-node") {
      const content = await Deno.readTextFile(p.path).catch(() => "");
      assert.ok(!content.includes("written from inside the agent"), p.path);
    }
  }
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).readings[0].device, "SR:COR:H01:SETPT");
  return r;
}

Deno.test("with the grants of deno task agent, the agent cannot read keys or secrets, write elsewhere, or reach other hosts", async () => {
  const s = await setUp();
  try {
    const printed = await s.user.run(["permissions", "--json"], { env: s.env });
    assert.equal(printed.code, 0, printed.stderr);
    const flags = JSON.parse(printed.stdout).flags as string[];
    for (const bare of ["--allow-read", "--allow-write", "--allow-env", "--allow-run", "-A"]) {
      assert.ok(!flags.includes(bare), `${bare} is a list, never bare`);
    }
    const read = flags.find((f) => f.startsWith("--allow-read="))!.slice(13).split(",");
    assert.ok(!read.includes(s.home) && !read.includes("/") && !read.includes(ROOT), read.join());
    await assertLeastPrivilege(flags, s);
  } finally {
    await s.other.shutdown();
    await s.user[Symbol.asyncDispose]();
  }
});

Deno.test("with the grants deno task compile bakes in, the same attempts are refused, and deno itself cannot be run", async () => {
  const s = await setUp();
  try {
    const env = childEnv(s.env);
    const loaded = await loadConfig({
      path: s.user.configPath,
      env: { get: (n) => env[n] },
      cwd: ROOT,
    });
    const exe = `${s.user.dir}/dist/accel-agent`;
    const grants = computeGrants(loaded, {
      env: (n) => env[n],
      cwd: ROOT,
      run: runGrantPaths(exe),
    });
    const flags = compileArgs(grants, loaded.config.sandbox, exe)
      .filter(isGrantFlag);
    const r = await assertLeastPrivilege(flags, s);
    // Compiled, the program may start only itself: not the deno it was built with.
    const deno = await probeWith(flags, [{ kind: "run", path: Deno.execPath() }], s);
    assert.equal(deno.outcomes[0]?.outcome, "NotCapable");
    assert.equal(r.code, 0);
  } finally {
    await s.other.shutdown();
    await s.user[Symbol.asyncDispose]();
  }
});

Deno.test("every normal command works under those grants: ask with tools, a sub-agent, a skill and Python, --resume, get, search, logs, scripts, plan show and run, audit verify", async () => {
  await using user = await UserSetup.start({
    // Ample time for the tool calls: the first sandbox process makes its snapshot inside one.
    extra: `[agent]\ntool_timeout_s = 3600\n[sandbox]\nscripts_dir = "${ROOT}/scripts"\n` +
      `[llm.models]\nmain = "scripted"\n`,
  });
  let skillInPrompt = false;
  await using llm = await startScriptedLlm({
    scenario: routed(6, (w, req) => {
      if (w.agent === "device_search") {
        return call("return", { devices: ["SR:COR:H01:SETPT"], total: 1, writable: [] });
      }
      if (w.step === 0) {
        skillInPrompt = JSON.stringify(req.messages[0]).includes("rf_trip");
        return call("get_parameter", { devices: ["SR:COR:H01:SETPT"] });
      }
      if (w.step === 1) {
        return call("execute_code", { code: "print(6 * 7)", description: "multiplies" });
      }
      if (w.step === 2) {
        return call("spawn_subagent", { agent: "device_search", task: "the H01 corrector" });
      }
      return { text: `done: ${w.lastTool.slice(0, 200)}` };
    }),
  });
  const env = { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" };
  const asked = await user.run(["ask", "--json", "RF station 3 trip: where is SR:COR:H01:SETPT?"], {
    env,
  });
  assert.equal(asked.code, 0, asked.stderr);
  assert.deepEqual(llm.failures, []);
  const out = JSON.parse(asked.stdout);
  assert.deepEqual(
    out.tool_calls.map((c: { ok: boolean }) => c.ok),
    [true, true, true],
    JSON.stringify(out.tool_calls),
  );
  assert.match(JSON.stringify(out.tool_calls[1].result), /42/);
  assert.match(out.answer, /SR:COR:H01:SETPT/);
  assert.ok(skillInPrompt, "the rf_trip skill was read and added");

  await using second = await startScriptedLlm({
    scenario: {
      turns: [{
        expect: { userIncludes: "And now?" },
        respond: { text: "as before" },
      }],
    },
  });
  const resumed = await user.run(["ask", "--json", "--resume", "And now?"], {
    env: { ...env, OPENAI_BASE_URL: second.url },
  });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual(second.failures, []);
  assert.ok(
    JSON.stringify(second.requests[0]).includes("RF station 3 trip"),
    "the session came back",
  );

  for (
    const args of [
      ["get", "SR:COR:H01:SETPT", "--json"],
      ["search", "SR:*", "--json"],
      ["logs", "elog", "--json"],
      ["scripts", "list", "--json"],
    ]
  ) {
    const r = await user.run(args);
    assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
    JSON.parse(r.stdout);
  }
  const plan = await user.plan({
    description: "trim H01",
    actions: [{ type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "trim" }],
  });
  const ran = await user.run(["plan", "run", plan, "--approved-hash", await user.token(plan)]);
  assert.equal(ran.code, 0, ran.stderr);
  assert.deepEqual(user.writes, [{ pv: "SR:COR:H01:SETPT", value: 0.6 }]);
  const verified = await user.run(["audit", "verify", "--json"]);
  assert.equal(verified.code, 0, verified.stderr);
});
