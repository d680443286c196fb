/**
 * Without `HOME`, `~` in the configuration cannot be resolved: through the
 * launcher, as an operator's shell or a service manager starts it, the
 * program says so in one line (one JSON object under `--json`) and writes
 * nothing, rather than keeping its state in `/.local/state` or wherever it
 * was started. A config that names every path absolutely needs no `HOME`.
 */
import assert from "node:assert/strict";
import { childEnv, killAfter, ROOT } from "../support/run_agent.ts";
import { LAUNCHER_FLAGS } from "../support/user_grants.ts";
import { tempDir } from "../support/temp.ts";

/** `accel-agent ARGS` through the launcher in `cwd` with `HOME` as given (absent: undefined). */
async function runWithHome(args: string[], cwd: string, home: string | undefined) {
  const env = childEnv();
  delete env.HOME;
  if (home !== undefined) env.HOME = home;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...LAUNCHER_FLAGS, `${ROOT}/launch.ts`, ...args],
    cwd,
    clearEnv: true,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const ceiling = killAfter(child, 60_000);
  const out = await child.output();
  ceiling.disarm();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) + ceiling.note() };
}

const SAID =
  /^accel-agent: config error: \[state\] dir = "~\/\.local\/state\/accel-agent" needs HOME, which is not set; set HOME, or give \[state\] dir an absolute path in the config file$/;

for (const [what, home] of [["unset", undefined], ["empty", ""]] as const) {
  Deno.test(`with HOME ${what}, the default config's ~ paths are one line, exit 2, and nothing is written`, async () => {
    await using cwd = await tempDir();
    const r = await runWithHome(["get", "RING:DCCT:CURRENT"], cwd.path, home);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr.trim(), SAID);
    const json = await runWithHome(["get", "RING:DCCT:CURRENT", "--json"], cwd.path, home);
    assert.equal(json.code, 2);
    const out = JSON.parse(json.stdout);
    assert.equal(out.ok, false);
    assert.match(out.error.message, /needs HOME, which is not set/);
    // Nothing was made where `~` would have pointed.
    assert.deepEqual([...Deno.readDirSync(cwd.path)], []);
  });
}

Deno.test("a config that names every path absolutely runs without HOME", async () => {
  await using dir = await tempDir();
  const config = `${dir.path}/config.toml`;
  await Deno.writeTextFile(
    config,
    `[state]\ndir = "${dir.path}/state"\n\n[sandbox]\nwork_dir = "${dir.path}/work"\n` +
      `cache_dir = "${dir.path}/cache"\n`,
  );
  const r = await runWithHome(
    ["--config", config, "get", "RING:DCCT:CURRENT"],
    dir.path,
    undefined,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /RING:DCCT:CURRENT/);
});
