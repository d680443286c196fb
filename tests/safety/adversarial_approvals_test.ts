/**
 * Attacks on approvals and on the audit, run as a user runs the program
 * (through the launcher, with the grants the config gives) on the fake EPICS
 * facility. "Nothing was written" is what the gateway saw; every refusal is
 * one clear line, with JSON under --json, and no stack trace.
 */
import assert from "node:assert/strict";
import { call } from "../agent/subagents/harness.ts";
import { base64url, macOf } from "../../src/safety/keys.ts";
import { entryHash } from "../../src/safety/audit.ts";
import { auditEntries } from "../support/audit_entries.ts";
import type { RunResult } from "../support/run_agent.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { runAsUser, UserSetup } from "../support/user_grants.ts";

const H01 = "SR:COR:H01:SETPT";

function planText(value: number, description = "trim H01"): string {
  return JSON.stringify({
    description,
    actions: [{ type: "write", device: H01, value, reason: "trim" }],
  });
}

async function show(user: UserSetup, ref: string, extra: string[] = []) {
  const r = await user.run(["plan", "show", ref, "--json", ...extra]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const out = JSON.parse(r.stdout);
  return { hash: out.plan_hash as string, token: out.approval.token as string };
}

/** One line on stderr, the given words in it, and nothing that looks like a stack trace. */
function assertOneLine(r: RunResult, pattern: RegExp): void {
  const lines = r.stderr.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0] as string, pattern);
  assert.doesNotMatch(r.stderr + r.stdout, /^\s+at |internal error|Stack backtrace/m);
}

/**
 * A token in the right shape, MAC'd the documented way with a key of the
 * forger's own choosing; its scope field copied from a token the forger saw.
 */
async function forge(planHash: string, exp: string, seen: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    crypto.getRandomValues(new Uint8Array(32)),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const id = base64url(crypto.getRandomValues(new Uint8Array(12)));
  const mac = await macOf(key, `accel-agent approval v2\n${planHash}\n""\n""\n${exp}\n${id}`);
  return `apv2.${planHash.slice(0, 16)}.${seen.split(".")[2]}.${exp}.${id}.${mac}`;
}

