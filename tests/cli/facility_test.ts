/**
 * The no-LLM commands end to end against the EPICS fakes and a real
 * TangoTest, with --config pointing at them; and the grants that follow the
 * config: `permissions`, the launcher, and Deno refusing other hosts.
 */
import assert from "node:assert/strict";
import { startFakeEpics } from "../support/facility/fake_epics.ts";
import { startFakePvws } from "../support/facility/fake_pvws.ts";
import { HAS_TANGO, startTango } from "../support/facility/tango_server.ts";
import { childEnv, MAIN, ROOT, runAgent, tempConfig } from "../support/run_agent.ts";

Deno.test("EPICS: get, search and logs archive|elog|alarm work against the fakes", async () => {
  await using fake = startFakeEpics();
  await using config = await tempConfig(fake.config({ read_timeout_ms: 500 }));
  const get = await runAgent(["get", "SR:BPM:01:X", "SR:MODE", "--config", config.path, "--json"]);
  assert.equal(get.code, 0, get.stderr);
  const g = JSON.parse(get.stdout);
  assert.deepEqual(g.readings.map((r: { device: string }) => r.device), ["SR:BPM:01:X", "SR:MODE"]);
  assert.equal(g.readings[0].units, "mm");
  assert.equal(g.readings[1].value, "On");

  const search = await runAgent([
    "search",
    "SR:BPM:*:X",
    "--limit",
    "5",
    "--config",
    config.path,
    "--json",
  ]);
  assert.equal(search.code, 0, search.stderr);
  const s = JSON.parse(search.stdout);
  assert.equal(s.total, 24);
  assert.equal(s.next_offset, 5);

  const archive = await runAgent([
    "logs",
    "archive",
    "--device",
    "SR:DCCT:CURRENT",
    "--from",
    "-6h",
    "--config",
    config.path,
    "--json",
  ]);
  assert.equal(archive.code, 0, archive.stderr);
  const a = JSON.parse(archive.stdout).series[0];
  assert.equal(a.units, "mA");
  assert.ok(a.points > 1000 && a.points <= 2000);

  for (const source of ["elog", "alarm"]) {
    const r = await runAgent(["logs", source, "--from", "-1d", "--config", config.path, "--json"]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(JSON.parse(r.stdout).entries.length > 0, source);
  }
  const human = await runAgent([
    "logs",
    "alarm",
    "--from",
    "-1d",
    "--severity",
    "MAJOR",
    "--config",
    config.path,
  ]);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /SR:\S+ MAJOR/);
});

Deno.test("EPICS: a gateway that is down fails get with one line per device, within the timeout", async () => {
  await using fake = startFakeEpics();
  await fake.pvws.close();
  await using config = await tempConfig(fake.config({ connect_timeout_ms: 500, pvget: "off" }));
  const r = await runAgent(["get", "SR:BPM:01:X", "SR:BPM:02:X", "--config", config.path]);
  assert.equal(r.code, 1);
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 2);
  for (const line of lines) {
    assert.match(
      line,
      /^accel-agent: SR:BPM:0\d:X: pvws gateway at ws:\/\/127\.0\.0\.1:\d+\/pvws\/pv /,
    );
  }
});

Deno.test("EPICS: logs archive shows a value set before the range with the time it was set", async () => {
  await using fake = startFakeEpics();
  await using config = await tempConfig(fake.config({ read_timeout_ms: 500 }));
  const args = ["logs", "archive", "--device", "SR:OPERATOR:MSG", "--from", "-1h"];
  const json = await runAgent([...args, "--config", config.path, "--json"]);
  assert.equal(json.code, 0, json.stderr);
  const [series] = JSON.parse(json.stdout).series;
  // The fake archives the message once, on 2020-01-01: the appliance sends that sample.
  assert.equal(series.points, 1);
  assert.deepEqual(series.last.value, "Beam for users");
  assert.equal(series.last.since, "2020-01-01T00:00:00.000Z");
  assert.equal(series.first.time, JSON.parse(json.stdout).from);
  const human = await runAgent([...args, "--config", config.path], { env: { NO_COLOR: "1" } });
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /Beam for users @ \S+ \(set 2020-01-01T00:00:00\.000Z\)/);
});

Deno.test("EPICS: an archiver answering 500 fails logs archive with a clear line", async () => {
  await using fake = startFakeEpics();
  fake.archiver.faults.fail500 = true;
  await using config = await tempConfig(fake.config());
  const r = await runAgent(["logs", "archive", "--device", "SR:BPM:01:X", "--config", config.path]);
  assert.equal(r.code, 1, "every series failed: nothing but errors is a failure");
  assert.match(r.stdout, /archiver answered HTTP 500/);
  assert.match(r.stderr, /^accel-agent: SR:BPM:01:X: archiver answered HTTP 500/m);
});

