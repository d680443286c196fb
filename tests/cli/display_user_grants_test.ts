/**
 * `accel-agent display` under a user's real grants (through launch.ts): the
 * configured launcher gets exactly the catalogue's file and the checked
 * macros as argv, is started detached (its own session, alive after the
 * agent exits), and nothing else may be run.
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";
import { ROOT } from "../support/run_agent.ts";

const LAUNCHER = `${ROOT}/tests/support/display_launcher.sh`;

/** The config lines: the test launcher for Phoebus displays, writing its argv to `out`. */
function displaysConfig(out: string): string {
  return `
[launchers.phoebus]
command = [${JSON.stringify(LAUNCHER)}, ${JSON.stringify(out)}, "-resource", "{file}?{macros}"]

[[displays]]
name = "orbit"
file = "screens/orbit.bob"
description = "Ring orbit"
keywords = ["bpm"]
macros.PLANE = { values = ["X", "Y"], default = "X" }
macros.NOTE = { pattern = ".*", default = "none" }
`;
}

/** Waits until `path` exists (the launcher writes it once started); a generous ceiling. */
async function launcherArgv(path: string): Promise<string[]> {
  for (let i = 0; i < 200; i++) {
    try {
      return (await Deno.readTextFile(path)).trimEnd().split("\n");
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`the launcher never wrote ${path}`);
}

/** `ps -o sid= -p PID`, or "" when the process is gone. */
async function sessionOf(pid: number): Promise<string> {
  const out = await new Deno.Command("ps", {
    args: ["-o", "sid=", "-p", String(pid)],
    stdout: "piped",
  })
    .output();
  return new TextDecoder().decode(out.stdout).trim();
}

Deno.test("display starts the configured launcher detached with the catalogue's file and the checked macros", async () => {
  await using user = await UserSetup.start({ extra: displaysConfig("") });
  const out = `${user.dir}/argv.txt`;
  await Deno.writeTextFile(
    user.configPath,
    (await Deno.readTextFile(user.configPath)).replace(displaysConfig(""), displaysConfig(out)),
  );
  // A value a shell would act on reaches the program as one literal argument.
  const planted = `${user.dir}/planted`;
  const r = await user.run(["display", "orbit", "PLANE=Y", `NOTE=$(touch ${planted})`, "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const launched = JSON.parse(r.stdout).launched;
  let pid = 0;
  try {
    const resource = `${user.dir}/screens/orbit.bob?PLANE=Y&NOTE=${
      encodeURIComponent(`$(touch ${planted})`)
    }`;
    assert.deepEqual(launched.argv, [LAUNCHER, out, "-resource", resource]);
    pid = launched.pid;
    const [written, ...argv] = await launcherArgv(out);
    assert.equal(Number(written), pid, "the pid reported is the launcher's");
    assert.deepEqual(argv, ["-resource", resource]);
    // The agent has exited; the display lives on, in a session of its own.
    const sid = await sessionOf(pid);
    assert.equal(
      sid,
      String(pid),
      "the launcher leads its own session (Ctrl-C and hang-ups of the agent's terminal miss it)",
    );
    await assert.rejects(Deno.stat(planted), Deno.errors.NotFound);
  } finally {
    if (pid) Deno.kill(pid, "SIGTERM");
  }
});

Deno.test("display refuses, in one line and before starting anything, what the catalogue does not allow", async () => {
  const out = "/nonexistent-dir/argv.txt";
  await using user = await UserSetup.start({ extra: displaysConfig(out) });
  const cases: [string[], RegExp][] = [
    [["display", "orbit", "PLANE=Z"], /macro PLANE="Z" is not allowed for "orbit" \(one of X, Y\)/],
    [
      ["display", "orbit", "SECTOR=1"],
      /display "orbit" has no macro SECTOR; its macros: PLANE, NOTE/,
    ],
    [["display", "orbit", "NOTE=a\x1b]0;x\x07"], /control character/],
    [["display", "magnets"], /no display matches "magnets"; displays: orbit/],
    [["display", "orbit", "PLANE"], /"PLANE" is not MACRO=VALUE/],
  ];
  for (const [args, re] of cases) {
    const r = await user.run(args);
    assert.equal(r.code === 0, false, args.join(" "));
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0] ?? "", re);
  }
});

Deno.test("the run grant holds the configured launchers of the catalogue's kinds and nothing else", async () => {
  await using user = await UserSetup.start({ extra: displaysConfig("/tmp/x") });
  const r = await user.run(["permissions", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const flags: string[] = JSON.parse(r.stdout).flags;
  const run = flags.find((f) => f.startsWith("--allow-run="))?.slice("--allow-run=".length)
    .split(",");
  assert.deepEqual(run?.slice(1), [LAUNCHER], "the runtime, then the Phoebus launcher only");
  await using bare = await UserSetup.start();
  const plain = JSON.parse((await bare.run(["permissions", "--json"])).stdout).flags as string[];
  assert.equal(plain.find((f) => f.startsWith("--allow-run="))?.split(",").length, 1);
});
