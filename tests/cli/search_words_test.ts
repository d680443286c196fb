/**
 * `accel-agent search` with an operator's words and `accel-agent index`,
 * run through the launcher with the grants a user's config gives.
 */
import assert from "node:assert/strict";
import { childEnv, ROOT } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";

async function launch(dir: string, args: string[]) {
  await Deno.writeTextFile(`${dir}/config.toml`, `[state]\ndir = "${dir}/state"\n`);
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-env",
      "--allow-run",
      `${ROOT}/launch.ts`,
      "-c",
      `${dir}/config.toml`,
      "--no-color",
      ...args,
    ],
    cwd: ROOT,
    clearEnv: true,
    env: childEnv({ HOME: dir }),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

Deno.test("search by words ranks the devices meant, each with its score and why it matched", async () => {
  await using home = await tempDir();
  const r = await launch(home.path, ["search", "ion", "pump", "pressure", "cell", "4", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const result = JSON.parse(r.stdout);
  assert.equal(result.mode, "informal");
  assert.equal(result.total, 6);
  assert.equal(result.devices[0].name, "RING:VAC:IP:019:PRES");
  assert.deepEqual(result.devices[0].matched, [
    "ion pump (name)",
    "pressure (name)",
    "cell 4 (property)",
  ]);
  const table = await launch(home.path, ["search", "horizontal steerers linac", "--limit", "2"]);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /understood: horizontal · steerers · linac/);
  // Among one corrector's signals its setpoint comes first.
  assert.match(table.stdout, /LINAC:COR:H01:SETPT[\s\S]*horizontal \(name\)/);
});

Deno.test("a pattern that matches nothing names the nearest families; --words forces words", async () => {
  await using home = await tempDir();
  const r = await launch(home.path, ["search", "RING:BPMM:*:X"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /no devices match[\s\S]*nearest families:\n {2}RING:BPM:\*:/);
  const forced = await launch(home.path, ["search", "--words", "RING:BPM:11", "--json"]);
  assert.equal(JSON.parse(forced.stdout).mode, "informal");
});

Deno.test("control characters typed into a search are never echoed raw to the terminal", async () => {
  await using home = await tempDir();
  const r = await launch(home.path, ["search", "\x1b]0;owned\x07 bpm \x1b[2J11"]);
  assert.equal(r.code, 0, r.stderr);
  const raw = [...r.stdout + r.stderr].filter((c) => {
    const code = c.charCodeAt(0);
    return (code < 0x20 && c !== "\n") || code === 0x7f;
  });
  assert.deepEqual(raw, [], JSON.stringify(r.stdout));
});

Deno.test("index refresh writes the cache inside the state directory; the next start loads it", async () => {
  await using home = await tempDir();
  const refreshed = await launch(home.path, ["index", "refresh", "--json"]);
  assert.equal(refreshed.code, 0, refreshed.stderr);
  const a = JSON.parse(refreshed.stdout);
  assert.equal(a.origin, "built");
  assert.ok(a.cacheFile.startsWith(`${home.path}/state/index/`), a.cacheFile);
  const stats = await launch(home.path, ["index", "stats", "--json"]);
  const b = JSON.parse(stats.stdout);
  assert.equal(b.origin, "cache");
  assert.equal(b.devices, a.devices);
});
