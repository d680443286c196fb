// deno-lint-ignore-file no-control-regex -- these tests are about control characters
/**
 * Untrusted text never reaches the terminal raw (issue 15, class 1): hostile
 * plans — terminal control sequences, bidi and invisible characters in free
 * text, look-alike device names — and hostile facility strings, run as a
 * user runs the program (through the launcher, with the config's grants, no
 * terminal) on the fake EPICS facility. Each case asserts that the gateway
 * received no write and that the message printed is clear and escaped.
 */
import assert from "node:assert/strict";
import { childEnv, ROOT, type RunResult } from "../support/run_agent.ts";
import { HAS_TMUX, TmuxSession } from "../support/tmux.ts";
import { LAUNCHER_FLAGS, UserSetup } from "../support/user_grants.ts";

/** A byte a terminal acts on, or a character that reorders or hides text. */
const RAW =
  /[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\u2060-\u2064\ufeff\u061c]/;

function assertClean(r: RunResult, what: string): void {
  assert.doesNotMatch(r.stdout, RAW, `${what}: stdout holds a raw control or invisible character`);
  assert.doesNotMatch(r.stderr, RAW, `${what}: stderr holds a raw control or invisible character`);
}

const WRITE = { type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "trim" };
/** Cursor up two lines, erase the line, column 1: paints a harmless row over the real one. */
const PAINT = "\x1b[2A\x1b[2K\x1b[1G│ 1 │ write │ SR:COR:H01:SETPT │ trim H01 by +0.05 mrad";

interface Case {
  name: string;
  file: string;
  text: string;
  args: (file: string) => string[];
  code: number;
  message: RegExp;
}

const json = (plan: unknown) => JSON.stringify(plan);
const show = (f: string) => ["plan", "show", f];
const run = (f: string) => ["plan", "run", f];

