/**
 * Limits that contradict themselves and durations past what a timer holds,
 * tried as a user meets them: the program runs through the launcher with a
 * user's grants on the fake EPICS facility, whose gateway records every
 * write. Each case asserts that nothing was written and that one clear line
 * said why.
 */
import assert from "node:assert/strict";
import type { RunResult } from "../support/run_agent.ts";
import { UserSetup } from "../support/user_grants.ts";

const H01 = "SR:COR:H01:SETPT";
const BOUNDS = "min = -2\nmax = 2\nmax_step = 0.5\ntolerance = 0.001\n";

interface Case {
  name: string;
  /** A TOML plan file's text, instead of `actions` as JSON. */
  toml?: string;
  limits?: string;
  safety?: string;
  actions: unknown[];
  /** The line that must be printed (stdout or stderr). */
  message: RegExp;
  /** The exit code, when it must be a particular one. */
  code?: number;
}

const write = (device: string, value: number | string) => ({
  type: "write",
  device,
  value,
  reason: "trim",
});

const cases: Case[] = [
  {
    name: "a second entry differing only in case reopens a writable = false",
    limits: `[limits."${H01}"]\nwritable = false\n\n[limits."sr:cor:h01:setpt"]\n${BOUNDS}`,
    actions: [write(H01, 0.1)],
    message:
      /limits\."SR:COR:H01:SETPT" \(line 1\) and limits\."sr:cor:h01:setpt" \(line 4\) differ only in letter case/,
    code: 2,
  },
  {
    name: "a case-variant allow placed first, in dotted and inline form, before the deny",
    limits: `limits."Sr:Cor:H01:Setpt" = { min = -2, max = 2, max_step = 0.5 }\n` +
      `limits."${H01}".writable = false\n`,
    actions: [write(H01, 0.1)],
    message: /\(line 1\) and limits\."SR:COR:H01:SETPT" \(line 2\) differ only in letter case/,
    code: 2,
  },
  {
    name: "a case-variant written with a TOML unicode escape",
    limits: `[limits]\n"${H01}" = { writable = false }\n"\\u0073R:COR:H01:SETPT" = { ${
      BOUNDS.trim().replaceAll("\n", ", ")
    } }\n`,
    actions: [write(H01, 0.1)],
    message: /\(line 2\) and limits\."sR:COR:H01:SETPT" \(line 3\) differ only in letter case/,
    code: 2,
  },
  {
    name: "an equally specific deny after the allow",
    limits:
      `[limits."SR:*:H01:SETPT"]\n${BOUNDS}catch_all = true\n[limits."SR:COR:*:SETPT"]\nwritable = false\n`,
    actions: [write(H01, 0.1)],
    message: /SR:COR:H01:SETPT is marked not writable in limits\.toml/,
  },
  {
    name: "an equally specific deny before the allow",
    limits:
      `[limits."SR:COR:*:SETPT"]\nwritable = false\n[limits."SR:*:H01:SETPT"]\n${BOUNDS}catch_all = true\n`,
    actions: [write(H01, 0.1)],
    message: /SR:COR:H01:SETPT is marked not writable in limits\.toml/,
  },
  {
    name: "a more specific exact allow under a pattern deny",
    limits: `[limits."SR:COR:*:SETPT"]\nwritable = false\n[limits."${H01}"]\n${BOUNDS}`,
    actions: [write(H01, 0.1)],
    message: /SR:COR:H01:SETPT is marked not writable in limits\.toml \(SR:COR:\*:SETPT\)/,
  },
  {
    name: "two equally specific allows, the loose one last",
    limits:
      `[limits."SR:*:H01:SETPT"]\nmin = -0.1\nmax = 0.1\nmax_step = 0.05\ncatch_all = true\n` +
      `[limits."SR:COR:*:SETPT"]\n${BOUNDS}`,
    actions: [write(H01, 0.3)],
    message: /value 0\.3 A is above the maximum 0\.1 A/,
  },
  {
    name: "two equally specific allows, the loose one first",
    limits: `[limits."SR:COR:*:SETPT"]\n${BOUNDS}` +
      `[limits."SR:*:H01:SETPT"]\nmin = -0.1\nmax = 0.1\nmax_step = 0.05\ncatch_all = true\n`,
    actions: [write(H01, 0.3)],
    message: /value 0\.3 A is above the maximum 0\.1 A/,
  },
  {
    name: "two equally specific value lists with nothing in common",
    limits:
      `[limits."SR:MOD?"]\nvalues = ["On", "Standby"]\n[limits."SR:?ODE"]\nvalues = ["Off"]\n`,
    actions: [write("SR:MODE", "Standby")],
    message:
      /no value may be written to SR:MODE: the entries \\?"SR:\?ODE\\?" and \\?"SR:MOD\?\\?" share no/,
  },
  {
    name: "an entry with only a tolerance",
    limits: `[limits."${H01}"]\ntolerance = 0.001\n`,
    actions: [write(H01, 0.1)],
    message:
      /limits\.toml:1: limits\."SR:COR:H01:SETPT" makes devices writable without min, max, max_step/,
    code: 2,
  },
  {
    name: "an entry with a max but no min or max_step",
    limits: `[limits."${H01}"]\nmax = 1e9\n`,
    actions: [write(H01, 0.1)],
    message: /without min, max_step; give min, max and max_step/,
    code: 2,
  },
  {
    name: "a catch-all that makes every device writable",
    limits: `[limits."*"]\nmin = -1e9\nmax = 1e9\nmax_step = 1e9\n`,
    actions: [write(H01, 0.1)],
    message: /limits\."\*" makes every device it matches writable .* catch_all = true/,
    code: 2,
  },
  {
    name: "a leading wildcard that opens every setpoint",
    limits: `[limits."${H01}"]\nwritable = false\n[limits."*:SETPT"]\n${BOUNDS}`,
    actions: [write(H01, 0.1)],
    message: /limits\.toml:3: limits\."\*:SETPT" makes every device it matches writable/,
    code: 2,
  },
  {
    name: "a long s (U+017F) in a limits name, which Unicode upper-cases to S",
    limits: `[limits."ſR:COR:H01:SETPT"]\n${BOUNDS}`,
    actions: [write(H01, 0.1)],
    message: /limits\.toml:1: limits\."ſR:COR:H01:SETPT": the name holds U\+017F/,
    code: 2,
  },
  {
    name: "a Kelvin sign (U+212A) in a limits pattern, which Unicode lower-cases to k",
    limits: `[limits."SR:COR:*:SETPT\u212a"]\n${BOUNDS}`,
    actions: [write(H01, 0.1)],
    message: /the name holds U\+212A; device names are printable ASCII/,
    code: 2,
  },
  {
    name: "a dotless i (U+0131) in the written name, which Unicode upper-cases to I",
    limits: `[limits."SR:MODE"]\nvalues = ["On", "Off"]\n`,
    actions: [write("SR:MODE\u0131", "On")],
    message: /holds U\+0131 LATIN SMALL LETTER DOTLESS I .*device names are printable ASCII/,
  },
  {
    name: "a lower-case entry does not open the case-sensitive EPICS name",
    limits: `[limits."sr:mode"]\nvalues = ["On", "Off", "Standby"]\n`,
    actions: [write("SR:MODE", "Standby")],
    message: /SR:MODE has no entry in limits\.toml/,
  },
  {
    name: "a case-variant device name written on EPICS",
    actions: [write("sr:cor:h01:setpt", 0.1)],
    message: /sr:cor:h01:setpt does not exist/,
  },
  {
    name: "an entry with only values, governing a number",
    limits: `[limits."${H01}"]\nvalues = ["0.1"]\n`,
    actions: [write(H01, 9)],
    message:
      /SR:COR:H01:SETPT is a number but its entry in limits\.toml \(SR:COR:H01:SETPT\) lacks min, max or max_step/,
  },
  {
    name: "numeric bounds governing a free-text device",
    limits: `[limits."SR:OPERATOR:MSG"]\n${BOUNDS}`,
    actions: [write("SR:OPERATOR:MSG", "Beam dump in 5 min")],
    message:
      /SR:OPERATOR:MSG takes free text but its entry in limits\.toml \(SR:OPERATOR:MSG\) lists no values/,
  },
  {
    name: "a WAIT one second past what a timer holds",
    actions: [write(H01, 0.1), { type: "wait", seconds: 2 ** 31 / 1000 + 1 }],
    message: /actions\[1\]\.seconds: 2147484\.648 s is above the bound of 604800 s/,
  },
  {
    name: "a WAIT within the bound but past max_plan_seconds",
    actions: [write(H01, 0.1), { type: "wait", seconds: 604800 }],
    message: /at most 1800 s are allowed \(\[safety\] max_plan_seconds\)/,
  },
  {
    name: "a huge dwell",
    actions: [{
      type: "scan",
      writeDevice: H01,
      start: 0,
      stop: 0.1,
      steps: 2,
      readDevices: [H01],
      dwellSeconds: 1e9,
    }],
    message: /actions\[0\]\.dwellSeconds: 1000000000 s is above the bound of 3600 s/,
  },
  {
    name: "an infinite WAIT in a TOML plan",
    toml: `description = "trim"\n[[actions]]\ntype = "write"\ndevice = "${H01}"\nvalue = 0.1\n` +
      `reason = "trim"\n[[actions]]\ntype = "wait"\nseconds = inf\n`,
    actions: [],
    message: /actions\[1\]\.seconds: Infinity is not a finite number/,
  },
  {
    name: "a NaN dwell in a TOML plan",
    toml: `description = "scan"\n[[actions]]\ntype = "scan"\nwriteDevice = "${H01}"\nstart = 0\n` +
      `stop = 0.1\nsteps = 2\nreadDevices = ["${H01}"]\ndwellSeconds = nan\n`,
    actions: [],
    message: /actions\[0\]\.dwellSeconds: NaN is not a finite number/,
  },
  {
    name: "a negative WAIT",
    actions: [write(H01, 0.1), { type: "wait", seconds: -5 }],
    message: /actions\[1\]\.seconds: /,
  },
  {
    name: "max_plan_seconds of 1e12 in the config",
    safety: "max_plan_seconds = 1e12",
    actions: [write(H01, 0.1), { type: "wait", seconds: 1 }],
    message: /key safety\.max_plan_seconds: must be at most 604800, got number 1000000000000/,
    code: 2,
  },
  {
    name: "a NaN readback timeout in the config",
    safety: "readback_timeout_s = nan",
    actions: [write(H01, 0.1)],
    message: /key safety\.readback_timeout_s: expected number, got number NaN/,
    code: 2,
  },
  {
    name: "an infinite model timeout in the config",
    safety: "[llm]\nidle_timeout_s = inf",
    actions: [write(H01, 0.1)],
    message: /key llm\.idle_timeout_s: expected number, got number Infinity/,
    code: 2,
  },
  {
    name: "a negative max_plan_seconds in the config",
    safety: "max_plan_seconds = -1",
    actions: [write(H01, 0.1)],
    message: /key safety\.max_plan_seconds: must be greater than 0, got number -1/,
    code: 2,
  },
];

