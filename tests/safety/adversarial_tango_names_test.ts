/**
 * One device, one name on TANGO, attacked as a user runs the program
 * (through the launcher, with the config's grants): on a REST fake that
 * decodes paths as a real server does (percent escapes decoded, `;`
 * parameters dropped, names matched whatever their case) and records every
 * write, and on the real TangoTest behind the REST bridge, whose attribute
 * is then read back with PyTango, around REST. The limits open `ampli` on
 * every member of `sys/tg_test` and close it on member 1. Every alias of
 * the closed attribute is tried; for each, nothing reaches the wire and one
 * line says why.
 */
import assert from "node:assert/strict";
import { FakeTangoRest } from "../support/facility/fake_tango_rest.ts";
import { HAS_TANGO, PYTHON, startTango } from "../support/facility/tango_server.ts";
import type { RunResult } from "../support/run_agent.ts";
import { TangoUser } from "../support/tango_user.ts";

const AMPLI = "sys/tg_test/1/ampli";
const LIMITS =
  `[limits."sys/tg_test/*/ampli"]\nmin = 0\nmax = 10\nmax_step = 5\ntolerance = 0.01\n\n` +
  `[limits."${AMPLI}"]\nwritable = false\n\n` +
  `[limits."sys/tg_test/*/mode"]\nmin = 0\nmax = 2\nmax_step = 1\n\n` +
  `[limits."sr/ps/q1/current"]\nmin = 0\nmax = 200\nmax_step = 5\ntolerance = 0.01\n`;

const write = (device: string, value: number | string) => ({
  type: "write",
  device,
  value,
  reason: "set the amplitude",
});

