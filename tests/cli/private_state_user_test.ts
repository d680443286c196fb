/**
 * What the program writes is its operator's alone: after a session under
 * the usual umask (022), through the launcher with a user's grants, with a
 * plan the model proposed, a scan run from a token, a plot, the sandbox (the
 * model's code and `exec`), the device index's cache and the audit,
 * `find <state> -perm /077` finds nothing: every directory is 0700 and every
 * file 0600. The key directory made open by someone else is refused.
 */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { childEnv, killAfter, ROOT } from "../support/run_agent.ts";
import { LAUNCHER_FLAGS, UserSetup } from "../support/user_grants.ts";

const H01 = "SR:COR:H01:SETPT";

/** `accel-agent ARGS` through the launcher, started by a shell whose umask is 022. */
async function runUmask022(user: UserSetup, args: string[], env: Record<string, string> = {}) {
  const child = new Deno.Command("sh", {
    args: [
      "-c",
      'umask 022 && exec "$0" "$@"',
      Deno.execPath(),
      "run",
      ...LAUNCHER_FLAGS,
      `${ROOT}/launch.ts`,
      "--config",
      user.configPath,
      ...args,
    ],
    cwd: ROOT,
    clearEnv: true,
    env: childEnv(env),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const ceiling = killAfter(child, 240_000);
  const out = await child.output();
  ceiling.disarm();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) + ceiling.note() };
}

/** What `find DIR -perm /077` prints: every path group or others have any access to. */
async function openToOthers(dir: string): Promise<string[]> {
  const out = await new Deno.Command("find", { args: [dir, "-perm", "/077"] }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).split("\n").filter(Boolean);
}

Deno.test("after a session with plans, scans, plots, the sandbox and the index under umask 022, nothing in the state directory is open to others", async () => {
  await using user = await UserSetup.start({
    extra: `[sandbox]\nwork_dir = "state/work"\ncache_dir = "state/cache"\nprewarm = false\n`,
  });
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        {
          respond: {
            toolCalls: [
              {
                name: "execute_code",
                arguments: {
                  description: "a table and a figure",
                  code: "import os\nos.makedirs('/work/out/deep', exist_ok=True)\n" +
                    "open('/work/out/deep/fit.csv', 'w').write('x,y\\n1,2\\n')\nprint('saved')",
                },
              },
              { name: "plot", arguments: { source: "archive", devices: [H01], from: "-1h" } },
              {
                name: "propose_plan",
                arguments: {
                  description: "trim H01",
                  actions: [{ type: "write", device: H01, value: 0.2, reason: "trim" }],
                },
              },
            ],
          },
        },
        { respond: { text: "Saved, plotted, and a plan is waiting for approval." } },
      ],
    },
  });
  const model = { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "test-key" };
  const asked = await runUmask022(user, ["ask", "--json", "trim H01 and fit"], model);
  const answer = JSON.parse(asked.stdout);
  assert.deepEqual(llm.failures, []);
  assert.deepEqual(
    answer.tool_calls.map((c: { name: string; ok: boolean }) => [c.name, c.ok]),
    [["execute_code", true], ["plot", true], ["propose_plan", true]],
    asked.stderr,
  );

  // A scan, approved by token: its CSV goes to scans/.
  const scan = await user.plan({
    description: "scan H01",
    actions: [{
      type: "scan",
      writeDevice: H01,
      start: 0,
      stop: 0.2,
      steps: 3,
      readDevices: [H01],
      dwellSeconds: 0,
    }],
  }, "scan.json");
  const shown = await runUmask022(user, ["plan", "show", scan, "--json"]);
  assert.equal(shown.code, 0, shown.stderr);
  const token = JSON.parse(shown.stdout).approval.token;
  const ran = await runUmask022(user, ["plan", "run", scan, "--approved-hash", token, "--json"]);
  assert.equal(ran.code, 0, ran.stderr);
  assert.equal(JSON.parse(ran.stdout).status, "completed");

  await Deno.writeTextFile(`${user.dir}/script.py`, "open('/work/a.txt', 'w').write('a')\n");
  for (
    const args of [
      ["plot", H01, "--from", "-1h"],
      ["exec", `${user.dir}/script.py`],
      ["index", "refresh"],
      ["audit", "verify"],
    ]
  ) {
    const r = await runUmask022(user, args);
    assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
  }

  // Everything the session was to leave is there…
  const state = user.stateDir;
  for (const sub of ["audit", "plans", "scans", "sessions", "work", "keys", "index", "approvals"]) {
    assert.ok((await Deno.stat(`${state}/${sub}`)).isDirectory, `${sub}/ was not made`);
  }
  assert.ok([...Deno.readDirSync(`${state}/scans`)].some((e) => e.name.endsWith(".csv")));
  assert.ok([...Deno.readDirSync(`${state}/work/plots`)].some((e) => e.name.endsWith(".svg")));
  // …and none of it is open to group or others.
  assert.deepEqual(await openToOthers(state), []);
});

