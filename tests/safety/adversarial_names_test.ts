/**
 * One device, one name, attacked as a user runs the program: through the
 * launcher with the config's grants, on the fake EPICS facility whose
 * gateway resolves aliases as a real one does (`pva://X`, `ca://X`, `X.VAL`
 * reach X) and records every write it receives. The limits open everything
 * with a catch-all and close one corrector; every alias of that corrector,
 * every field of it, an enum under numeric bounds, a catch-all over a
 * family and a readback that is the setpoint are tried. For each: nothing
 * reaches the wire, and one line says why.
 */
import assert from "node:assert/strict";
import { call } from "../agent/subagents/harness.ts";
import { channelOf } from "../support/facility/fake_pvws.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import type { RunResult } from "../support/run_agent.ts";
import { UserSetup } from "../support/user_grants.ts";

const H01 = "SR:COR:H01:SETPT";
const BOUNDS = "min = -2\nmax = 2\nmax_step = 0.5\ntolerance = 0.001\n";
/** Everything writable within bounds, on purpose; the corrector H01 closed. */
const OPEN_BUT_H01 = `[limits."*"]\n${BOUNDS}catch_all = true\n\n` +
  `[limits."${H01}"]\nwritable = false\n`;

const write = (device: string, value: number | string) => ({
  type: "write",
  device,
  value,
  reason: "trim",
});

interface Case {
  name: string;
  limits?: string;
  actions: unknown[];
  rollback?: unknown[];
  /** The line that must say why (stdout or stderr). */
  message: RegExp;
  code?: number;
}

const CASES: Case[] = [
  {
    name: "a pva:// prefix on the closed corrector",
    actions: [write(`pva://${H01}`, 0.6)],
    message:
      /actions\[0\]: "pva:\/\/SR:COR:H01:SETPT": the protocol prefix "pva:\/\/" is not part of a device name .*; write SR:COR:H01:SETPT \[device_name\]/,
  },
  {
    name: "a ca:// prefix on the closed corrector",
    actions: [write(`ca://${H01}`, 0.6)],
    message: /the protocol prefix "ca:\/\/" is not part of a device name/,
  },
  {
    name: "an upper-case scheme",
    actions: [write(`PVA://${H01}`, 0.6)],
    message: /the protocol prefix "PVA:\/\/"/,
  },
  {
    name: "the record's .VAL, which is the record itself",
    actions: [write(`${H01}.VAL`, 0.6)],
    message:
      /actions\[0\]: SR:COR:H01:SETPT is marked not writable in limits\.toml \(SR:COR:H01:SETPT\) \[has_limits\]/,
  },
  {
    name: "a long-string modifier after .VAL",
    actions: [write(`${H01}.VAL$`, 0.6)],
    message: /"\$" after the field is a channel filter or modifier .*; write SR:COR:H01:SETPT/,
  },
  {
    name: "an array filter after .VAL",
    actions: [write(`${H01}.VAL[0:1]`, 0.6)],
    message: /"\[0:1\]" after the field is a channel filter/,
  },
  {
    name: "a JSON channel filter",
    actions: [write(`${H01}.{"dbnd":{"d":0}}`, 0.6)],
    message: /channel filter or modifier the gateway applies to SR:COR:H01:SETPT/,
  },
  {
    name: "a field of the closed corrector (its drive limit)",
    actions: [write(`${H01}.DRVH`, 0.6)],
    message: /SR:COR:H01:SETPT\.DRVH is marked not writable in limits\.toml/,
  },
  {
    name: "a field of an open device that no entry names",
    actions: [write("SR:COR:H03:SETPT.PROC", 1)],
    message:
      /SR:COR:H03:SETPT\.PROC has no entry in limits\.toml; a device without limits cannot be written \[has_limits\]/,
  },
  {
    name: "a lower-case field name",
    actions: [write(`${H01}.val`, 0.6)],
    message: /EPICS field names are upper case; write SR:COR:H01:SETPT/,
  },
  {
    name: "the alias as a scan's written device",
    actions: [{
      type: "scan",
      writeDevice: `pva://${H01}`,
      start: 0.5,
      stop: 0.6,
      steps: 2,
      readDevices: ["SR:BPM:01:X"],
      dwellSeconds: 0,
    }],
    message: /actions\[0\]: "pva:\/\/SR:COR:H01:SETPT": the protocol prefix/,
  },
  {
    name: "the alias hidden in the rollback",
    actions: [{ type: "read", devices: ["SR:BPM:01:X"] }],
    rollback: [write(`ca://${H01}`, 0.6)],
    message: /rollback\[0\]: "ca:\/\/SR:COR:H01:SETPT": the protocol prefix/,
  },
  {
    name: "an alias among the devices read",
    actions: [{ type: "read", devices: ["SR:BPM:01:X", `pva://${H01}`] }],
    message: /actions\[0\]: "pva:\/\/SR:COR:H01:SETPT": the protocol prefix/,
  },
  {
    name: "a path a PVA gateway reads as a sub-field",
    actions: [write(`${H01}/value`, 0.6)],
    message: /holds "\/", which is not in an EPICS record name/,
  },
  {
    name: "an enum set to a label under numeric bounds",
    actions: [write("SR:MODE", "Standby")],
    message:
      /SR:MODE is an enum \(Off, On, Standby\) but its entry in limits\.toml \(\*\) lists no values; an enum device takes only the labels its entry lists in values \[limits_complete\]/,
  },
  {
    name: "an enum set by its index under numeric bounds",
    actions: [write("SR:MODE", 2)],
    message: /value 2 is a number; SR:MODE takes one of its labels/,
  },
  {
    name: "a label the limits list that the enum does not have",
    limits: `[limits."SR:MODE"]\nvalues = ["On", "Beam"]\n`,
    actions: [write("SR:MODE", "Beam")],
    message: /value "Beam" is not one of SR:MODE's labels \(Off, On, Standby\)/,
  },
  {
    name: "a wildcard across the family, not marked catch_all",
    limits: `[limits."${H01}"]\nwritable = false\n[limits."SR:*T"]\n${BOUNDS}`,
    actions: [write("SR:COR:H03:SETPT", 0.1)],
    message:
      /limits\.toml:3: limits\."SR:\*T" makes every device it matches writable across the facility or a whole subsystem/,
    code: 2,
  },
  {
    name: "a readback that is the setpoint by its .VAL",
    limits: `[limits."SR:COR:H03:SETPT"]\n${BOUNDS}readback = "SR:COR:H03:SETPT.VAL"\n`,
    actions: [write("SR:COR:H03:SETPT", 0.1)],
    message: /limits\."SR:COR:H03:SETPT"\.readback: a device cannot be its own readback/,
    code: 2,
  },
  {
    name: "a limits entry naming the record's .VAL",
    limits: `[limits."${H01}.VAL"]\nwritable = false\n[limits."SR:COR:*:SETPT"]\n${BOUNDS}`,
    actions: [write(H01, 0.6)],
    message: /limits\."SR:COR:H01:SETPT\.VAL": .* is the record itself; write SR:COR:H01:SETPT/,
    code: 2,
  },
];

