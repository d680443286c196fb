/**
 * Misreported results, run as a user runs the program (through the launcher,
 * grants from the config): services that answer garbage and a config path
 * that is no file end with a one-line message and a non-zero exit, and a
 * plan whose device the gateway answers with malformed frames writes nothing.
 */
import assert from "node:assert/strict";
import { runAsUser, UserSetup } from "../support/user_grants.ts";
import { tempDir } from "../support/temp.ts";

const PLAN = {
  description: "trim H01",
  actions: [{ type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "trim" }],
};

Deno.test("through the launcher, a FIFO config path is refused at once with one JSON object", async () => {
  await using dir = await tempDir();
  const fifo = `${dir.path}/fifo.toml`;
  assert.ok((await new Deno.Command("mkfifo", { args: [fifo] }).output()).success);
  // A program that opened the FIFO would wait for a writer for ever: the ceiling ends it.
  const r = await runAsUser(["--config", fifo, "get", "SR:DCCT", "--json"], { ceilingMs: 60_000 });
  assert.equal(r.code, 2, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.ok, false);
  assert.match(out.error.message, /fifo\.toml: is a FIFO \(named pipe\), not a regular file/);
});

Deno.test("under a user's grants, logs archive of unknown PVs and a ChannelFinder error page exit 1", async () => {
  await using user = await UserSetup.start();
  const archive = await user.run(["logs", "archive", "--device", "NO:SUCH:PV", "--from", "-1h"]);
  assert.equal(archive.code, 1);
  assert.match(archive.stderr, /^accel-agent: NO:SUCH:PV: not archived/m);
  user.epics.channelfinder.faults.fail500 = true;
  const search = await user.run(["search", "SR:*"]);
  assert.equal(search.code, 1);
  assert.equal(
    search.stderr.trim(),
    "accel-agent: search_device failed: ChannelFinder answered HTTP 500 for /channels with an HTML page",
  );
});

const GARBAGE: [string, (u: Record<string, unknown>) => string, RegExp][] = [
  [
    "text that is not JSON",
    () => "<html>proxy error</html>",
    /malformed frame \(text that is not JSON/,
  ],
  [
    "a value that is an object",
    (u) => JSON.stringify({ ...u, value: { raw: 0.1 } }),
    /an update whose value is an object/,
  ],
  [
    "a severity that is a number",
    (u) => JSON.stringify({ ...u, severity: 0 }),
    /an update whose severity is the number 0/,
  ],
  [
    "a time stamp that is text",
    (u) => JSON.stringify({ ...u, seconds: "now" }),
    /an update whose seconds is the text \\?"now/,
  ],
  ["a list", () => "[]", /malformed frame \(a list that is no message\)/],
];

for (const [name, garble, expected] of GARBAGE) {
  Deno.test(`a plan whose device the gateway answers with ${name} writes nothing and says so`, async () => {
    await using user = await UserSetup.start();
    user.epics.pvws.garble = (u) => (u.pv === "SR:COR:H01:SETPT" ? garble(u) : undefined);
    const file = await user.file("plan.json", JSON.stringify(PLAN));
    const shown = await user.run(["plan", "show", file, "--json"]);
    // The strongest try: run it with the token plan show gave, when it gave one.
    const token = JSON.parse(shown.stdout).approval?.token as string | undefined;
    const ran = token
      ? await user.run(["plan", "run", file, "--approved-hash", token, "--json"])
      : shown;
    assert.notEqual(ran.code, 0, ran.stdout);
    assert.deepEqual(user.writes, [], "nothing was written");
    assert.match(`${ran.stdout}\n${ran.stderr}`, expected);
    assert.doesNotMatch(`${ran.stdout}\n${ran.stderr}`, /is not a function/);
  });
}