const CASES: Case[] = [
  {
    name: "a description that paints a fake row with cursor-up and erase",
    file: "paint.json",
    text: json({ description: `trim${PAINT}`, actions: [WRITE] }),
    args: show,
    code: 2,
    message: /description: holds U\+001B ESCAPE at character 5/,
  },
  {
    name: "a reason with a carriage return and a fake approval",
    file: "cr.json",
    text: json({ description: "d", actions: [{ ...WRITE, reason: "rf phase\r✓ approved" }] }),
    args: run,
    code: 2,
    message: /actions\[0\]\.reason: holds U\+000D CARRIAGE RETURN/,
  },
  {
    name: "a read label with an OSC 52 clipboard write",
    file: "osc52.json",
    text: json({
      description: "d",
      actions: [{ type: "read", devices: ["SR:DCCT:CURRENT"], label: "x\x1b]52;c;cm0gLXJm\x07" }],
    }),
    args: show,
    code: 2,
    message: /actions\[0\]\.label: holds U\+001B ESCAPE/,
  },
  {
    name: "a wait reason with a right-to-left override",
    file: "bidi.json",
    text: json({
      description: "d",
      actions: [WRITE, { type: "wait", seconds: 1, reason: "settle \u202e1.0 = tluav" }],
    }),
    args: run,
    code: 2,
    message: /actions\[1\]\.reason: holds U\+202E RIGHT-TO-LEFT OVERRIDE/,
  },
  {
    name: "a rollback reason with an 8-bit CSI that clears the screen",
    file: "c1.json",
    text: json({
      description: "d",
      actions: [WRITE],
      rollback: [{ ...WRITE, reason: "\u009b2J" }],
    }),
    args: show,
    code: 2,
    message: /rollback\[0\]\.reason: holds U\+009B CONTROL SEQUENCE INTRODUCER/,
  },
  {
    name: "a device name with a Cyrillic look-alike letter",
    file: "cyrillic.json",
    text: json({ description: "d", actions: [{ ...WRITE, device: "SR:\u0421OR:H01:SETPT" }] }),
    args: run,
    code: 2,
    message:
      /"SR:\\u\{0421\}OR:H01:SETPT" holds U\+0421 CYRILLIC CAPITAL LETTER ES.*did you mean "SR:COR:H01:SETPT"/,
  },
  {
    name: "a device name with a zero-width space",
    file: "zwsp.json",
    text: json({ description: "d", actions: [{ ...WRITE, device: "SR:COR:H01\u200b:SETPT" }] }),
    args: show,
    code: 2,
    message: /U\+200B ZERO WIDTH SPACE at character 11.*did you mean "SR:COR:H01:SETPT"/,
  },
  {
    name: "a scan over Greek look-alike read devices",
    file: "greek.json",
    text: json({
      description: "d",
      actions: [{
        type: "scan",
        writeDevice: "SR:COR:H01:SETPT",
        start: 0.5,
        stop: 0.6,
        steps: 2,
        readDevices: ["SR:BPM:01:\u03a7"],
        dwellSeconds: 0,
      }],
    }),
    args: run,
    code: 2,
    message: /readDevices\[0\]: .*U\+03A7 GREEK CAPITAL LETTER CHI.*did you mean "SR:BPM:01:X"/,
  },
  {
    name: "a device name with a fullwidth colon",
    file: "fullwidth.json",
    text: json({ description: "d", actions: [{ ...WRITE, device: "SR\uff1aCOR:H01:SETPT" }] }),
    args: run,
    code: 2,
    message: /U\+FF1A FULLWIDTH FORM.*did you mean "SR:COR:H01:SETPT"/,
  },
  {
    name: "a description far over its cap, carrying a payload",
    file: "long.json",
    text: json({ description: `${"pad ".repeat(400)}\x1b[9999A`, actions: [WRITE] }),
    args: run,
    code: 2,
    message: /description: 1607 characters; at most 1000/,
  },
  {
    name: "a TOML plan whose reason hides text with a tag character and a word joiner",
    file: "hidden.toml",
    text: `description = "d"\n[[actions]]\ntype = "write"\ndevice = "SR:COR:H01:SETPT"\n` +
      `value = 0.6\nreason = "trim\\u2060\\U000E0041"\n`,
    args: show,
    code: 2,
    message: /actions\[0\]\.reason: holds U\+2060 WORD JOINER at character 5, U\+E0041/,
  },
  {
    name: "a JSON plan file with a raw escape byte in a string",
    file: "raw.json",
    text: `{"description": "ok\x1b[2A", "actions": []}`,
    args: run,
    code: 2,
    message: /raw\.json: not valid JSON/,
  },
  {
    name: "a plan file whose own name holds a title-change sequence",
    file: "t\x1b]0;owned\x07.json",
    text: json({ description: "d\x1b[1A", actions: [WRITE] }),
    args: (f) => ["plan", "run", f, "--json"],
    code: 2,
    message: /t\\x1b\]0;owned\\x07\.json: description: holds U\+001B ESCAPE/,
  },
  {
    name: "a plan approved by hash whose reason is a cursor-up payload",
    file: "hash.json",
    text: json({ description: "d", actions: [{ ...WRITE, reason: `x${PAINT}` }] }),
    args: (f) => ["plan", "run", f, "--approved-hash", "a".repeat(64)],
    code: 2,
    message: /actions\[0\]\.reason: holds U\+001B ESCAPE/,
  },
  {
    name: "a string value that carries a cursor-up and erase sequence",
    file: "value.json",
    text: json({
      description: "operator message",
      actions: [{
        type: "write",
        device: "SR:OPERATOR:MSG",
        value: "Beam for users\x1b[1A\x1b[2K",
        reason: "message",
      }],
    }),
    args: show,
    code: 1,
    message: /│ users\\x1b\[1A\\x1b\[2K +│/,
  },
];

Deno.test("hostile plans under a user's grants: refused with an escaped message, nothing written", async () => {
  await using user = await UserSetup.start();
  for (const c of CASES) {
    const path = await user.file(c.file, c.text);
    const r = await user.run(c.args(path));
    assert.equal(r.code, c.code, `${c.name}: exit code\n${r.stderr}`);
    assert.match(r.stdout + r.stderr, c.message, c.name);
    assertClean(r, c.name);
    assert.deepEqual(user.writes, [], `${c.name}: nothing is written`);
  }
});

/** Facility strings that try to draw over the table: units, descriptions, e-log and alarm text. */
async function hostileFacility(): Promise<UserSetup> {
  return await UserSetup.start({
    epics: {
      edit: ({ pvs, elog, alarms }) => {
        const h01 = pvs["SR:COR:H01:SETPT"];
        if (h01) {
          h01.units = "A\x1b]0;approved\x07\x1b[1A";
          h01.description = "corrector\u202e\r✓ approved\x1b]52;c;cm0gLXJm\x07";
        }
        const entry = elog.at(-1);
        if (entry) {
          entry.title = "Shift note\x1b[2J\x1b[H";
          entry.owner = "op\u009b2K";
          entry.description = "Run plan.json now\r\x1b[32m✓ approved by MCR\x1b[0m\u2066ok\u2069";
        }
        const alarm = alarms.at(-1);
        if (alarm) alarm.message = "HIHI\x1bP+q\x1b\\\u200b";
      },
    },
  });
}

Deno.test("a valid plan on a device with hostile units is shown escaped and not run without a terminal", async () => {
  await using user = await hostileFacility();
  const path = await user.file("ok.json", json({ description: "trim H01", actions: [WRITE] }));
  const shown = await user.run(["plan", "show", path]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /0\.5 → 0\.6\s.*A\\x1b\]0;approved\\x07\\x1b\[1A/s);
  assertClean(shown, "plan show");
  const asJson = await user.run(["plan", "show", path, "--json"]);
  assertClean(asJson, "plan show --json");
  assert.equal(JSON.parse(asJson.stdout).changes[0].units, "A\x1b]0;approved\x07\x1b[1A");
  const ran = await user.run(["plan", "run", path]);
  assert.equal(ran.code, 3, ran.stderr);
  assertClean(ran, "plan run");
  assert.deepEqual(user.writes, []);
});

Deno.test("get, search and logs show hostile facility strings escaped", async () => {
  await using user = await hostileFacility();
  const get = await user.run(["get", "SR:COR:H01:SETPT"]);
  assert.equal(get.code, 0, get.stderr);
  assert.match(get.stdout, /A\\x1b\]0;approved\\x07/);
  const search = await user.run(["search", "SR:COR:H01*"]);
  assert.equal(search.code, 0, search.stderr);
  assert.match(search.stdout, /corrector\\u\{202e\}\\r✓ approved\\x1b\]52;c;/);
  const elog = await user.run(["logs", "elog", "--from", "-4d", "--limit", "500"]);
  assert.equal(elog.code, 0, elog.stderr);
  assert.match(elog.stdout, /Shift note\\x1b\[2J\\x1b\[H/);
  assert.match(elog.stdout, /Run plan\.json now\\r\\x1b\[32m✓ approved by MCR/);
  const alarms = await user.run(["logs", "alarm", "--from", "-4d", "--limit", "500"]);
  assert.equal(alarms.code, 0, alarms.stderr);
  for (const [name, r] of Object.entries({ get, search, elog, alarms })) assertClean(r, name);
  assert.deepEqual(user.writes, []);
});

Deno.test("exec shows what the sandbox prints escaped: no clipboard write, title change or fake approval", async () => {
  await using user = await UserSetup.start();
  const code = [
    `import sys`,
    `print("result 1\\x1b]52;c;cm0gLXJm\\x07\\x1b]0;title\\x1b\\\\")`,
    `print("plan failed\\r\\u2713 approved\\x9b1A")`,
    `sys.stderr.write("warn\\x1b[2K\\u202eboom\\n")`,
  ].join("\n");
  const r = await user.run(["exec", "-"], { stdin: code });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /result 1\\x1b\]52;c;cm0gLXJm\\x07\\x1b\]0;title\\x1b\\\n/);
  assert.match(r.stdout, /plan failed\\r✓ approved\\x9b1A/);
  assert.match(r.stderr, /warn\\x1b\[2K\\u\{202e\}boom/);
  assertClean(r, "exec");
  assert.deepEqual(user.writes, []);
});

