/**
 * The no-LLM commands and configuration errors, end to end.
 */
import assert from "node:assert/strict";
import { runAgent, tempConfig } from "../support/run_agent.ts";

Deno.test("get --json reads several devices with no model configured", async () => {
  const r = await runAgent(["get", "LINAC:BPM:01:X", "RF:PHASE:SETPT", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.readings.map((x: { device: string }) => x.device), [
    "LINAC:BPM:01:X",
    "RF:PHASE:SETPT",
  ]);
  for (const reading of out.readings) {
    assert.equal(typeof reading.value, "number");
    assert.ok(reading.units);
    assert.ok(["NONE", "MINOR", "MAJOR", "INVALID"].includes(reading.severity));
  }
  assert.equal(out.errors, undefined);
});

Deno.test("get prints a table, and an unknown device fails the command with exit 1", async () => {
  const r = await runAgent(["get", "LINAC:BPM:01:X", "LINAC:BPM:01:Z"]);
  assert.equal(r.code, 1);
  assert.match(r.stdout, /LINAC:BPM:01:X .* mm /);
  assert.match(r.stderr, /^accel-agent: LINAC:BPM:01:Z: /m);
});

Deno.test("search pages through wildcard matches with a total", async () => {
  const r = await runAgent(["search", "LINAC:BPM:*:X", "--limit", "5", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.devices.length, 5);
  assert.ok(out.total >= 20);
  assert.equal(out.next_offset, 5);
  assert.equal(out.devices[0].name, "LINAC:BPM:01:X");
  const page2 = JSON.parse(
    (await runAgent(["search", "LINAC:BPM:*:X", "--limit", "5", "--offset", "5", "--json"])).stdout,
  );
  assert.equal(page2.devices[0].name, "LINAC:BPM:06:X");
});

Deno.test("search shows the range of the page in human output", async () => {
  const r = await runAgent(["search", "RING:Q?:CURRENT"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /RING:Q1:CURRENT/);
  assert.match(r.stdout, /1–\d+ of \d+/);
});

Deno.test("logs elog and alarm read a time range; archive summarises a device", async () => {
  const elog = await runAgent(["logs", "elog", "--from", "-2d", "--to", "now", "--json"]);
  assert.equal(elog.code, 0, elog.stderr);
  const e = JSON.parse(elog.stdout);
  assert.equal(e.source, "elog");
  assert.ok(e.entries.length > 0);
  const alarm = await runAgent(["logs", "alarm", "--from", "-2d", "--json"]);
  assert.equal(alarm.code, 0, alarm.stderr);
  const archive = await runAgent([
    "logs",
    "archive",
    "--device",
    "DIAG:ENERGY:MEAS",
    "--from",
    "-6h",
    "--json",
  ]);
  assert.equal(archive.code, 0, archive.stderr);
  const a = JSON.parse(archive.stdout);
  const s = a.series[0];
  assert.equal(s.device, "DIAG:ENERGY:MEAS");
  assert.ok(s.points > 0 && s.points <= 2000);
  assert.ok(s.min <= s.mean && s.mean <= s.max);
  assert.equal(s.trend.length, 12);
});

Deno.test("logs rejects a bad time with a one-line error and exit 1", async () => {
  const r = await runAgent(["logs", "alarm", "--from", "yesterday"]);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^accel-agent: read_log failed: from "yesterday" is not a time: use ISO-8601/,
  );
});

Deno.test("usage errors exit 2 with one line", async () => {
  for (
    const [args, pattern] of [
      [["frobnicate"], /unknown command "frobnicate"/],
      [["get"], /get needs at least one device name/],
      [["logs", "archive"], /logs archive needs --device/],
      [["search", "X", "--from", "-1h"], /--from is not an option of "search"/],
      [["search", "X", "--limit", "zero"], /--limit "zero" must be a whole number/],
    ] as const
  ) {
    const r = await runAgent([...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, pattern);
    assert.equal(r.stderr.trim().split("\n").length, 1);
  }
});

Deno.test("a config file with a type error exits 2 naming the file, line and key", async () => {
  await using config = await tempConfig('[agent]\nmax_iterations = "many"\n');
  const path = config.path;
  const r = await runAgent(["get", "LINAC:BPM:01:X", "--config", path]);
  assert.equal(r.code, 2);
  assert.equal(
    r.stderr,
    `accel-agent: config error: ${path}:2: key agent.max_iterations: expected number, got the string "many"\n`,
  );
});

Deno.test("ACCEL_AGENT_CONFIG selects the config file; a missing one is an error", async () => {
  const r = await runAgent(["get", "LINAC:BPM:01:X"], {
    env: { ACCEL_AGENT_CONFIG: "/nonexistent/x.toml" },
  });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /\/nonexistent\/x\.toml: config file not found/);
});

Deno.test("start without a model endpoint says exactly what to set, and exits 2", async () => {
  const r = await runAgent(["start"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /set OPENAI_BASE_URL/);
  assert.match(r.stderr, /run deno task demo/);
});

Deno.test("--version and --help answer without a config", async () => {
  const v = await runAgent(["--version"], { env: { ACCEL_AGENT_CONFIG: "/nonexistent" } });
  assert.match(v.stdout, /^accel-agent \d+\.\d+\.\d+\n$/);
  const h = await runAgent(["--help"]);
  assert.equal(h.code, 0);
  assert.match(
    h.stdout,
    /Exit codes: 0 answered, 1 runtime failure, 2 usage or configuration error/,
  );
});

Deno.test("the version in deno.json and src/version.ts agree", async () => {
  const { VERSION } = await import("../../src/version.ts");
  const deno = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  assert.equal(deno.version, VERSION);
});
