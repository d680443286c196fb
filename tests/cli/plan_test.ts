/**
 * Plans end to end: the real program, the simulator, the scripted model.
 */
import assert from "node:assert/strict";
import { call } from "../agent/subagents/harness.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { auditEntries } from "../support/audit_entries.ts";
import { agentCommand, childEnv, runAgent, waitFor } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";

const H01 = "LINAC:COR:H01:SETPT";

/** A fresh HOME, so each test has its own state directory (audit, plans, work); removed when disposed. */
async function home() {
  const tmp = await tempDir("accel-home-");
  const dir = tmp.path;
  return {
    dir,
    state: `${dir}/.local/state/accel-agent`,
    env: { HOME: dir },
    [Symbol.asyncDispose]: () => tmp[Symbol.asyncDispose](),
  };
}

/** The approval token `plan show REF --json` issues. */
async function tokenFor(ref: string, env: Record<string, string>): Promise<string> {
  const shown = await runAgent(["plan", "show", ref, "--json"], { env });
  assert.equal(shown.code, 0, shown.stdout + shown.stderr);
  return JSON.parse(shown.stdout).approval.token;
}

Deno.test("ask --json on a change exits 3 with the saved plan's ID; the token from plan show ID then runs it", async () => {
  await using h = await home();
  const live =
    JSON.parse((await runAgent(["get", H01, "--json"], { env: h.env })).stdout).readings[0].value;
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        {
          respond: call("propose_plan", {
            description: "Bump H01 by +0.05 mrad",
            actions: [
              {
                type: "write",
                device: H01,
                value: live + 0.05,
                reason: "operator asked for +0.05 mrad",
              },
              { type: "wait", seconds: 0.1 },
              { type: "read", devices: ["LINAC:BPM:02:X", "LINAC:BPM:03:X"] },
            ],
          }),
        },
        {
          expect: { toolResultIncludes: ["approval_required", "accel-agent plan show plan-"] },
          respond: { text: "The plan needs your approval: {{last_tool_result.note}}" },
        },
      ],
    },
  });
  const ask = await runAgent(["ask", "--json", "bump corrector H01 by +0.05 mrad"], {
    env: { ...h.env, OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
  });
  assert.equal(ask.code, 3, ask.stderr);
  assert.deepEqual(llm.failures, []);
  const out = JSON.parse(ask.stdout);
  assert.equal(out.exit_code, 3);
  const [plan] = out.plans;
  assert.equal(plan.decision, "deferred");
  assert.match(plan.saved_path, /plans\/plan-[0-9a-f]{12}\.json$/);
  assert.match(plan.plan_id, /^plan-[0-9a-f]{12}$/);
  assert.equal(out.tool_calls[0].result.status, "approval_required");
  assert.equal(out.tool_calls[0].result.plan_id, plan.plan_id);
  assert.doesNotMatch(ask.stdout, /apv\d\.|--approved-hash/);

  const [deferred] = await auditEntries(h.state);
  assert.equal(deferred?.decision, "deferred");

  const wrong = await runAgent(
    ["plan", "run", plan.plan_id, "--approved-hash", plan.plan_hash],
    { env: h.env },
  );
  assert.equal(wrong.code, 1);
  assert.equal(
    wrong.stderr,
    `accel-agent: plan ${
      plan.plan_hash.slice(0, 12)
    } rejected: approval refused: a plan hash is not ` +
      `an approval; the operator issues a token with accel-agent plan show PLAN; nothing was written\n`,
  );

  const token = await tokenFor(plan.plan_id, h.env);
  const run = await runAgent([
    "plan",
    "run",
    plan.plan_id,
    "--approved-hash",
    token,
    "--json",
  ], { env: h.env });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.match(result.actions[0].detail, new RegExp(`${H01} = ${live + 0.05}`));
  const entries = await auditEntries(h.state);
  assert.deepEqual(entries.map((e) => [e.decision, e.status ?? null]), [
    ["deferred", null],
    ["rejected", null],
    ["approved", "started"],
    ["approved", "write_ahead"],
    ["approved", "completed"],
  ]);
  assert.equal(entries[2]?.token?.id, token.split(".")[4]);
  assert.equal(entries[2]?.safety?.writesEnabled, true);
  assert.match(entries[2]?.safety?.limitsHash, /^[0-9a-f]{64}$/);
  const verify = await runAgent(["audit", "verify"], { env: h.env });
  assert.equal(verify.code, 0, verify.stderr);
  assert.equal(verify.stdout, "audit chain intact: 5 entries in 1 file (keyed; head matches)\n");
  const again = await runAgent(["plan", "run", plan.plan_id, "--approved-hash", token], {
    env: h.env,
  });
  assert.equal(again.code, 1);
  assert.match(again.stderr, /rejected: approval refused: the token was already used at /);
});

