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

/** This checkout's files (as the working tree has them) copied to `dir`, as a facility clones it there. */
async function copyCheckout(dir: string): Promise<void> {
  const listed = await new Deno.Command("git", {
    args: ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    cwd: ROOT,
    stdout: "piped",
  }).output();
  const files = new TextDecoder().decode(listed.stdout).split("\0").filter(Boolean);
  for (const f of files) {
    const info = await Deno.lstat(`${ROOT}/${f}`).catch(() => undefined);
    if (!info?.isFile) continue;
    await Deno.mkdir(`${dir}/${f}`.replace(/\/[^/]+$/, ""), { recursive: true });
    await Deno.copyFile(`${ROOT}/${f}`, `${dir}/${f}`);
  }
}

Deno.test("a checkout and a prefix whose paths hold a space and accented letters install, and the command runs", async () => {
  await using dir = await tempDir("accel-agent-install-");
  const checkout = `${dir.path}/accélérateur agent`;
  await copyCheckout(checkout);
  const prefix = `${dir.path}/opt dir`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "install", "--prefix", prefix],
    cwd: checkout,
    clearEnv: true,
    env: childEnv({ DENORT_BIN: `${dir.path}/no-denort` }),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  const bin = `${prefix}/bin/accel-agent`;
  assert.ok(Deno.readTextFileSync(bin).includes(`'${checkout}/launch.ts'`));
  const got = await runInstalled(bin, ["get", "RF:PHASE:SETPT", "--json"], dir.path);
  assert.equal(got.code, 0, got.stderr);
  assert.equal(got.stderr, "");
  assert.equal(JSON.parse(got.stdout).readings[0].device, "RF:PHASE:SETPT");
  // The Python sandbox starts from there too (its own modules, its grants).
  await Deno.writeTextFile(`${dir.path}/hello.py`, "print(6 * 7)\n");
  const py = await runInstalled(bin, ["exec", `${dir.path}/hello.py`], dir.path);
  assert.equal(py.code, 0, py.stderr);
  assert.match(py.stdout, /42/);
});

Deno.test("a prefix that is a file, lies under a file, or holds a directory at bin/accel-agent: one line, exit 2, nothing installed", async () => {
  await using dir = await tempDir("accel-agent-install-");
  const file = `${dir.path}/a-file`;
  await Deno.writeTextFile(file, "not a directory\n");
  await Deno.mkdir(`${dir.path}/taken/bin/accel-agent`, { recursive: true });
  const cases: [string, RegExp][] = [
    [file, /a-file.*not a directory|a-file.*exists/i],
    [`${file}/sub`, /a-file\/sub/],
    [`${dir.path}/taken`, /taken\/bin\/accel-agent.*directory/i],
  ];
  for (const [prefix, why] of cases) {
    const r = await install(prefix, `${dir.path}/no-denort`);
    assert.equal(r.code, 2, `${prefix}: ${r.stderr}`);
    const lines = r.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0] ?? "", /^install: /);
    assert.match(lines[0] ?? "", why);
  }
  assert.equal(Deno.readTextFileSync(file), "not a directory\n");
  assert.ok(Deno.statSync(`${dir.path}/taken/bin/accel-agent`).isDirectory);
});
