/**
 * Every machine change leaves a logbook entry, as an operator's scripts run
 * the program (through the launcher, with the config's grants) on the fake
 * EPICS facility, whose Olog records every entry it receives: a completed
 * plan posts exactly one entry holding every written device with its value
 * before and after and the run's audit ids; a skipped draft posts nothing;
 * Olog down (or a process killed mid-post) keeps the draft, and a later
 * `elog post` sends it once.
 *
 * @module
 */
import assert from "node:assert/strict";
import { programPid, UserSetup } from "../support/user_grants.ts";
import { waitFor } from "../support/run_agent.ts";
import { auditEntries } from "../support/audit_entries.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

const LIMITS = `[limits."SR:COR:H01:SETPT"]
min = -2
max = 2
max_step = 0.5
tolerance = 0.001

[limits."SR:OPERATOR:MSG"]
values = ["Beam for users", "Machine development"]
`;

const CREDENTIALS = { OLOG_USER: "olog-user", OLOG_PASSWORD: "olog-secret" };

const PLAN = {
  description: "Trim H01 and announce machine development",
  actions: [
    { type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "center the orbit" },
    {
      type: "write",
      device: "SR:OPERATOR:MSG",
      value: "Machine development",
      reason: "tell the users",
    },
  ],
};

async function setup(): Promise<UserSetup> {
  return await UserSetup.start({
    limits: LIMITS,
    epicsConfig: { username_env: "OLOG_USER", password_env: "OLOG_PASSWORD" },
  });
}

/** `plan run PLAN --approved-hash TOKEN --json` plus `extra`; the parsed output. */
async function runPlan(user: UserSetup, extra: string[] = [], env = CREDENTIALS) {
  const file = await user.plan(PLAN);
  const token = await user.token(file);
  const ran = await user.run(["plan", "run", file, "--approved-hash", token, "--json", ...extra], {
    env,
  });
  assert.equal(ran.code, 0, ran.stderr);
  return { ran, out: JSON.parse(ran.stdout) };
}

const puts = (user: UserSetup) =>
  user.epics.olog.requests.filter((r) => r.startsWith("/Olog/logs?"));

Deno.test("a completed plan posts exactly one Olog entry with every written device before and after, and the audit ids", async () => {
  await using user = await setup();
  const { out } = await runPlan(user, ["--elog", "post"]);
  assert.equal(out.status, "completed");
  assert.equal(out.elog.status, "posted");
  const olog = user.epics.ologService;
  assert.equal(olog.received.length, 1);
  const [entry] = olog.created;
  assert.equal(String(entry?.id), out.elog.entry_id);
  assert.equal(entry?.title, "Plan completed: Trim H01 and announce machine development");
  assert.deepEqual(entry?.logbooks, [{ name: "Operations", owner: "olog-logs", state: "Active" }]);
  assert.equal(entry?.owner, "olog-user");
  const text = String(entry?.description);
  // The gateway's PVs have no readback device: only the setpoint read back, and the entry says so.
  assert.match(
    text,
    /\| `SR:COR:H01:SETPT` \| 0\.5 \| 0\.6 \| 0\.6 \| setpoint only \(no readback device\) \| no \|/,
  );
  assert.match(
    text,
    /\| `SR:OPERATOR:MSG` \| `Beam for users` \| `Machine development` \| `Machine development` \|/,
  );
  const audit = await auditEntries(user.stateDir);
  const run = audit.filter((e) =>
    e.run && e.run === audit.find((x) => x.status === "completed")?.run
  );
  assert.deepEqual(run.map((e) => e.status), ["started", "write_ahead", "completed"]);
  for (const e of run) assert.ok(text.includes(e.hash), `audit id ${e.status}`);
  assert.deepEqual(entry?.properties, [{
    name: "AccelAgent",
    attributes: [{ name: "draft", value: out.elog.draft.id }],
  }]);
  const posted = audit.filter((e) => e.decision === "elog_posted");
  assert.equal(posted.length, 1);
  assert.equal(posted[0]?.results.entry, out.elog.entry_id);

  // Posted again (a script's retry): found posted, nothing sent.
  const again = await user.run(["elog", "post", out.elog.draft.id], { env: CREDENTIALS });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /already in Olog at .* as entry \d+ \(nothing was sent again\)/);
  assert.equal(olog.received.length, 1);
});