async function refusedRun(user: UserSetup, ref: string, token: string, why: RegExp) {
  const r = await user.run(["plan", "run", ref, "--approved-hash", token]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assertOneLine(
    r,
    new RegExp(`rejected: approval refused: (.*)?${why.source}.*nothing was written$`),
  );
  assert.deepEqual(user.writes, []);
  return r;
}

Deno.test("approval attack: the plan's bare hash given as the approval is refused and audited", async () => {
  await using user = await UserSetup.start();
  const file = await user.file("p.json", planText(0.6));
  const { hash } = await show(user, file);
  await refusedRun(user, file, hash, /a plan hash is not an approval/);
  const entries = await auditEntries(user.stateDir);
  assert.deepEqual(entries.map((e) => e.decision), ["rejected"]);
});

Deno.test("approval attack: a token computed the documented way but without the state's key is refused", async () => {
  await using user = await UserSetup.start();
  const file = await user.file("p.json", planText(0.6));
  const { hash, token } = await show(user, file);
  const forged = await forge(hash, String(Math.floor(Date.now() / 1000) + 3600), token);
  await refusedRun(
    user,
    file,
    forged,
    /the token was not issued for this plan by this installation/,
  );
});

Deno.test("approval attack: a token issued for another plan does not run this one", async () => {
  await using user = await UserSetup.start();
  const harmless = await user.file("harmless.json", planText(0.6, "harmless"));
  const other = await user.file("other.json", planText(0.9, "the real change"));
  const { token } = await show(user, harmless);
  await refusedRun(user, other, token, /the token approves plan [0-9a-f]{16}…, not this plan/);
});

Deno.test("approval attack: a single-use token replayed runs its plan once", async () => {
  await using user = await UserSetup.start();
  const file = await user.file("p.json", planText(0.6));
  const { token } = await show(user, file);
  const first = await user.run(["plan", "run", file, "--approved-hash", token]);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(user.writes.length, 1);
  const again = await user.run(["plan", "run", file, "--approved-hash", token, "--json"]);
  assert.equal(again.code, 1);
  assert.equal(JSON.parse(again.stdout).status, "rejected");
  assertOneLine(
    again,
    /rejected: approval refused: the token was already used at 20\d\d-.*nothing was written$/,
  );
  assert.equal(user.writes.length, 1, "the replay wrote nothing");
});

Deno.test("approval attack: two processes racing with one single-use token write once", async () => {
  await using user = await UserSetup.start();
  const file = await user.file("p.json", planText(0.6));
  const { token } = await show(user, file);
  const runs = await Promise.all(
    [0, 1].map(() => user.run(["plan", "run", file, "--approved-hash", token])),
  );
  assert.deepEqual(runs.map((r) => r.code).sort(), [0, 1], runs.map((r) => r.stderr).join());
  assert.equal(user.writes.length, 1);
});

Deno.test("approval attack: an expired token is refused", async () => {
  await using user = await UserSetup.start({ safety: "approval_expiry_s = 1" });
  const file = await user.file("p.json", planText(0.6));
  const { token } = await show(user, file);
  await new Promise((r) => setTimeout(r, 2100));
  await refusedRun(user, file, token, /the token expired at /);
});

Deno.test("approval attack: a single-use token edited to be reusable or to expire later is refused", async () => {
  await using user = await UserSetup.start();
  const file = await user.file("p.json", planText(0.6));
  const { token } = await show(user, file);
  const parts = token.split(".");
  const reusable = [parts[0], parts[1], parts[2], "r", parts[4], parts[5]].join(".");
  await refusedRun(user, file, reusable, /not issued for this plan by this installation/);
  const later = [parts[0], parts[1], parts[2], String(Number(parts[3]) + 86_400), ...parts.slice(4)]
    .join(".");
  await refusedRun(user, file, later, /not issued for this plan by this installation/);
});

Deno.test("approval attack: a plan file edited after its token was issued is refused", async () => {
  await using user = await UserSetup.start();
  const file = await user.file("p.json", planText(0.6));
  const { token } = await show(user, file);
  await user.file("p.json", planText(0.99));
  await refusedRun(user, file, token, /not this plan .*the plan was changed after it was approved/);
});

Deno.test("approval attack: a token copied from another state directory is refused", async () => {
  await using mine = await UserSetup.start();
  // The same facility and limits, another state directory: only the key differs.
  await using theirs = await UserSetup.start({ epicsConfig: mine.epics.urls });
  const text = planText(0.6);
  const { token } = await show(theirs, await theirs.file("p.json", text));
  await refusedRun(mine, await mine.file("p.json", text), token, /not issued .*this installation/);
  assert.deepEqual(mine.writes, []);
});

Deno.test("approval attack: a token shown against one facility does not run on another sharing the state directory", async () => {
  await using shown = await UserSetup.start();
  await using other = await UserSetup.start();
  const text = planText(0.6);
  const { token } = await show(shown, await shown.file("p.json", text));
  // The other facility's config, pointed at the state directory (and key) the token came from.
  const config = await other.file(
    "shared-state.toml",
    (await Deno.readTextFile(other.configPath)).replace(other.stateDir, shown.stateDir),
  );
  const r = await runAsUser([
    "--config",
    config,
    "plan",
    "run",
    await other.file("p.json", text),
    "--approved-hash",
    token,
  ]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assertOneLine(
    r,
    /rejected: approval refused: the token was issued against another facility, not this configuration's epics http:\/\/127\.0\.0\.1:\d+\/pvws; .*nothing was written$/,
  );
  assert.deepEqual(other.writes, []);
  assert.deepEqual(shown.writes, []);
});

Deno.test("approval attack: a token shown against one limits file does not run once the limits changed", async () => {
  await using user = await UserSetup.start();
  const file = await user.file("p.json", planText(0.6));
  const { token } = await show(user, file);
  await user.file("limits.toml", `[limits."${H01}"]\nmin = -2\nmax = 2\nmax_step = 1.5\n`);
  await refusedRun(user, file, token, /the token was issued against other safety limits/);
});

Deno.test("approval attack: the deferred result of ask --json holds no token and no command that runs the plan", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        {
          respond: call("propose_plan", {
            description: "trim H01",
            actions: [{ type: "write", device: H01, value: 0.6, reason: "asked" }],
          }),
        },
        { respond: { text: "Needs approval: {{last_tool_result.note}}" } },
      ],
    },
  });
  await using user = await UserSetup.start({ extra: `[llm]\nbase_url = "${llm.url}"\n` });
  const ask = await user.run(["ask", "--json", "trim H01"], { env: { OPENAI_API_KEY: "k" } });
  assert.equal(ask.code, 3, ask.stderr);
  const out = JSON.parse(ask.stdout);
  const result = out.tool_calls[0].result;
  assert.equal(result.status, "approval_required");
  assert.match(result.note, new RegExp(`accel-agent plan show ${result.plan_id}`));
  assert.doesNotMatch(ask.stdout + ask.stderr, /apv\d\.|--approved-hash|--approval/);
  assert.deepEqual(user.writes, []);
  // What the model was told cannot be turned into an approval.
  await refusedRun(user, result.plan_id, result.plan_hash, /a plan hash is not an approval/);
  // The operator's own plan show on the ID is what approves it.
  const { token } = await show(user, result.plan_id);
  const run = await user.run(["plan", "run", result.plan_id, "--approved-hash", token]);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }]);
});