Deno.test("plan run without a terminal or a token exits 3 saying how to approve", async () => {
  await using h = await home();
  const file = `${h.dir}/p.json`;
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      description: "x",
      actions: [{ type: "write", device: H01, value: 0, reason: "r" }],
    }),
  );
  const r = await runAgent(["plan", "run", file], { env: h.env });
  assert.equal(r.code, 3);
  assert.match(
    r.stderr,
    /approval required and no terminal to ask on: nothing was written; review it with "accel-agent plan show .*p\.json", which gives an approval token, then run "accel-agent plan run .*p\.json --approved-hash TOKEN"$/m,
  );
});

Deno.test("SIGINT mid-scan exits 130 with every device restored, audited, and the chain intact", async () => {
  await using h = await home();
  const live =
    JSON.parse((await runAgent(["get", H01, "--json"], { env: h.env })).stdout).readings[0].value;
  const file = `${h.dir}/scan.json`;
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      description: "slow corrector scan",
      actions: [{
        type: "scan",
        writeDevice: H01,
        start: live,
        // Half a milliradian: the linac's BPMs stay inside MAJOR (a plan predicted past it is refused).
        stop: live + 0.5,
        steps: 11,
        readDevices: ["LINAC:BPM:05:X"],
        dwellSeconds: 0.3,
      }],
    }),
  );
  const hash = await tokenFor(file, h.env);
  const child = agentCommand(["plan", "run", file, "--approved-hash", hash, "--json"], {
    env: h.env,
  }).spawn();
  const stdout = new Response(child.stdout).text();
  // Progress lines on stderr tell when the scan is under way; interrupt after three points.
  let progress = "";
  const stderr = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) progress += chunk;
    return progress;
  })();
  await waitFor(() => / 3\/11 /.test(progress), 60_000, "the third scan point");
  child.kill("SIGINT");
  const status = await child.status;
  assert.equal(status.code, 130, await stderr);
  const result = JSON.parse(await stdout);
  assert.equal(result.status, "aborted");
  assert.match(result.errors[0], /aborted: cancelled by SIGINT/);
  assert.equal(result.restored.length, 1);
  assert.equal(result.restored[0].device, H01);
  // Confirmed by the corrector's readback device, which reads the original within the shipped
  // limits' tolerance for linac correctors (0.003 mrad: calibration offset plus noise).
  assert.equal(result.restored[0].readbackDevice, H01.replace(":SETPT", ":RDBK"));
  assert.ok(
    Math.abs(result.restored[0].readback - live) <= 0.003,
    String(result.restored[0].readback),
  );
  assert.equal(result.csv_files.length, 1);
  assert.ok(!/ 11\/11 /.test(progress), "the scan did not finish");
  const [started, ahead, entry] = await auditEntries(h.state);
  assert.equal(started?.status, "started");
  assert.equal(ahead?.status, "write_ahead");
  assert.equal(entry?.status, "aborted");
  assert.deepEqual((entry?.restores as { ok: boolean }[]).map((r) => r.ok), [true]);
  assert.equal((await runAgent(["audit", "verify"], { env: h.env })).code, 0);
});

Deno.test("audit verify fails on the line where one byte was changed", async () => {
  await using h = await home();
  const file = `${h.dir}/read.json`;
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      description: "look",
      actions: [{ type: "read", devices: ["RF:PHASE:SETPT"] }],
    }),
  );
  const hash = await tokenFor(file, h.env);
  // A token given is always checked, even for a plan without writes.
  assert.equal(
    (await runAgent(["plan", "run", file, "--approved-hash", "a".repeat(64)], { env: h.env })).code,
    1,
  );
  assert.equal(
    (await runAgent(["plan", "run", file, "--approved-hash", hash], { env: h.env })).code,
    0,
  );
  const [name] = [...Deno.readDirSync(`${h.state}/audit`)].map((e) => e.name).filter((n) =>
    n.endsWith(".jsonl")
  );
  const path = `${h.state}/audit/${name}`;
  const text = await Deno.readTextFile(path);
  const second = text.indexOf("\n") + 1;
  const at = text.indexOf('"look"', second) + 2;
  await Deno.writeTextFile(path, text.slice(0, at) + "L" + text.slice(at + 1));
  const r = await runAgent(["audit", "verify"], { env: h.env });
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    `accel-agent: audit chain broken at ${path}:2: the entry's content does not match its hash\n`,
  );
  const single = await runAgent(["audit", "verify", path], { env: h.env });
  assert.equal(single.code, 1);
  assert.match(single.stderr, /:2: /);
});