Deno.test("a skipped draft posts nothing, and the audit says it was skipped", async () => {
  await using user = await setup();
  const { out } = await runPlan(user, ["--elog", "skip"]);
  assert.equal(out.elog.status, "skipped");
  assert.deepEqual(puts(user), []);
  assert.equal(user.epics.ologService.received.length, 0);
  const audit = await auditEntries(user.stateDir);
  assert.deepEqual(
    audit.filter((e) => e.decision.startsWith("elog")).map((e) => [e.decision, e.results.draft]),
    [["elog_skipped", out.elog.draft.id]],
  );
});

Deno.test("Olog down keeps the draft with one line; a later elog post sends it once", async () => {
  await using user = await setup();
  user.epics.olog.faults.fail500 = true;
  const { ran, out } = await runPlan(user, ["--elog", "post"]);
  assert.equal(out.status, "completed", "the plan's outcome is the plan's");
  assert.equal(out.elog.status, "pending");
  const line = ran.stderr.split("\n").filter((l) => l.includes("not posted"));
  assert.equal(line.length, 1, ran.stderr);
  assert.match(
    line[0] ?? "",
    new RegExp(
      `refused the entry \\(HTTP 500 with an HTML page\\); the draft is kept: accel-agent elog post ${out.elog.draft.id}$`,
    ),
  );
  assert.equal(user.epics.ologService.created.length, 0);
  const kept = JSON.parse(await Deno.readTextFile(out.elog.draft.path));
  assert.equal(kept.status, "pending");
  assert.equal((await Deno.stat(out.elog.draft.path)).mode! & 0o777, 0o600);

  user.epics.olog.faults.fail500 = false;
  const later = await user.run(["elog", "post", out.elog.draft.id.slice(0, 8)], {
    env: CREDENTIALS,
  });
  assert.equal(later.code, 0, later.stderr);
  assert.match(later.stdout, /^✓ posted to Olog at .* as entry \d+$/m);
  const again = await user.run(["elog", "post", out.elog.draft.id], { env: CREDENTIALS });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(user.epics.ologService.created.length, 1);
  assert.equal(user.epics.ologService.received.length, 1);
});

Deno.test("a process killed while Olog takes the entry: the next elog post finds it and sends nothing", async () => {
  await using user = await setup();
  const olog = user.epics.ologService;
  let release = () => {};
  olog.faults.hold = new Promise<void>((r) => (release = r));
  const file = await user.plan(PLAN);
  const token = await user.token(file);
  const killed = await user.run(["plan", "run", file, "--approved-hash", token, "--elog", "post"], {
    env: CREDENTIALS,
    onSpawn: async (launcher) => {
      await waitFor(() => olog.created.length === 1, 60_000, "the entry in Olog");
      Deno.kill(await programPid(launcher), "SIGKILL");
    },
  });
  release();
  assert.notEqual(killed.code, 0);
  const listed = await user.run(["elog", "list", "--json"]);
  const [draft] = JSON.parse(listed.stdout).drafts;
  assert.equal(draft.status, "posting", "a post was started and may have reached Olog");
  const after = await user.run(["elog", "post", draft.id], { env: CREDENTIALS });
  assert.equal(after.code, 0, after.stderr);
  assert.match(after.stdout, /already in Olog at .* as entry \d+ \(nothing was sent again\)/);
  assert.equal(olog.received.length, 1);
  assert.equal(olog.created.length, 1);
});

