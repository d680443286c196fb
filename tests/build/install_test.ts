/**
 * `deno task install`: an `accel-agent` command on the PATH — the launcher
 * of this checkout where no `denort` can be had (here), the compiled
 * executable where one can (Deno standing in for it) — and the program run
 * through it prints nothing on stderr it did not mean.
 */
import assert from "node:assert/strict";
import { agentTaskFlags, launcherScript } from "../../tools/install.ts";
import { childEnv, ROOT } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";

const DENO_JSON = Deno.readTextFileSync(`${ROOT}/deno.json`);

async function install(prefix: string, denort: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "install", "--prefix", prefix],
    cwd: ROOT,
    clearEnv: true,
    env: childEnv({ DENORT_BIN: denort }),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/** Runs a program with a PATH of the system's directories only (no Phoebus, no deno). */
async function runInstalled(program: string, args: string[], cwd: string) {
  const out = await new Deno.Command(program, {
    args,
    cwd,
    clearEnv: true,
    env: childEnv({ PATH: "/usr/bin:/bin" }),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("without denort, install writes a launcher with deno task agent's grants that runs from anywhere", async () => {
  await using dir = await tempDir("accel-agent-install-");
  const r = await install(`${dir.path}/prefix`, `${dir.path}/no-denort`);
  assert.equal(r.code, 0, r.stderr);
  const bin = `${dir.path}/prefix/bin/accel-agent`;
  assert.match(r.stdout, new RegExp(`^${bin}: a launcher of this checkout`));
  assert.match(r.stdout, /add .*\/prefix\/bin to PATH/);
  assert.equal((Deno.statSync(bin).mode ?? 0) & 0o777, 0o755);
  const script = Deno.readTextFileSync(bin);
  // The launcher runs with exactly the flags of the agent task; it computes the program's own.
  const flags = agentTaskFlags(DENO_JSON).filter((f) => f !== "--quiet");
  assert.ok(script.includes(` run --quiet ${flags.join(" ")} '${ROOT}/launch.ts' "$@"`), script);
  assert.doesNotMatch(script, /^exec .* task /m, "deno run, not deno task: no Task line");
  // From another directory, on a console without Phoebus: the answer, and nothing on stderr.
  const got = await runInstalled(bin, ["get", "RF:PHASE:SETPT", "--json"], dir.path);
  assert.equal(got.code, 0, got.stderr);
  assert.equal(got.stderr, "");
  assert.equal(JSON.parse(got.stdout).readings[0].device, "RF:PHASE:SETPT");
  const version = await runInstalled(bin, ["--version"], dir.path);
  assert.match(version.stdout, /^accel-agent \d+\.\d+\.\d+\n$/);
});

Deno.test("with a runtime for deno compile, install puts the compiled executable there", async () => {
  await using dir = await tempDir("accel-agent-install-");
  const r = await install(`${dir.path}/p`, Deno.execPath());
  assert.equal(r.code, 0, r.stderr);
  const bin = `${dir.path}/p/bin/accel-agent`;
  assert.match(r.stdout, new RegExp(`${bin}: the compiled executable`));
  const size = Deno.statSync(bin).size;
  assert.ok(size > Deno.statSync(Deno.execPath()).size, `${size} bytes: the program is embedded`);
});

Deno.test("the launcher script quotes its paths and keeps the module cache it was installed with", () => {
  const script = launcherScript(
    "/opt/deno it's/deno",
    "/srv/accel agent",
    ["--allow-read"],
    "/var/cache/deno $x",
  );
  assert.ok(script.startsWith("#!/bin/sh\n"));
  assert.ok(
    script.includes(
      `exec '/opt/deno it'\\''s/deno' run --quiet --allow-read '/srv/accel agent/launch.ts' "$@"`,
    ),
  );
  assert.ok(script.includes('DENO_DIR="${DENO_DIR:-/var/cache/deno \\$x}"'));
  assert.ok(script.includes("DENO_NO_UPDATE_CHECK=1"));
});

Deno.test("deno task -q agent prints nothing on stderr for a read on a console without Phoebus", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "agent", "get", "RF:PHASE:SETPT"],
    cwd: ROOT,
    clearEnv: true,
    env: childEnv({ PATH: `${Deno.execPath().replace(/\/[^/]+$/, "")}:/usr/bin:/bin` }),
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0);
  assert.equal(new TextDecoder().decode(out.stderr), "");
  assert.match(new TextDecoder().decode(out.stdout), /RF:PHASE:SETPT/);
});
