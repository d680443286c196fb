/**
 * The compiled executable's sandbox role does not keep the agent's grants:
 * started with exactly the flags `deno task compile` bakes in, it revokes
 * every read and write the sandbox does not need before any Python exists.
 * Proven by Deno itself, from inside a process with those flags, as the
 * agent's own grants are in tests/cli/least_privilege_test.ts.
 */
import assert from "node:assert/strict";
import { computeGrants, isGrantFlag } from "../../src/app/permissions.ts";
import { loadConfig } from "../../src/config/mod.ts";
import { defaultPyodideDir, SANDBOX_ROLE_ARG } from "../../src/sandbox/mod.ts";
import type { ProcessSetup } from "../../src/sandbox/protocol.ts";
import { toRevoke } from "../../src/sandbox/role_grants.ts";
import { compileArgs } from "../../tools/compile.ts";
import type { Outcome, Probe } from "../support/grant_probe.ts";
import { childEnv, MAIN, ROOT } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";

const ROLE_PROBE = `${ROOT}/tests/support/role_probe.ts`;

Deno.test("the role keeps the deepest grant covering each path it needs and revokes the rest", () => {
  const granted = ["/s", "/s/work", "/s/scans", "/cfg.toml", "/cache", "/ctx", "/ctx/data"];
  // /s holds the work directory, but /s/work covers it more closely: /s goes.
  assert.deepEqual(toRevoke(granted, ["/s/work/run-1/work", "/s/scans", "/cache", "/ctx/data"]), [
    "/s",
    "/cfg.toml",
    "/ctx",
  ]);
  // Revoking a path inside a kept grant would take the kept one with it: it stays.
  assert.deepEqual(toRevoke(["/data", "/data/docs"], ["/data"]), []);
  assert.deepEqual(toRevoke(["/a", "/b"], []), ["/a", "/b"]);
});