Deno.test("without a terminal or --elog the draft is kept, never posted; without credentials, or damaged, a post says so in one line", async () => {
  await using user = await setup();
  const { ran, out } = await runPlan(user);
  assert.equal(out.elog.status, "pending");
  assert.match(
    ran.stderr,
    /logbook draft [0-9a-f]{8} kept \(not posted\): accel-agent elog post [0-9a-f-]{36}/,
  );
  assert.equal(user.epics.ologService.received.length, 0);
  const post = await user.run(["elog", "post", out.elog.draft.id], { env: {} });
  assert.equal(post.code, 1);
  assert.match(
    post.stdout,
    /takes entries only with credentials: set \[epics\] username_env and password_env/,
  );
  assert.equal(user.epics.ologService.received.length, 0);
  const bad = await user.run(["elog", "post", "not-a-draft"]);
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr.trim().split("\n").length, 1, bad.stderr);
  // A damaged draft: one line naming it, the file left as it is, nothing sent.
  const torn = (await Deno.readTextFile(out.elog.draft.path)).slice(0, 100);
  await Deno.writeTextFile(out.elog.draft.path, torn);
  const damaged = await user.run(["elog", "post", out.elog.draft.id], { env: CREDENTIALS });
  assert.equal(damaged.code, 2);
  assert.match(
    damaged.stderr,
    /^accel-agent: \S+\.json: not a logbook draft \(not JSON: .*\); the file is left as it is: .*\n$/,
  );
  assert.equal(await Deno.readTextFile(out.elog.draft.path), torn);
  assert.equal(user.epics.ologService.received.length, 0);
});

Deno.test("elog shift posts a summary counted from Olog, the alarm logger and the audit, the model's prose fenced", async () => {
  await using user = await setup();
  await runPlan(user, ["--elog", "skip"]);
  await using llm = await startScriptedLlm({
    scenario: { turns: [{ respond: { text: "A quiet shift with one trim of H01." } }] },
  });
  const shift = await user.run(["elog", "shift", "--from", "-8h", "--elog", "post", "--json"], {
    env: { ...CREDENTIALS, OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
  });
  assert.equal(shift.code, 0, shift.stderr);
  const out = JSON.parse(shift.stdout);
  assert.equal(out.status, "posted");
  const [entry] = user.epics.ologService.created;
  assert.match(String(entry?.title), /^Shift summary \d{4}-\d\d-\d\dT\d\d:\d\dZ to /);
  const text = String(entry?.description);
  // The fake's Olog holds an entry every 2 h and its alarm logger a message every 90 min.
  assert.match(text, /\*\*Logbook:\*\* 4 entries \(/);
  assert.match(text, /\*\*Alarms:\*\* 5 events \(/);
  assert.match(text, /\*\*Plans:\*\* 1 ran \(completed 1\), 0 rejected/);
  assert.match(
    text,
    /\*\*Summary by the model\*\* .*\n\n```text\nA quiet shift with one trim of H01\.\n```/,
  );
  assert.equal(out.draft.kind, "shift");
  assert.deepEqual(llm.failures, []);
});

Deno.test("elog shift on a model that trickles its prose for ever ends at the turn's deadline, with the numbers and one line saying the prose is left out", async () => {
  await using user = await UserSetup.start({ extra: "[llm]\nturn_timeout_s = 2\n" });
  await using llm = await startScriptedLlm({
    scenario: { loop: true, turns: [{ respond: { fault: "trickle", delayMs: 100 } }] },
  });
  const shift = await user.run(["elog", "shift", "--from", "-8h", "--json"], {
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
    ceilingMs: 60_000,
  });
  assert.notEqual(shift.code, 137, `it kept listening: ${shift.stderr}`);
  assert.equal(shift.code, 0, shift.stderr);
  assert.match(
    shift.stderr,
    /^accel-agent: the model's prose is left out \(it was still answering after 2 s, \[llm\] turn_timeout_s\)$/m,
  );
  const out = JSON.parse(shift.stdout);
  assert.equal(out.draft.kind, "shift");
  assert.doesNotMatch(out.draft.body, /Summary by the model/);
});