Deno.test("a key directory others can write, and a key others can read, are refused in one line", async () => {
  await using user = await UserSetup.start();
  const plan = await user.plan({
    description: "look",
    actions: [{ type: "read", devices: [H01] }],
  });
  assert.equal((await user.run(["plan", "show", plan])).code, 0);
  const keys = `${user.stateDir}/keys`;
  await Deno.chmod(keys, 0o777);
  const open = await user.run(["plan", "show", plan, "--json"]);
  assert.notEqual(open.code, 0);
  assert.match(
    open.stderr,
    /keys: the keys directory can be written by other users \(mode 777\); run chmod 700 \S+\/keys$/m,
  );
  const out = JSON.parse(open.stdout);
  assert.equal(out.status, "error");
  assert.match(out.error, /cannot issue an approval token: .*the keys directory can be written/);
  await Deno.chmod(keys, 0o700);
  await Deno.chmod(`${keys}/approval.key`, 0o640);
  const readable = await user.run(["plan", "show", plan]);
  assert.equal(readable.code, 1);
  assert.match(
    readable.stderr.trim(),
    /approval\.key: the key can be read by other users \(mode 640\); run chmod 600 \S+approval\.key$/,
  );
  await Deno.chmod(`${keys}/approval.key`, 0o600);
  assert.equal((await user.run(["plan", "show", plan])).code, 0);
});

Deno.test({
  name:
    "a key directory that belongs to another user is refused in one line, however private its mode",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    await using user = await UserSetup.start();
    const plan = await user.plan({
      description: "look",
      actions: [{ type: "read", devices: [H01] }],
    });
    assert.equal((await user.run(["plan", "show", plan])).code, 0);
    const keys = `${user.stateDir}/keys`;
    // As root the test can give it away; the program (root too) must still refuse it.
    await Deno.chown(keys, 4242, 4242);
    const r = await user.run(["plan", "show", plan]);
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(
      r.stderr.trim(),
      /keys: the keys directory belongs to another user \(uid 4242, not 0\); use a state directory of your own \(\[state\] dir\)$/,
    );
  },
});

/** Every directory and file below `dir` (itself included), as `find` lists them. */
async function everything(dir: string): Promise<string[]> {
  const out = await new Deno.Command("find", { args: [dir] }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter(Boolean);
}

Deno.test("a state directory an earlier version left open to others is closed when the program uses it, under umask 000; one others can write is refused in one line", async () => {
  await using user = await UserSetup.start();
  const plan = await user.plan({
    description: "look",
    actions: [{ type: "read", devices: [H01] }],
  });
  const token = async () =>
    JSON.parse((await runUmask022(user, ["plan", "show", plan, "--json"])).stdout).approval.token;
  assert.equal((await user.run(["plan", "run", plan, "--approved-hash", await token()])).code, 0);
  // As an older program under umask 022 (or someone since) left it: directories 0755, files 0644.
  for (const path of await everything(user.stateDir)) {
    await Deno.chmod(path, (await Deno.stat(path)).isDirectory ? 0o755 : 0o644);
  }
  await Deno.chmod(`${user.stateDir}/keys`, 0o700);
  for await (const e of Deno.readDir(`${user.stateDir}/keys`)) {
    await Deno.chmod(`${user.stateDir}/keys/${e.name}`, 0o600);
  }
  // The program appends to the audit's day file, saves a plan, and starts a session, under umask 000.
  const run = (args: string[]) =>
    new Deno.Command("sh", {
      args: [
        "-c",
        'umask 000 && exec "$0" "$@"',
        Deno.execPath(),
        "run",
        ...LAUNCHER_FLAGS,
        `${ROOT}/launch.ts`,
        "--config",
        user.configPath,
        ...args,
      ],
      cwd: ROOT,
      clearEnv: true,
      env: childEnv(),
      stdin: "null",
    }).output();
  const again = await run(["plan", "run", plan, "--approved-hash", await token()]);
  assert.equal(again.code, 0, new TextDecoder().decode(again.stderr));
  assert.deepEqual(await openToOthers(user.stateDir), []);

  // A state directory others can write may hold anything they put there: refused, not used.
  for (const dir of [`${user.stateDir}/audit`, user.stateDir]) {
    await Deno.chmod(dir, 0o777);
    const r = await run(["plan", "show", plan]);
    const stderr = new TextDecoder().decode(r.stderr);
    assert.equal(r.code, 2, stderr);
    assert.equal(stderr.trim().split("\n").length, 1, stderr);
    assert.equal(
      stderr.trim(),
      `accel-agent: ${dir}: the state directory can be written by other users (mode 777); ` +
        `check what is in it, then run chmod 700 ${dir}`,
    );
    await Deno.chmod(dir, 0o700);
  }
});