/** A user whose audit directory cannot be created (a file stands where it goes). */
async function brokenAudit(opts: Parameters<typeof UserSetup.start>[0] = {}) {
  const user = await UserSetup.start(opts);
  await Deno.mkdir(user.stateDir, { recursive: true });
  await Deno.writeTextFile(`${user.stateDir}/audit`, "not a directory");
  return user;
}

function assertAuditFailed(r: RunResult): void {
  assert.equal(r.code, 1, r.stdout + r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.status, "audit_failed");
  assert.equal(out.exit_code, 1);
  assertOneLine(r, /cannot write the audit log: .*audit.*; nothing was written to the machine$/);
}

Deno.test("audit attack: a plan that fails preflight with an unusable audit path is one JSON error", async () => {
  await using user = await brokenAudit();
  const file = await user.file("p.json", planText(0.6));
  const { token } = await show(user, file);
  // The plan now fails preflight (the site switch went off); the audit still cannot record it.
  const site = await user.file("site.toml", "writes_enabled = false\n");
  const env = { ACCEL_AGENT_SITE_FILE: site };
  assertAuditFailed(
    await user.run(["plan", "run", file, "--approved-hash", token, "--json"], { env }),
  );
  assert.deepEqual(user.writes, []);
});

Deno.test("audit attack: a rejected token with an unusable audit path is one JSON error", async () => {
  await using user = await brokenAudit();
  const file = await user.file("p.json", planText(0.6));
  const { hash } = await show(user, file);
  assertAuditFailed(await user.run(["plan", "run", file, "--approved-hash", hash, "--json"]));
  assert.deepEqual(user.writes, []);
});

Deno.test("audit attack: an approved plan with an unusable audit path writes nothing and keeps its token", async () => {
  await using user = await brokenAudit();
  const file = await user.file("p.json", planText(0.6));
  const { token } = await show(user, file);
  assertAuditFailed(await user.run(["plan", "run", file, "--approved-hash", token, "--json"]));
  assert.deepEqual(user.writes, []);
  // Nothing was decided, so the token was not spent: with the audit back, it runs once.
  await Deno.remove(`${user.stateDir}/audit`);
  const ok = await user.run(["plan", "run", file, "--approved-hash", token]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(user.writes.length, 1);
});

Deno.test("audit attack: a deferred plan with an unusable audit path tells the model nothing was written", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        {
          respond: call("propose_plan", {
            description: "trim H01",
            actions: [{ type: "write", device: H01, value: 0.6, reason: "asked" }],
          }),
        },
        { respond: { text: "{{last_tool_result.note}}" } },
      ],
    },
  });
  await using user = await brokenAudit({ extra: `[llm]\nbase_url = "${llm.url}"\n` });
  const ask = await user.run(["ask", "--json", "trim H01"], { env: { OPENAI_API_KEY: "k" } });
  const out = JSON.parse(ask.stdout);
  assert.equal(out.tool_calls[0].result.status, "audit_failed", ask.stdout);
  assert.match(out.tool_calls[0].result.errors[0], /cannot write the audit log/);
  assert.doesNotMatch(ask.stderr, /^\s+at /m);
  assert.deepEqual(user.writes, []);
});