Deno.test("plan show lists every violation at once and exits 1", async () => {
  await using h = await home();
  const file = `${h.dir}/bad.toml`;
  await Deno.writeTextFile(
    file,
    `description = "bad"
[[actions]]
type = "write"
device = "${H01}"
value = 7.0
reason = "too far"
[[actions]]
type = "write"
device = "LINAC:BPM:01:X"
value = 0.0
reason = "read-only"
`,
  );
  const r = await runAgent(["plan", "show", file], { env: { ...h.env, ...childEnv({}) } });
  assert.equal(r.code, 1);
  assert.match(r.stdout, /3 violations:/);
  assert.match(r.stdout, /actions\[0\]: value 7 mrad is above the maximum 2 mrad/);
  assert.match(r.stdout, /actions\[1\]: LINAC:BPM:01:X is read-only/);
  assert.match(r.stdout, /plan hash [0-9a-f]{64}/);
});

Deno.test("a scan's CSV can be read by Python in the sandbox at the path the result names", async () => {
  await using h = await home();
  const file = `${h.dir}/scan.json`;
  const live =
    JSON.parse((await runAgent(["get", "RF:PHASE:SETPT", "--json"], { env: h.env })).stdout)
      .readings[0].value;
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      description: "short phase scan",
      actions: [{
        type: "scan",
        writeDevice: "RF:PHASE:SETPT",
        start: live,
        stop: live - 1,
        steps: 3,
        readDevices: ["DIAG:ENERGY:MEAS"],
        dwellSeconds: 0,
      }],
      rollback: [{ type: "write", device: "RF:PHASE:SETPT", value: live, reason: "back" }],
    }),
  );
  const hash = await tokenFor(file, h.env);
  const run = JSON.parse(
    (await runAgent(["plan", "run", file, "--approved-hash", hash, "--json"], { env: h.env }))
      .stdout,
  );
  assert.equal(run.status, "completed");
  const [inPython] = run.csv_files_in_python;
  assert.match(inPython, /^\/data\/scan-[0-9a-f]{12}-0-.*\.csv$/);
  const code = `import csv\nrows = list(csv.reader(open(${
    JSON.stringify(inPython)
  })))\nprint(len(rows) - 1, rows[0][3])\n`;
  const py = await runAgent(["exec", "-", "--json"], { env: h.env, stdin: code });
  assert.equal(py.code, 0, py.stdout + py.stderr);
  assert.match(JSON.parse(py.stdout).stdout, /^3 DIAG:ENERGY:MEAS/);
});

Deno.test("an audit log written before keys and heads verifies as unkeyed and says what that cannot show", async () => {
  await using h = await home();
  const { AuditLog } = await import("../../src/safety/audit.ts");
  const old = new AuditLog(`${h.state}/audit`);
  for (const status of ["started", "completed"]) {
    await old.append({
      operator: "op",
      host: "h",
      configHash: "c",
      planHash: "p",
      plan: {},
      decision: "approved",
      decidedBy: "--approved-hash",
      status,
    });
  }
  await Deno.remove(`${h.state}/audit/HEAD`);
  const r = await runAgent(["audit", "verify"], { env: h.env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^audit chain intact: 2 entries in 1 file \(unkeyed; head absent\)\n/);
  assert.match(
    r.stdout,
    /note: 2 entries were written without an audit key .*would not be detected/,
  );
  assert.match(r.stdout, /note: no head record .*a cut tail cannot be detected/);
});

Deno.test("a plan is named by its saved ID; an unknown ID is a usage error naming the plans directory", async () => {
  await using h = await home();
  const r = await runAgent(["plan", "show", "plan-000000000000"], { env: h.env });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^accel-agent: no saved plan with ID plan-000000000000 in .*\/plans; /);
  const bad = await runAgent(["plan", "run", "../x"], { env: h.env });
  assert.equal(bad.code, 2, bad.stderr);
});