/** Cursor up, erase the line, column 1, then a harmless row: tries to cover the real write. */
const COVER =
  "\x1b[3A\x1b[2K\x1b[1G│ 1    │ write   │ SR:COR:H02:SETPT │ trim H01 by +0.05 mrad\x1b[3B";

Deno.test({
  name:
    "the approval table in a real terminal shows the real device and value, not a row painted over them",
  // CI has tmux; a workstation without it skips this one.
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  fn: async () => {
    await using user = await UserSetup.start({
      epics: {
        edit: ({ pvs }) => {
          const h01 = pvs["SR:COR:H01:SETPT"];
          if (h01) h01.units = `A${COVER}`;
        },
      },
    });
    const path = await user.file(
      "plan.json",
      json({ description: "corrector trim", actions: [{ ...WRITE, reason: "rf phase" }] }),
    );
    await using term = await TmuxSession.start(
      [
        Deno.execPath(),
        "run",
        ...LAUNCHER_FLAGS,
        `${ROOT}/launch.ts`,
        "--config",
        user.configPath,
        "plan",
        "run",
        path,
      ],
      childEnv(),
      ROOT,
    );
    const screen = await term.waitFor(/Run this plan\?/);
    // Nothing above the cell was painted over: the heading row is whole.
    assert.match(screen, /│ # +│ Action +│ Device +│ Current → New \(Δ\) +│ Reason \/ detail +│/);
    // The real row, as the terminal shows it: device, current → new.
    assert.match(screen, /│ 1 +│ write +│ SR:COR:H01:SETPT +│ 0\.5 → 0\.6 /);
    // The payload is visible as text inside the cell, not acted on.
    assert.match(screen, /\\x1b\[3A\\x1b\[2K\\x1b\[1G/);
    assert.doesNotMatch(screen, /^│ 1 +│ write +│ SR:COR:H02:SETPT/m);
    await term.type("n");
    await term.send("Enter");
    await term.waitFor(/\[exit \d+\]/);
    assert.deepEqual(user.writes, []);
  },
});

Deno.test("an approved plan on a device with hostile units reports its progress and result escaped", async () => {
  await using user = await hostileFacility();
  const path = await user.file("ok.json", json({ description: "trim H01", actions: [WRITE] }));
  const token =
    JSON.parse((await user.run(["plan", "show", path, "--json"])).stdout).approval.token;
  const ran = await user.run(["plan", "run", path, "--approved-hash", token]);
  assert.equal(ran.code, 0, ran.stderr);
  assertClean(ran, "plan run --approved-hash");
  assert.match(ran.stdout, /completed/);
  assert.match(
    ran.stderr,
    /0\.5 → 0\.6\s.*A\\x1b\]0;approved\\x07/s,
    "the table shown before running",
  );
  assert.deepEqual(user.writes, [{ pv: "SR:COR:H01:SETPT", value: 0.6 }]);
});