Deno.test("kill switch attack: a user's writes_enabled = true does not lift the site switch", async () => {
  await using user = await UserSetup.start({ safety: "writes_enabled = true" });
  const file = await user.file("p.json", planText(0.6));
  const { token } = await show(user, file);
  // The site switch goes off after the token was issued: the token does not outlive it.
  const site = await user.file("site.toml", 'writes_enabled = false\nreason = "beam study"\n');
  const env = { ACCEL_AGENT_SITE_FILE: site };
  const r = await user.run(["plan", "run", file, "--approved-hash", token, "--json"], { env });
  assert.equal(r.code, 1, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.status, "preflight_failed");
  assert.match(
    out.violations[0],
    /writes are disabled by the site kill switch \(.*site\.toml: writes_enabled = false: beam study\); a user's config cannot turn it back on/,
  );
  assert.deepEqual(user.writes, []);
  const [entry] = await auditEntries(user.stateDir);
  assert.equal(entry?.decision, "preflight_failed");
  assert.equal(entry?.safety.configWritesEnabled, true);
  assert.equal(entry?.safety.writesEnabled, false);
  assert.deepEqual(entry?.safety.site.map((s: { writesEnabled: boolean }) => s.writesEnabled), [
    false,
  ]);
});

Deno.test("kill switch attack: a site file that cannot be read turns writes off", async () => {
  await using user = await UserSetup.start();
  const file = await user.file("p.json", planText(0.6));
  const env = { ACCEL_AGENT_SITE_FILE: `${user.dir}/no-such-site.toml` };
  const r = await user.run(["plan", "show", file], { env });
  assert.equal(r.code, 1);
  // A line wider than the table is cut by the program, its rest on a line beginning "↳ ".
  const joined = r.stdout.replaceAll("\n↳ ", "");
  assert.match(joined, /site kill switch \(.*no-such-site\.toml: cannot read the site file/);
  assert.doesNotMatch(r.stdout, /approval token/);
  assert.deepEqual(user.writes, []);
});

/** Three audited runs of read-only plans with tokens; returns the day file. */
async function auditedRuns(user: UserSetup): Promise<string> {
  const file = await user.file(
    "read.json",
    JSON.stringify({
      description: "look",
      actions: [{ type: "read", devices: [H01] }],
    }),
  );
  for (let i = 0; i < 2; i++) {
    const { token } = await show(user, file);
    assert.equal((await user.run(["plan", "run", file, "--approved-hash", token])).code, 0);
  }
  const dir = `${user.stateDir}/audit`;
  const [name] = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".jsonl"));
  return `${dir}/${name}`;
}

Deno.test("audit attack: deleting the last records is detected by audit verify", async () => {
  await using user = await UserSetup.start();
  const day = await auditedRuns(user);
  const lines = (await Deno.readTextFile(day)).split("\n").filter(Boolean);
  assert.equal(lines.length, 4);
  await Deno.writeTextFile(day, `${lines.slice(0, 2).join("\n")}\n`);
  const r = await user.run(["audit", "verify"]);
  assert.equal(r.code, 1);
  assertOneLine(
    r,
    /audit chain broken at .*\/audit\.head:1: the log ends after 2 entries but the head records 4: the last 2 were removed$/,
  );
  // Nothing more is recorded, and so nothing runs, until someone looks.
  const file = await user.file("p.json", planText(0.6));
  const { token } = await show(user, file);
  const run = await user.run(["plan", "run", file, "--approved-hash", token]);
  assert.equal(run.code, 1);
  assert.match(run.stderr, /cannot write the audit log: .*entries were removed or replaced/);
  assert.deepEqual(user.writes, []);
});

Deno.test("audit attack: a record rewritten with the chain and head re-hashed without the key is detected", async () => {
  await using user = await UserSetup.start();
  const day = await auditedRuns(user);
  const entries = (await Deno.readTextFile(day)).split("\n").filter(Boolean).map((l) =>
    JSON.parse(l)
  );
  entries[1].status = "nothing happened";
  let prev = entries[0].hash;
  for (const e of entries.slice(1)) {
    const { hash: _h, mac: _m, ...body } = e;
    body.prevHash = prev;
    e.prevHash = prev;
    e.hash = await entryHash(body);
    delete e.mac; // the forger cannot compute a MAC; dropping it is the only other move
    prev = e.hash;
  }
  await Deno.writeTextFile(day, entries.map((e) => JSON.stringify(e)).join("\n") + "\n");
  await Deno.writeTextFile(
    `${user.stateDir}/audit.head`,
    JSON.stringify({ entries: entries.length, lastHash: prev }),
  );
  const r = await user.run(["audit", "verify", "--json"]);
  assert.equal(r.code, 1);
  assert.equal(JSON.parse(r.stdout).line, 2);
  assertOneLine(
    r,
    /:2: the entry has no MAC after keyed entries \(written without the audit key\)$/,
  );
});