/** Shows the plan for its approval token and, if it gets one, runs it approved: the strongest try. */
async function attempt(user: UserSetup, c: Case): Promise<RunResult[]> {
  const file = c.toml === undefined
    ? await user.file("plan.json", JSON.stringify({ description: "trim", actions: c.actions }))
    : await user.file("plan.toml", c.toml);
  const shown = await user.run(["plan", "show", file, "--json"]);
  if (shown.code !== 0) return [shown];
  const token = (JSON.parse(shown.stdout) as { approval?: { token: string } | null }).approval
    ?.token;
  if (token === undefined) return [shown];
  return [shown, await user.run(["plan", "run", file, "--approved-hash", token, "--json"])];
}

for (const c of cases) {
  Deno.test(`limits and durations under a user's grants: ${c.name}`, async () => {
    await using user = await UserSetup.start({ limits: c.limits, safety: c.safety });
    const results = await attempt(user, c);
    const last = results.at(-1) as RunResult;
    const out = `${last.stdout}\n${last.stderr}`;
    assert.deepEqual(user.writes, [], out);
    assert.notEqual(last.code, 0, out);
    if (c.code !== undefined) assert.equal(last.code, c.code, out);
    assert.match(out, c.message);
    assert.doesNotMatch(out, /^\s+at /m, "a stack trace was printed");
    assert.doesNotMatch(out, /waited/);
    if (c.code === 2) assert.equal(last.stderr.trim().split("\n").length, 1, last.stderr);
  });
}
