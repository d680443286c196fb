/**
 * `deno task compile`: what it bakes into the executable, and what it says
 * when `deno compile` has no runtime to build on. The executable itself
 * cannot be run here (no `denort`): Deno itself stands in for the runtime,
 * which proves `deno compile` accepts the arguments and embeds the program.
 */
import assert from "node:assert/strict";
import { compileArgs, runGrantPaths } from "../../tools/compile.ts";
import { computeGrants, type Grants, isGrantFlag } from "../../src/app/permissions.ts";
import { loadConfig } from "../../src/config/mod.ts";
import { startFakeEpics } from "../support/facility/fake_epics.ts";
import { childEnv, ROOT, runAgent } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";

const TASK = new URL("../../tools/compile.ts", import.meta.url).pathname;

async function compile(args: string[], denort: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", TASK, ...args],
    env: { DENORT_BIN: denort, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b).trim();
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("compile without a runtime says in one line what it needs and writes nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "accel-agent-compile-" });
  try {
    const r = await compile(["--output", `${dir}/accel-agent`], `${dir}/no-denort`);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /^compile: DENORT_BIN=.*no-denort is not a file: point it at a local denort 2\./,
    );
    assert.ok(!r.stderr.includes("\n"), r.stderr);
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a path with a comma is refused (Deno's grant lists cannot hold one) and nothing is written", async () => {
  const dir = await Deno.makeTempDir({ prefix: "accel-agent-compile-" });
  try {
    const r = await compile(["--output", `${dir}/a,b/accel-agent`], Deno.execPath());
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^compile: .*a,b\/accel-agent: a path with a comma cannot be granted/);
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Grants as `computeGrants` returns them, for the argument tests. */
const GRANTS: Grants = {
  read: ["/opt/accel/config.toml", "/data/bpm"],
  write: ["/var/lib/accel-agent"],
  env: ["OPENAI_*", "HOME"],
  sys: ["hostname"],
  run: ["/opt/accel/accel-agent"],
  net: ["gw.example:8080", "127.0.0.1:11434"],
};

Deno.test("the configured grants and the sandbox's V8 flags are baked into deno compile's arguments", () => {
  const args = compileArgs(GRANTS, { memory_mb: 256, optimize: "eager" }, "/opt/accel/accel-agent");
  assert.ok(args.includes("--allow-net=gw.example:8080,127.0.0.1:11434"));
  assert.ok(args.includes("--allow-run=/opt/accel/accel-agent"), "only itself, as the sandbox");
  assert.ok(args.includes("--allow-read=/opt/accel/config.toml,/data/bpm"));
  assert.ok(args.includes("--allow-write=/var/lib/accel-agent"));
  assert.ok(args.includes("--allow-env=OPENAI_*,HOME"));
  assert.ok(args.includes("--no-prompt"));
  for (const bare of ["-A", "--allow-all", "--allow-read", "--allow-write", "--allow-env"]) {
    assert.ok(!args.includes(bare), bare);
  }
  assert.ok(!args.some((a) => a === "--allow-run" || a === "--allow-net" || a === "--allow-sys"));
  assert.ok(args.includes("--unstable-worker-options"));
  assert.ok(args.includes("--v8-flags=--wasm-max-mem-pages=4096,--no-wasm-dynamic-tiering"));
  const hot = compileArgs(GRANTS, { memory_mb: 512, optimize: "hot" }, "/x");
  assert.ok(hot.includes("--v8-flags=--wasm-max-mem-pages=8192"));
  // Files named to deno compile exist (a rename would otherwise break only the build).
  for (const a of args.filter((a) => a.startsWith("--include=") || a.startsWith("--config="))) {
    assert.ok(Deno.statSync(a.slice(a.indexOf("=") + 1)).isFile, a);
  }
});

Deno.test("every grant deno task compile bakes in is the one accel-agent permissions prints for the config", async () => {
  await using fake = startFakeEpics();
  await using dir = await tempDir("accel-agent-compile-");
  await Deno.mkdir(`${dir.path}/data`);
  const config = `${dir.path}/config.toml`;
  await Deno.writeTextFile(
    config,
    `${fake.config()}\n[state]\ndir = "state"\n[sandbox]\ndata_dirs = ["data"]\n` +
      `[llm]\nbase_url = "http://127.0.0.1:11434/v1"\n`,
  );
  const printed = await runAgent(["permissions", "--json", "--config", config]);
  assert.equal(printed.code, 0, printed.stderr);
  const permissions = JSON.parse(printed.stdout).flags as string[];
  // The task's own computation, as it runs (the same process environment as the program's).
  const loaded = await loadConfig({ path: config, env: { get: () => undefined }, cwd: dir.path });
  const env = childEnv();
  const grants = computeGrants(loaded, {
    env: (n) => env[n],
    cwd: ROOT,
    run: runGrantPaths(`${dir.path}/accel-agent`),
  });
  const baked = compileArgs(grants, loaded.config.sandbox, `${dir.path}/accel-agent`)
    .filter(isGrantFlag);
  // The one intended difference: the program may run only itself, not the deno that printed the list.
  const run = (flags: string[]) => flags.filter((f) => f.startsWith("--allow-run="));
  assert.deepEqual(run(baked), [
    `--allow-run=${runGrantPaths(`${dir.path}/accel-agent`).join(",")}`,
  ]);
  assert.deepEqual(run(permissions), [`--allow-run=${Deno.execPath()}`]);
  const rest = (flags: string[]) => flags.filter((f) => !f.startsWith("--allow-run="));
  assert.deepEqual(rest(baked), rest(permissions));
  assert.ok(
    rest(baked).some((f) => f.includes(`${dir.path}/data`)),
    "the data directory is granted",
  );
});

Deno.test("deno compile accepts the arguments and embeds the program and Pyodide (Deno standing in for denort)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "accel-agent-compile-" });
  try {
    // Through a symlinked directory: the grant must name the resolved path too.
    await Deno.mkdir(`${dir}/real`);
    await Deno.symlink(`${dir}/real`, `${dir}/link`);
    assert.deepEqual(runGrantPaths(`${dir}/link/accel-agent`), [
      `${dir}/link/accel-agent`,
      `${await Deno.realPath(dir)}/real/accel-agent`,
    ]);
    const r = await compile(["--output", `${dir}/link/accel-agent`], Deno.execPath());
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${dir}/link/accel-agent`);
    const size = Deno.statSync(`${dir}/real/accel-agent`).size;
    // Deno alone is about 100 MB; Pyodide's WebAssembly and standard library add over 10 MB.
    assert.ok(size > Deno.statSync(Deno.execPath()).size + 10_000_000, `${size} bytes`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