Deno.test("audit attack: every MAC stripped, the chain re-hashed and the head re-written without the key is detected", async () => {
  await using user = await UserSetup.start();
  const day = await auditedRuns(user);
  const entries = (await Deno.readTextFile(day)).split("\n").filter(Boolean).map((l) =>
    JSON.parse(l)
  );
  entries[2].status = "nothing happened";
  let prev = "0".repeat(64);
  for (const e of entries) {
    const { hash: _h, mac: _m, ...body } = e;
    body.prevHash = prev;
    for (const k of Object.keys(e)) delete e[k];
    Object.assign(e, body, { hash: await entryHash(body) });
    prev = e.hash;
  }
  await Deno.writeTextFile(day, entries.map((e) => JSON.stringify(e)).join("\n") + "\n");
  await Deno.writeTextFile(
    `${user.stateDir}/audit.head`,
    JSON.stringify({ entries: entries.length, lastHash: prev }),
  );
  const r = await user.run(["audit", "verify"]);
  assert.equal(r.code, 1);
  assertOneLine(
    r,
    /audit\.head:1: the head record's MAC does not match \(it was written without the audit key\)$/,
  );
});

Deno.test("audit attack: removing the whole audit directory is detected, and nothing runs after it", async () => {
  await using user = await UserSetup.start();
  await auditedRuns(user);
  await Deno.remove(`${user.stateDir}/audit`, { recursive: true });
  const r = await user.run(["audit", "verify"]);
  assert.equal(r.code, 1);
  assertOneLine(r, /the log ends after 0 entries but the head records 4: the last 4 were removed$/);
  const file = await user.file("p.json", planText(0.6));
  const { token } = await show(user, file);
  const run = await user.run(["plan", "run", file, "--approved-hash", token, "--json"]);
  assert.equal(run.code, 1);
  assert.equal(JSON.parse(run.stdout).status, "audit_failed");
  assert.deepEqual(user.writes, []);
});

Deno.test("key attack: a config that lets the sandbox read the state directory is refused", async () => {
  await using user = await UserSetup.start({ extra: '[sandbox]\ndata_dirs = ["."]\n' });
  const file = await user.file("p.json", planText(0.6));
  const r = await user.run(["plan", "show", file]);
  assert.equal(r.code, 2);
  assertOneLine(
    r,
    /config error: \[sandbox\] data_dirs .* gives the Python sandbox a read of .*\/keys/,
  );
  assert.deepEqual(user.writes, []);
});

Deno.test("key attack: Python in the sandbox cannot read the approval key", async () => {
  await using user = await UserSetup.start();
  await show(user, await user.file("p.json", planText(0.6)));
  const key = `${user.stateDir}/keys/approval.key`;
  assert.equal((await Deno.stat(key)).mode! & 0o777, 0o600);
  const code = `try:\n    print(open(${JSON.stringify(key)}).read())\nexcept Exception as e:\n` +
    `    print("refused:", type(e).__name__)\n`;
  const r = await user.run(["exec", "-", "--json"], { stdin: code });
  const out = JSON.parse(r.stdout);
  assert.match(out.stdout, /^refused: /, r.stdout);
  assert.doesNotMatch(r.stdout, /[0-9a-f]{64}/);
});

Deno.test("a reusable procedure runs more than once and its approval is recorded", async () => {
  await using user = await UserSetup.start();
  const file = await user.file(
    "read.json",
    JSON.stringify({
      description: "look",
      actions: [{ type: "read", devices: [H01] }],
    }),
  );
  const { token } = await show(user, file, ["--reusable"]);
  for (let i = 0; i < 2; i++) {
    const r = await user.run(["plan", "run", file, "--approved-hash", token]);
    assert.equal(r.code, 0, r.stderr);
  }
  const entries = await auditEntries(user.stateDir);
  assert.equal(entries[0]?.decision, "approved_as_procedure");
  assert.equal(entries[0]?.token?.reusable, true);
  assert.equal(entries.filter((e) => e.status === "completed").length, 2);
  assert.equal((await user.run(["audit", "verify"])).code, 0);
});
