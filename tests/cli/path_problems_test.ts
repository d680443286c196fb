/**
 * A directory the configuration names that cannot be used is one line
 * naming the path and the setting, exit 2: never an OS error alone, never
 * a Deno stack trace. Run as a user runs the program (through the launcher,
 * with the computed grants).
 */
import assert from "node:assert/strict";
import { describePathProblem } from "../../src/app/path_problems.ts";
import { loadConfig } from "../../src/config/mod.ts";
import { canMount, mountTmpfs } from "../support/full_disk.ts";
import { childEnv, MAIN, ROOT } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";
import { runAsUser } from "../support/user_grants.ts";

const MOUNTABLE = await canMount();

Deno.test({
  name: "a state directory on a read-only disk is one line naming [state] dir, exit 2",
  ignore: !MOUNTABLE,
  async fn() {
    await using tmp = await tempDir("accel-agent-ro-");
    const state = `${tmp.path}/ro`;
    const unmount = await mountTmpfs(state, "64k");
    try {
      await new Deno.Command("mount", { args: ["-o", "remount,ro", state] }).output();
      await Deno.writeTextFile(`${tmp.path}/config.toml`, `[state]\ndir = "${state}"\n`);
      for (const args of [["get", "LINAC:BPM:01:X"], ["ask", "--json", "hi"]]) {
        const r = await runAsUser(["--config", `${tmp.path}/config.toml`, ...args]);
        assert.equal(r.code, 2, r.stderr);
        assert.match(
          r.stderr,
          new RegExp(
            `^accel-agent: config error: \\[state\\] dir ${state}: .* is on a read-only file system; ` +
              `choose a writable directory for \\[state\\] dir\\n$`,
          ),
        );
        assert.ok(!/\n\s+at /.test(r.stderr), "no stack trace");
      }
    } finally {
      await unmount();
    }
  },
});

Deno.test("a data directory the program may not read is one line naming [sandbox] data_dirs, exit 2", async () => {
  await using tmp = await tempDir("accel-agent-data-");
  await Deno.mkdir(`${tmp.path}/granted`);
  await Deno.mkdir(`${tmp.path}/other`);
  const config = `${tmp.path}/config.toml`;
  const write = (data: string) =>
    Deno.writeTextFile(
      config,
      `[state]\ndir = "${tmp.path}/state"\n[sandbox]\ndata_dirs = ["${data}"]\n`,
    );
  await write("granted");
  const printed = await runAsUser(["permissions", "--json", "--config", config]);
  const flags = JSON.parse(printed.stdout).flags as string[];
  // The config now names a directory its grants do not hold: Deno refuses the read.
  await write("other");
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, MAIN, "--config", config, "get", "LINAC:BPM:01:X"],
    cwd: ROOT,
    clearEnv: true,
    env: childEnv(),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 2, stderr);
  assert.match(
    stderr,
    new RegExp(
      `^accel-agent: config error: \\[sandbox\\] data_dirs ${tmp.path}/other: is outside the grants .*; ` +
        `make it readable or change \\[sandbox\\] data_dirs\\n$`,
    ),
  );
});

Deno.test("a permission error on a file below a configured directory names the directory's setting", async () => {
  const loaded = await loadConfig({
    path: undefined,
    env: { get: () => undefined },
    cwd: "/srv/accel",
  });
  loaded.config.sandbox.data_dirs = ["/srv/beam-data"];
  const e = new Deno.errors.PermissionDenied(
    "Permission denied (os error 13): open '/srv/beam-data/2026/orbit.csv'",
  );
  assert.equal(
    describePathProblem(e, loaded, "/home/op"),
    "[sandbox] data_dirs /srv/beam-data: /srv/beam-data/2026/orbit.csv cannot be used by this " +
      "user (permission denied); make it readable or change [sandbox] data_dirs",
  );
  // Another path, or another kind of error: not ours to explain.
  assert.equal(
    describePathProblem(
      new Deno.errors.PermissionDenied("Permission denied (os error 13): open '/etc/x'"),
      loaded,
      "/home/op",
    ),
    undefined,
  );
  assert.equal(describePathProblem(new Error("boom"), loaded, "/home/op"), undefined);
});

Deno.test("a configured path with a comma, which no grant can hold, is a config error from the launcher, in JSON too", async () => {
  await using tmp = await tempDir("accel-agent-comma-");
  await Deno.writeTextFile(`${tmp.path}/config.toml`, `[state]\ndir = "${tmp.path}/a,b"\n`);
  const r = await runAsUser(["--config", `${tmp.path}/config.toml`, "get", "X", "--json"]);
  assert.equal(r.code, 2);
  assert.equal(
    r.stderr,
    `accel-agent: config error: [state] dir: ${tmp.path}/a,b has a comma, which no Deno grant ` +
      "can hold; rename the directory\n",
  );
  const out = JSON.parse(r.stdout);
  assert.equal(out.error.kind, "config");
  assert.equal(out.exit_code, 2);
});

Deno.test("a directory the program writes may not hold the files that bound it: [state] dir = / or a scripts directory over the config and limits is refused by the launcher", async () => {
  await using tmp = await tempDir("accel-agent-wide-");
  const config = `${tmp.path}/config.toml`;
  const cases: [string, RegExp][] = [
    [
      '[state]\ndir = "/"\n',
      /^accel-agent: config error: \[state\] dir \/ holds .*; a directory the program writes may not hold its configuration, limits or site files: choose another\n$/,
    ],
    [
      `[safety]\nlimits_file = "limits.toml"\n[sandbox]\nscripts_dir = "."\n`,
      new RegExp(
        `^accel-agent: config error: \\[sandbox\\] scripts_dir ${tmp.path} holds ${tmp.path}/config.toml \\(the config file\\)`,
      ),
    ],
    [
      `[safety]\nlimits_file = "state/limits.toml"\n[state]\ndir = "state"\n`,
      new RegExp(
        `\\[state\\] dir ${tmp.path}/state holds ${tmp.path}/state/limits.toml \\(\\[safety\\] limits_file\\)`,
      ),
    ],
  ];
  await Deno.mkdir(`${tmp.path}/state`);
  for (const name of ["limits.toml", "state/limits.toml"]) {
    await Deno.writeTextFile(`${tmp.path}/${name}`, '[limits."X"]\nmin = 0\nmax = 1\n');
  }
  for (const [text, expected] of cases) {
    await Deno.writeTextFile(config, text);
    const r = await runAsUser(["--config", config, "get", "X"]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, expected);
  }
  assert.ok(!(await Deno.stat("/scans").then(() => true, () => false)), "nothing made at /");
});

Deno.test("a configured URL whose host has a comma is a config error from the launcher: the network grant never gains a second host", async () => {
  await using tmp = await tempDir("accel-agent-comma-");
  await Deno.writeTextFile(
    `${tmp.path}/config.toml`,
    'llm.base_url = "http://llm.example,other.example:8000/v1"\n',
  );
  const r = await runAsUser(["--config", `${tmp.path}/config.toml`, "permissions"]);
  assert.equal(r.code, 2, r.stdout);
  assert.equal(
    r.stderr,
    "accel-agent: config error: http://llm.example,other.example:8000/v1 names the host " +
      "llm.example,other.example, which has a comma: no Deno grant can hold it; correct the URL\n",
  );
  assert.doesNotMatch(r.stdout, /--allow-net/);
});