Deno.test({
  name:
    "TANGO: get, search and device state work against a real TangoTest; logs say there are none",
  ignore: !HAS_TANGO && !Deno.env.get("CI"),
  async fn() {
    await using tango = await startTango();
    await using config = await tempConfig(tango.config());
    const opts = { env: tango.env };
    const get = await runAgent([
      "get",
      "sys/tg_test/1/string_scalar",
      "sys/tg_test/1/double_scalar",
      "sys/tg_test/1",
      "--config",
      config.path,
      "--json",
    ], opts);
    assert.equal(get.code, 0, get.stderr);
    const g = JSON.parse(get.stdout);
    assert.equal(g.readings[0].value, "Default string");
    assert.equal(typeof g.readings[1].value, "number");
    assert.equal(g.readings[2].value, "RUNNING");

    const bad = await runAgent(
      ["get", "sys/tg_test/1/throw_exception", "--config", config.path],
      opts,
    );
    assert.equal(bad.code, 1);
    assert.match(
      bad.stderr,
      /throw_exception: exception test: here is the exception you requested/,
    );

    const search = await runAgent(
      [
        "search",
        "sys/tg_test/1/*_scalar",
        "--writable",
        "--limit",
        "3",
        "--config",
        config.path,
        "--json",
      ],
      opts,
    );
    assert.equal(search.code, 0, search.stderr);
    const s = JSON.parse(search.stdout);
    assert.ok(s.total >= 8);
    assert.ok(s.devices.every((d: { writable: boolean }) => d.writable));

    const noCredentials = await runAgent([
      "get",
      "sys/tg_test/1/string_scalar",
      "--config",
      config.path,
    ]);
    assert.equal(noCredentials.code, 1);
    assert.match(noCredentials.stderr, /HTTP 401.*username_env and password_env/);

    const logs = await runAgent(["logs", "elog", "--config", config.path], opts);
    assert.equal(logs.code, 1);
    assert.match(logs.stderr, /the TANGO adapter has no e-log/);
  },
});

Deno.test("permissions prints the grant flags with the hosts of the model and the facility services", async () => {
  await using fake = startFakeEpics();
  await using config = await tempConfig(
    `[llm]\nbase_url = "http://127.0.0.1:11434/v1"\n\n${fake.config()}`,
  );
  const r = await runAgent(["permissions", "--config", config.path]);
  assert.equal(r.code, 0, r.stderr);
  const net = /--allow-net=(\S+)/.exec(r.stdout)?.[1]?.split(",") ?? [];
  const ports = [fake.pvws, fake.archiver, fake.channelfinder, fake.olog, fake.alarm].map((s) =>
    new URL("url" in s ? s.url : s.origin).port
  );
  assert.deepEqual(net, ["127.0.0.1:11434", ...ports.map((p) => `127.0.0.1:${p}`)]);
  // Every grant is a list; none is bare (the env list is quoted: it holds `*` prefixes).
  assert.match(
    r.stdout,
    /^--no-prompt --allow-read=\S+ --allow-write=\S+ '--allow-env=\S+' --ignore-env --allow-sys=hostname,uid --allow-run=\S+ --allow-net=\S+\n$/,
  );
});

Deno.test("a request to a host outside the config is refused by Deno, not by our code", async () => {
  await using fake = startFakeEpics();
  await using other = startFakePvws({ pvs: { "SR:BPM:01:X": { value: 1, units: "mm" } } });
  await using granted = await tempConfig(fake.config());
  const flags = JSON.parse(
    (await runAgent(["permissions", "--json", "--config", granted.path])).stdout,
  )
    .flags as string[];
  const run = async (config: string) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...flags, MAIN, "get", "SR:BPM:01:X", "--config", config],
      cwd: ROOT,
      clearEnv: true,
      env: childEnv(),
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
  };
  assert.equal((await run(granted.path)).code, 0, "the configured gateway is reachable");
  // Same grants, but the config now names another gateway: Deno itself refuses the connection.
  await Deno.writeTextFile(granted.path, fake.config({ pvws_url: other.url, pvget: "off" }));
  const refused = await run(granted.path);
  assert.equal(refused.code, 1);
  const port = new URL(other.url).port;
  assert.match(refused.stderr, new RegExp(`Requires net access to "127\\.0\\.0\\.1:${port}"`));
  assert.equal(other.stats.messages, 0, "nothing reached the other host");
});

Deno.test("the agent task's launcher runs main.ts with the config's grants and passes the exit code", async () => {
  await using fake = startFakeEpics();
  await using config = await tempConfig(fake.config());
  const launch = (args: string[]) =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-read", "--allow-env", "--allow-run", `${ROOT}/launch.ts`, ...args],
      cwd: ROOT,
      clearEnv: true,
      env: childEnv(),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  const ok = await launch(["get", "SR:DCCT:CURRENT", "--config", config.path, "--json"]);
  assert.equal(ok.code, 0, new TextDecoder().decode(ok.stderr));
  assert.equal(JSON.parse(new TextDecoder().decode(ok.stdout)).readings[0].value, 301.5);
  const usage = await launch(["frobnicate"]);
  assert.equal(usage.code, 2);
});
