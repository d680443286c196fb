/**
 * Direct commands tell scripts the truth: a command that produced nothing
 * but errors (or lost any device) exits 1, with one line per failure on
 * stderr, and a service's garbage is named as the service's answer.
 */
import assert from "node:assert/strict";
import { startFakeEpics } from "../support/facility/fake_epics.ts";
import { FakeHttp } from "../support/facility/fake_http.ts";
import { runAgent, tempConfig } from "../support/run_agent.ts";

const CODE_WORDS = /is not a function|Unexpected token|Cannot read|internal error|\bat file:/;

Deno.test("logs archive where every series failed exits 1 with each device's reason", async () => {
  await using fake = startFakeEpics();
  await using config = await tempConfig(fake.config());
  const args = [
    "logs",
    "archive",
    "--device",
    "NO:SUCH:PV",
    "--device",
    "NOR:THIS",
    "--from",
    "-1h",
  ];
  const human = await runAgent([...args, "--config", config.path]);
  assert.equal(human.code, 1, human.stdout);
  assert.match(human.stderr, /^accel-agent: NO:SUCH:PV: not archived/m);
  assert.match(human.stderr, /^accel-agent: NOR:THIS: not archived/m);
  const json = await runAgent([...args, "--config", config.path, "--json"]);
  assert.equal(json.code, 1);
  const out = JSON.parse(json.stdout);
  assert.equal(out.series.length, 2);
  assert.ok(out.series.every((s: { error?: string }) => /not archived/.test(s.error ?? "")));
});

Deno.test("logs archive with one series lost exits 1 and still prints the others", async () => {
  await using fake = startFakeEpics();
  await using config = await tempConfig(fake.config());
  const r = await runAgent([
    "logs",
    "archive",
    "--device",
    "SR:DCCT:CURRENT",
    "--device",
    "NO:SUCH:PV",
    "--from",
    "-1h",
    "--config",
    config.path,
    "--json",
  ]);
  assert.equal(r.code, 1);
  const out = JSON.parse(r.stdout);
  assert.equal(out.series[0].units, "mA");
  assert.match(out.series[1].error, /not archived/);
});

Deno.test("an archiver answering HTTP 500 pages fails logs archive with exit 1, naming the archiver", async () => {
  await using fake = startFakeEpics();
  fake.archiver.faults.fail500 = true;
  await using config = await tempConfig(fake.config());
  const r = await runAgent([
    "logs",
    "archive",
    "--device",
    "SR:DCCT:CURRENT",
    "--from",
    "-1h",
    "--config",
    config.path,
  ]);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /SR:DCCT:CURRENT: archiver answered HTTP 500 for \/data\/getData.json with an HTML page/,
  );
  assert.doesNotMatch(r.stderr, /<html|<body/);
});

/** An `[epics]` config whose every HTTP service is `server`. */
function garbageConfig(server: FakeHttp, pvws: string): string {
  const o = server.origin;
  return `[facility]\nadapter = "epics"\n\n[epics]\npvws_url = "${pvws}"\nread_timeout_ms = 400\n` +
    `archiver_url = "${o}/retrieval"\nchannelfinder_url = "${o}/ChannelFinder/resources"\n` +
    `olog_url = "${o}/Olog"\nalarm_logger_url = "${o}/alarms"\n`;
}

Deno.test("search, logs elog and logs alarm on services answering garbage exit 1 with one line each", async () => {
  await using fake = startFakeEpics();
  await using server = new FakeHttp((url) =>
    url.pathname.endsWith("/count")
      ? new Response("12")
      : url.pathname.includes("ChannelFinder")
      ? Response.json({ channels: [] })
      : url.pathname.includes("Olog")
      ? new Response("<html><body>Please log in</body></html>")
      : Response.json([{ pv: 7 }])
  );
  await using config = await tempConfig(garbageConfig(server, fake.pvws.url));
  const cases: [string[], RegExp][] = [
    [
      ["search", "SR:*"],
      /^accel-agent: search_device failed: ChannelFinder at http:\S+ answered an object, expected a list of channels with names$/,
    ],
    [
      ["logs", "elog", "--from", "-1d"],
      /^accel-agent: read_log failed: Olog at http:\S+ answered an HTML page \(status 200\) where JSON was expected/,
    ],
    [
      ["logs", "alarm", "--from", "-1d"],
      /^accel-agent: read_log failed: alarm logger at http:\S+ answered a list whose \[0\]\.pv is the number 7, expected a list of alarm messages$/,
    ],
  ];
  for (const [args, expected] of cases) {
    const r = await runAgent([...args, "--config", config.path]);
    assert.equal(r.code, 1, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stdout, "");
    assert.match(r.stderr.trim(), expected);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.doesNotMatch(r.stderr, CODE_WORDS);
  }
});

Deno.test("get where every device failed exits 1 and prints no table", async () => {
  await using fake = startFakeEpics();
  await using config = await tempConfig(fake.config({ read_timeout_ms: 300 }));
  const r = await runAgent(["get", "NO:SUCH:A", "NO:SUCH:B", "--config", config.path]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /^accel-agent: NO:SUCH:A: /m);
  assert.match(r.stderr, /^accel-agent: NO:SUCH:B: /m);
});