/** `plan show` for its token and, given one, `plan run` with it: the strongest try. */
async function attempt(user: UserSetup, c: Case): Promise<RunResult> {
  const file = await user.plan({ description: "trim", actions: c.actions, rollback: c.rollback });
  const shown = await user.run(["plan", "show", file, "--json"]);
  const token = shown.code === 0 ? JSON.parse(shown.stdout).approval?.token : undefined;
  if (typeof token !== "string") return shown;
  return await user.run(["plan", "run", file, "--approved-hash", token, "--json"]);
}

/** The violations of `plan show --json` as the terminal prints them: `where: message [check]`. */
function violationLines(stdout: string): string {
  try {
    const { violations } = JSON.parse(stdout) as {
      violations?: { where: string; message: string; check: string }[];
    };
    return (violations ?? []).map((v) => `${v.where}: ${v.message} [${v.check}]\n`).join("");
  } catch {
    return "";
  }
}

for (const c of CASES) {
  Deno.test(`device names under a user's grants: ${c.name}`, async () => {
    await using user = await UserSetup.start({ limits: c.limits ?? OPEN_BUT_H01 });
    const last = await attempt(user, c);
    const out = `${violationLines(last.stdout)}${last.stdout}\n${last.stderr}`;
    assert.deepEqual(user.writes, [], out);
    assert.notEqual(last.code, 0, out);
    if (c.code !== undefined) {
      assert.equal(last.code, c.code, out);
      assert.equal(last.stderr.trim().split("\n").length, 1, last.stderr);
    }
    assert.match(out.replaceAll('\\"', '"'), c.message);
    assert.doesNotMatch(out, /^\s+at |Stack backtrace/m, "a stack trace was printed");
  });
}

Deno.test("the fake gateway resolves every alias tried here to the record, as a real gateway does", () => {
  for (
    const alias of [`pva://${H01}`, `ca://${H01}`, `${H01}.VAL`, `${H01}.VAL$`, `${H01}.VAL[0:1]`]
  ) {
    assert.equal(channelOf(alias), H01, alias);
  }
});

Deno.test("device names under a user's grants: the canonical name opens, and the plan runs under it", async () => {
  await using user = await UserSetup.start({
    limits: `[limits."SR:COR:*:SETPT"]\n${BOUNDS}`,
  });
  const file = await user.plan({
    description: "trim H01",
    actions: [write(`${H01}.VAL`, 0.6)],
  });
  const token = await user.token(file);
  const run = await user.run(["plan", "run", file, "--approved-hash", token, "--json"]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  // The wire got the record's one name, once.
  assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }]);
  const detail = JSON.parse(run.stdout).actions[0].detail as string;
  assert.match(detail, /SR:COR:H01:SETPT/);
  assert.doesNotMatch(detail, /\.VAL/);
});

Deno.test("device names under a user's grants: a model proposing aliases of the closed corrector is told why, and nothing is written", async () => {
  const aliases = [`pva://${H01}`, `${H01}.VAL`, `${H01}.DRVH`];
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        ...aliases.map((device) => ({
          respond: call("propose_plan", {
            description: "trim H01",
            actions: [{ type: "write", device, value: 0.6, reason: "asked" }],
          }),
        })),
        { respond: { text: "Refused." } },
      ],
    },
  });
  await using user = await UserSetup.start({
    limits: OPEN_BUT_H01,
    extra: `[llm]\nbase_url = "${llm.url}"\n`,
  });
  const ask = await user.run(["ask", "--json", "trim H01"], { env: { OPENAI_API_KEY: "k" } });
  const out = JSON.parse(ask.stdout);
  const results = out.tool_calls.map((c: { result: unknown }) => c.result);
  assert.deepEqual(results.map((r: { status: string }) => r.status), [
    "preflight_failed",
    "preflight_failed",
    "preflight_failed",
  ]);
  const said = results.map((r: { violations: string[] }) => r.violations.join("; "));
  assert.match(said[0], /the protocol prefix "pva:\/\/" .* \[device_name\]/);
  assert.match(said[1], /SR:COR:H01:SETPT is marked not writable .* \[has_limits\]/);
  assert.match(said[2], /SR:COR:H01:SETPT\.DRVH is marked not writable .* \[has_limits\]/);
  assert.deepEqual(user.writes, []);
});