Deno.test("the compiled sandbox role, with the baked grants, can no longer read the config, state or keys, nor write the state or scripts", async () => {
  await using tmp = await tempDir("accel-agent-role-grants-");
  const root = await Deno.realPath(tmp.path);
  const files: Record<string, string> = {
    "AGENT.md": "facility notes\n",
    "docs/shift.md": "context\n",
    "data/bpm.csv": "x\n1\n",
    "state/audit/2026.jsonl": "{}\n",
    "state/keys/approval.key": "00\n",
    "state/scans/scan-1.csv": "a,b\n",
    "scripts/orbit.py": "print(1)\n",
  };
  for (const [name, text] of Object.entries(files)) {
    await Deno.mkdir(`${root}/${name.slice(0, name.lastIndexOf("/"))}`, { recursive: true });
    await Deno.writeTextFile(`${root}/${name}`, text);
  }
  const workDir = `${root}/state/work/run-1/work`;
  await Deno.mkdir(workDir, { recursive: true });
  await Deno.mkdir(`${root}/cache`);
  await Deno.writeTextFile(
    `${root}/config.toml`,
    `[llm]\nbase_url = "http://127.0.0.1:11434/v1"\n[state]\ndir = "state"\n` +
      `[agent]\nagent_md = "AGENT.md"\ncontext_dirs = ["docs"]\n` +
      `[sandbox]\ndata_dirs = ["data"]\nwork_dir = "state/work"\ncache_dir = "cache"\n` +
      `scripts_dir = "scripts"\n`,
  );
  const env = childEnv();
  const loaded = await loadConfig({
    path: `${root}/config.toml`,
    env: { get: (n) => env[n] },
    cwd: root,
  });
  const exe = `${root}/accel-agent`;
  const grants = computeGrants(loaded, { env: (n) => env[n], cwd: root, run: [exe] });
  const flags = compileArgs(grants, loaded.config.sandbox, exe).filter(isGrantFlag);
  // The setup the agent sends its sandbox process (src/sandbox/runner.ts), grants included.
  const setup = (agentGrants: { read: string[]; write: string[] }): ProcessSetup => ({
    pyodideDir: defaultPyodideDir(),
    dataDirs: [`${root}/data`, `${root}/state/scans`],
    scriptsDir: `${root}/scripts`,
    workRoot: `${root}/state/work`,
    snapshotPath: `${root}/cache/pyodide.snapshot`,
    workDir,
    quotaBytes: 1 << 20,
    rssLimitMb: 600,
    agentGrants,
  });
  const refused: Probe[] = [
    { kind: "read", path: `${root}/config.toml` },
    { kind: "read", path: `${root}/AGENT.md` },
    { kind: "read", path: `${root}/docs/shift.md` },
    { kind: "read", path: `${root}/state/audit/2026.jsonl` },
    { kind: "read", path: `${root}/state/keys/approval.key` },
    { kind: "read-node", path: `${root}/state/keys/approval.key` },
    { kind: "write", path: `${root}/state/audit/forged.jsonl` },
    { kind: "write", path: `${root}/scripts/planted.py` },
    { kind: "write", path: `${root}/state/planted` },
  ];
  const needed: Probe[] = [
    { kind: "read", path: `${root}/data/bpm.csv` },
    { kind: "read", path: `${root}/state/scans/scan-1.csv` },
    { kind: "read", path: `${root}/scripts/orbit.py` },
    { kind: "read", path: `${defaultPyodideDir()}/pyodide-lock.json` },
    { kind: "write", path: `${workDir}/result.txt` },
    { kind: "write", path: `${root}/cache/pyodide.snapshot.tmp` },
  ];
  const run = async (s: ProcessSetup) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...flags,
        ROLE_PROBE,
        JSON.stringify(s),
        JSON.stringify([...refused, ...needed]),
      ],
      clearEnv: true,
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    const line = stdout.split("\n").find((l) => l.startsWith("ROLE-PROBE "));
    assert.ok(line, new TextDecoder().decode(out.stderr));
    return JSON.parse(line.slice("ROLE-PROBE ".length)) as {
      dropped: { read: string[]; write: string[] };
      results: Outcome[];
    };
  };

  // Control: with nothing given up, the baked grants reach all of it (the agent needs them).
  const kept = await run(setup({ read: [], write: [] }));
  for (const o of kept.results) assert.equal(o.outcome, "ok", JSON.stringify(o));

  const r = await run(setup({ read: grants.read, write: grants.write }));
  for (const o of r.results.slice(0, refused.length)) {
    assert.equal(o.outcome, "NotCapable", `${JSON.stringify(o.probe)} → ${o.outcome}`);
  }
  for (const o of r.results.slice(refused.length)) {
    assert.equal(o.outcome, "ok", `${JSON.stringify(o.probe)} → ${o.outcome}`);
  }
  assert.ok(
    r.dropped.read.includes(`${root}/config.toml`) && r.dropped.write.includes(`${root}/state`),
  );

  // And main.ts itself in the sandbox role, with these flags, still runs Python with what it kept.
  // Compiled, Deno lets the program read its embedded modules; here the worker's source stands in.
  // The agent hands each process an empty work directory (the probes above wrote into this one).
  await Deno.remove(workDir, { recursive: true });
  await Deno.mkdir(workDir);
  const embedded = { ...grants, read: [...grants.read, `${ROOT}/src/sandbox`] };
  const roleFlags = compileArgs(embedded, loaded.config.sandbox, exe).filter(isGrantFlag);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...roleFlags, "--unstable-worker-options", MAIN, SANDBOX_ROLE_ARG],
    clearEnv: true,
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  const send = (m: unknown) => w.write(new TextEncoder().encode(`${JSON.stringify(m)}\n`));
  const { snapshotPath: _none, ...noSnapshot } = setup({ read: grants.read, write: grants.write });
  await send({ type: "setup", setup: noSnapshot, nonce: "NONCE" });
  let text = "";
  const decoder = new TextDecoder();
  const reader = child.stdout.getReader();
  const until = async (needle: string) => {
    while (!text.includes(needle)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  };
  await until('"type":"ready"');
  await send({
    type: "run",
    id: 1,
    code: "print(open('/data/bpm.csv').read().split()[1])\nopen('/work/ok.txt', 'w').write('fine')",
    argv: ["<code>"],
    timeoutMs: 120_000,
    maxOutputChars: 10_000,
  });
  await until('"type":"result"');
  await reader.cancel();
  await w.close();
  await child.status;
  await child.stderr.cancel();
  const result = text.split("\n").filter((l) => l.startsWith("NONCE "))
    .map((l) => JSON.parse(l.slice("NONCE ".length))).find((m) => m.type === "result");
  assert.ok(result, text);
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.equal(result.stdout, "1\n");
  assert.equal(result.disk, undefined, result.disk);
  assert.equal(await Deno.readTextFile(`${workDir}/ok.txt`), "fine");
});