/** [plan's device, value, the line that must say why]. */
const ATTACKS: [string, number | string, RegExp][] = [
  [
    "sys/tg_test/%31/ampli",
    2,
    /actions\[0\]: segment 3 of "sys\/tg_test\/%31\/ampli" holds "%", a percent escape, which the server would decode into another name; .* \[device_name\]/,
  ],
  ["sys/tg_test/%2531/ampli", 2, /segment 3 of .* holds "%"/],
  ["sys/tg_test/1/%61mpli", 2, /segment 4 of .* holds "%"/],
  ["SYS/TG_TEST/1/AMPLI", 2, /sys\/tg_test\/1\/ampli is marked not writable in limits\.toml/],
  ["sys/tg_test/1/Ampli", 2, /sys\/tg_test\/1\/ampli is marked not writable/],
  ["sys/tg_test/1/ampli#dbase=no", 2, /holds "#", a TANGO client suffix \(#dbase=no\)/],
  ["sys/tg_test/1;x=y/ampli", 2, /holds ";", a path parameter, which the server would drop/],
  ["sys/tg_test/1./ampli", 2, /segment 3 of .* starts or ends with a dot/],
  ["sys//tg_test/1/ampli", 2, /is not a TANGO name|is empty/],
  ["sys/tg_test/../ampli", 2, /segment 3 of .* is "\.\.", which a URL resolves away/],
  ["sys/tg_test/1/ampli/", 2, /is not a TANGO name|is empty/],
  [
    "tango://elsewhere.test:10000/sys/tg_test/1/ampli",
    2,
    /names the Tango host "elsewhere\.test:10000"/,
  ],
  ["sys/tg_test/1/ampl\u0131", 2, /holds U\+0131|printable ASCII/],
];

/** `plan show` for its token and, given one, `plan run` with it; the violations as lines. */
async function attempt(user: TangoUser, device: string, value: number | string) {
  const file = await user.plan({ description: "amplitude", actions: [write(device, value)] });
  const shown = await user.run(["plan", "show", file, "--json"]);
  let last: RunResult = shown;
  let lines = "";
  try {
    const out = JSON.parse(shown.stdout);
    lines = (out.violations ?? []).map((v: { where: string; message: string; check: string }) =>
      `${v.where}: ${v.message} [${v.check}]\n`
    ).join("");
    if (typeof out.approval?.token === "string") {
      last = await user.run(["plan", "run", file, "--approved-hash", out.approval.token, "--json"]);
    }
  } catch { /* not JSON: the line is on stderr */ }
  const text = `${lines}${last.stdout}\n${last.stderr}`.replaceAll('\\"', '"');
  return { last, text };
}

function assertRefused(last: RunResult, text: string, why: RegExp): void {
  assert.notEqual(last.code, 0, text);
  assert.match(text, why);
  assert.doesNotMatch(text, /^\s+at |Stack backtrace/m, "a stack trace was printed");
}

for (const [device, value, why] of ATTACKS) {
  Deno.test(`TANGO names under a user's grants: ${JSON.stringify(device)} writes nothing`, async () => {
    await using server = new FakeTangoRest();
    await using user = await TangoUser.start(server, LIMITS);
    const { last, text } = await attempt(user, device, value);
    assert.deepEqual(server.writes, [], text);
    assertRefused(last, text, why);
    assert.equal(server.value("sys/tg_test/1", "ampli"), 1);
  });
}

Deno.test("TANGO names under a user's grants: a tango:// prefix naming this host is the device itself, and closed", async () => {
  await using server = new FakeTangoRest();
  await using user = await TangoUser.start(server, LIMITS);
  const { last, text } = await attempt(user, `tango://${server.tangoHost}/${AMPLI}`, 2);
  assert.deepEqual(server.writes, [], text);
  assertRefused(last, text, /sys\/tg_test\/1\/ampli is marked not writable/);
});

Deno.test("TANGO names under a user's grants: an enum takes no label under numeric bounds", async () => {
  await using server = new FakeTangoRest();
  await using user = await TangoUser.start(server, LIMITS);
  const { last, text } = await attempt(user, "sys/tg_test/1/mode", "ON");
  assert.deepEqual(server.writes, [], text);
  assertRefused(
    last,
    text,
    /sys\/tg_test\/1\/mode is an enum \(OFF, ON, STANDBY\) but its entry .* lists no values/,
  );
});

Deno.test("TANGO names under a user's grants: a readback that is the setpoint in other letters is a load error", async () => {
  await using server = new FakeTangoRest();
  const limits = `[limits."sr/ps/q1/current"]\nmin = 0\nmax = 200\nmax_step = 5\n` +
    `readback = "SR/PS/Q1/Current"\n`;
  await using user = await TangoUser.start(server, limits);
  const { last, text } = await attempt(user, "sr/ps/q1/current", 101);
  assert.deepEqual(server.writes, [], text);
  assert.equal(last.code, 2, text);
  assert.equal(last.stderr.trim().split("\n").length, 1, last.stderr);
  assert.match(
    last.stderr,
    /limits\."sr\/ps\/q1\/current"\.readback: a device cannot be its own readback/,
  );
});

Deno.test("TANGO names under a user's grants: a name in capitals runs as its one canonical name, encoded on the wire", async () => {
  await using server = new FakeTangoRest();
  await using user = await TangoUser.start(server, LIMITS);
  const { last, text } = await attempt(user, "SR/PS/Q1/Current", 103);
  assert.equal(last.code, 0, text);
  assert.deepEqual(
    server.writes.map(({ device, attr, value }) => ({ device, attr, value })),
    [{ device: "sr/ps/q1", attr: "current", value: "103" }],
  );
  assert.match(server.writes[0]?.path ?? "", /\/devices\/sr\/ps\/q1\/attributes\/current\/value$/);
  assert.doesNotMatch(text, /SR\/PS\/Q1\/Current/);
});

/** `ampli`'s set value on the real device, read with PyTango around the REST bridge. */
async function ampliOnDevice(port: number): Promise<number> {
  const out = await new Deno.Command(PYTHON, {
    args: [
      "-c",
      "import sys, tango\n" +
      `p = tango.DeviceProxy("tango://127.0.0.1:${port}/sys/tg_test/1#dbase=no")\n` +
      "print(p.read_attribute('ampli').w_value)\n",
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return Number(text);
}

Deno.test({
  name:
    "TANGO names under a user's grants, on the real TangoTest: no alias of the closed ampli changes it",
  ignore: !HAS_TANGO && !Deno.env.get("CI"),
  async fn() {
    await using server = await startTango();
    await using user = await TangoUser.start(server, LIMITS);
    const before = await ampliOnDevice(server.tangoPort);
    const aliases = [
      "sys/tg_test/%31/ampli",
      "SYS/TG_TEST/1/AMPLI",
      `tango://${server.tangoHost}/sys/tg_test/1/ampli`,
      "sys/tg_test/1/ampli#dbase=no",
      "sys/tg_test/1;x=y/ampli",
    ];
    for (const device of aliases) {
      const { last, text } = await attempt(user, device, before + 1);
      assertRefused(last, text, /\[device_name\]|marked not writable in limits\.toml/);
    }
    assert.equal(await ampliOnDevice(server.tangoPort), before, "ampli changed on the device");
  },
});
