/**
 * The shipped examples run, as an operator runs them (through the launcher,
 * with the grants it computes): `configs/examples/` loaded, each pointed at
 * the test facility by a config that extends it (as a console's own file
 * would), and the read-only commands run against the fakes; the example
 * plans shown against their facility's limits. And the smallest facility
 * config — three lines — keeps the shipped limits, AGENT.md and scripts.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../../src/config/mod.ts";
import { startFakeEpics } from "../support/facility/fake_epics.ts";
import { FakeTangoRest } from "../support/facility/fake_tango_rest.ts";
import { FakeTango } from "../support/facility/fake_tango.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { ROOT } from "../support/run_agent.ts";
import { runAsUser } from "../support/user_grants.ts";
import { phaseAtOperatingPoint } from "../support/sim_phase.ts";
import { tempDir } from "../support/temp.ts";

const EXAMPLES = `${ROOT}/configs/examples`;
const CREDENTIALS = { EPICS_SERVICES_USER: "op", EPICS_SERVICES_PASSWORD: "secret" };

const ok = (r: { code: number; stderr: string }, what: string) =>
  assert.equal(r.code, 0, `${what}: ${r.stderr}`);

Deno.test("every example config and plan file loads", async () => {
  for (const name of ["epics-facility.toml", "tango-facility.toml"]) {
    const loaded = await loadConfig({
      path: `${EXAMPLES}/${name}`,
      env: { get: () => undefined },
      cwd: "/",
    });
    assert.equal(loaded.layers.length, 2, `${name} extends the shipped defaults`);
    assert.equal(loaded.config.safety.limits_file, `${EXAMPLES}/${name.split("-")[0]}-limits.toml`);
    assert.equal(loaded.config.agent.agent_md, `${ROOT}/AGENT.md`);
    assert.deepEqual(loaded.config.displays, []);
  }
  const plans = [...Deno.readDirSync(`${EXAMPLES}/plans`)].map((e) => e.name).sort();
  assert.deepEqual(plans, [
    "epics-corrector-trim.json",
    "linac-steering-trim.toml",
    "rf-phase-scan.json",
    "tango-quadrupole-trim.json",
  ]);
});

Deno.test("the simulated facility's example plans pass preflight with the shipped config", async () => {
  await phaseAtOperatingPoint();
  for (const plan of ["linac-steering-trim.toml", "rf-phase-scan.json"]) {
    const r = await runAsUser(["plan", "show", `${EXAMPLES}/plans/${plan}`, "--json"]);
    ok(r, plan);
    const shown = JSON.parse(r.stdout);
    assert.equal(shown.ok, true, `${plan}: ${JSON.stringify(shown.violations)}`);
    assert.match(shown.approval.token, /^apv2\./);
  }
});

Deno.test("the EPICS example runs the read-only commands against the facility's services", async () => {
  await using fake = startFakeEpics();
  await using dir = await tempDir("accel-agent-example-");
  const config = `${dir.path}/console.toml`;
  const urls = Object.entries(fake.urls).map(([k, v]) => `${k} = "${v}"`).join("\n");
  await Deno.writeTextFile(
    config,
    `extends = "${EXAMPLES}/epics-facility.toml"\n[epics]\n${urls}\n[state]\ndir = "state"\n`,
  );
  const run = (args: string[]) => runAsUser(["--config", config, ...args], { env: CREDENTIALS });
  const get = await run(["get", "SR:BPM:01:X", "SR:DCCT:CURRENT", "--json"]);
  ok(get, "get");
  assert.deepEqual(JSON.parse(get.stdout).readings.map((r: { device: string }) => r.device), [
    "SR:BPM:01:X",
    "SR:DCCT:CURRENT",
  ]);
  const search = await run(["search", "SR:COR:*", "--json"]);
  ok(search, "search");
  assert.ok(
    JSON.parse(search.stdout).devices.some((d: { name: string }) => d.name === "SR:COR:H01:SETPT"),
  );
  for (const source of ["elog", "alarm"]) {
    const logs = await run(["logs", source, "--from", "-30d", "--json"]);
    ok(logs, `logs ${source}`);
    assert.ok(JSON.parse(logs.stdout).entries.length > 0, `${source} entries`);
  }
  const archive = await run([
    "logs",
    "archive",
    "--device",
    "SR:DCCT:CURRENT",
    "--from",
    "-1h",
    "--json",
  ]);
  ok(archive, "logs archive");
  const scripts = await run(["scripts", "list", "--json"]);
  ok(scripts, "scripts list");
  assert.ok(
    JSON.parse(scripts.stdout).scripts.some((s: { name: string }) => s.name === "orbit_rms"),
  );
  const shown = await run([
    "plan",
    "show",
    `${EXAMPLES}/plans/epics-corrector-trim.json`,
    "--json",
  ]);
  ok(shown, "plan show");
  assert.equal(JSON.parse(shown.stdout).ok, true, shown.stdout);
  const show = await run(["config", "show"]);
  ok(show, "config show");
  assert.match(
    show.stdout,
    new RegExp(`^adapter = "epics"  # ${EXAMPLES}/epics-facility\\.toml:\\d+$`, "m"),
  );
  assert.match(show.stdout, /^username_env = "EPICS_SERVICES_USER"/m);
  const grants = JSON.parse((await run(["permissions", "--json"])).stdout);
  assert.ok(grants.env.includes("EPICS_SERVICES_PASSWORD"));
  assert.ok(grants.read.includes(`${EXAMPLES}/epics-facility.toml`), "the example is read");
  assert.ok(grants.read.includes(`${EXAMPLES}/epics-limits.toml`));
  assert.equal(grants.notFound, undefined, "no display launcher: the example has no catalogue");
});

Deno.test("the TANGO example reads attributes, searches the device list and shows its plan", async () => {
  await using rest = new FakeTangoRest();
  await using names = new FakeTango(30);
  await using dir = await tempDir("accel-agent-example-");
  const console = (url: string) =>
    `extends = "${EXAMPLES}/tango-facility.toml"\n[tango]\nrest_url = "${url}"\n` +
    `tango_host = "${rest.tangoHost}"\n[state]\ndir = "state"\n`;
  await Deno.writeTextFile(`${dir.path}/values.toml`, console(rest.restUrl));
  await Deno.writeTextFile(`${dir.path}/names.toml`, console(names.restUrl));
  const run = (config: string, args: string[]) =>
    runAsUser(["--config", `${dir.path}/${config}`, ...args]);
  const get = await run("values.toml", ["get", "sys/tg_test/1/double_scalar", "--json"]);
  ok(get, "get");
  assert.equal(JSON.parse(get.stdout).readings[0].value, 0.5);
  const shown = await run("values.toml", [
    "plan",
    "show",
    `${EXAMPLES}/plans/tango-quadrupole-trim.json`,
    "--json",
  ]);
  ok(shown, "plan show");
  assert.equal(JSON.parse(shown.stdout).ok, true, shown.stdout);
  const logs = await run("values.toml", ["logs", "elog"]);
  assert.equal(logs.code, 1);
  assert.match(logs.stderr, /TANGO REST .*no e-log|e-log/i);
  const search = await run("names.toml", ["search", "sr/bpm/c02-*", "--json", "--limit", "5"]);
  ok(search, "search");
  assert.equal(JSON.parse(search.stdout).devices.length, 5);
});

Deno.test("a facility config of three lines runs with the shipped limits, AGENT.md and scripts", async () => {
  await using fake = startFakeEpics();
  await using llm = await startScriptedLlm({ scenario: { turns: [{ respond: { text: "ok" } }] } });
  await using dir = await tempDir("accel-agent-three-");
  const config = `${dir.path}/facility.toml`;
  await Deno.writeTextFile(
    config,
    `llm.base_url = "${llm.url}"\nfacility.adapter = "epics"\nepics.pvws_url = "${fake.urls.pvws_url}"\n`,
  );
  const run = (args: string[]) => runAsUser(["--config", config, ...args]);
  ok(await run(["get", "SR:BPM:01:X"]), "get");
  const scripts = await run(["scripts", "list", "--json"]);
  ok(scripts, "scripts list");
  assert.ok(JSON.parse(scripts.stdout).scripts.length >= 3, "the shipped scripts");
  // The shipped limits are the ones checked: the simulator's names are in them, this one is not.
  const plan = `${dir.path}/trim.json`;
  await Deno.writeTextFile(
    plan,
    JSON.stringify({
      description: "trim",
      actions: [{ type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "trim" }],
    }),
  );
  const shown = await run(["plan", "show", plan, "--json"]);
  assert.match(
    JSON.stringify(JSON.parse(shown.stdout).violations),
    new RegExp(`SR:COR:H01:SETPT has no entry in ${ROOT}/configs/safety_limits\\.toml`),
  );
  // The system prompt holds the shipped AGENT.md.
  const asked = await run(["ask", "--json", "hello"]);
  ok(asked, "ask");
  const system = String(llm.requests[0]?.body.messages[0]?.content);
  const agentMd = await Deno.readTextFile(`${ROOT}/AGENT.md`);
  assert.ok(system.includes(agentMd.trim().split("\n")[0] as string), "AGENT.md's first line");
  assert.ok(system.length > agentMd.length, `${system.length} characters`);
});

Deno.test("a config naming a limits file that is not there stops at start with one line", async () => {
  await using dir = await tempDir("accel-agent-missing-");
  const config = `${dir.path}/facility.toml`;
  await Deno.writeTextFile(config, '[safety]\nlimits_file = "facility-limits.toml"\n');
  for (
    const args of [["get", "RF:PHASE:SETPT"], [
      "plan",
      "show",
      `${EXAMPLES}/plans/rf-phase-scan.json`,
    ]]
  ) {
    const r = await runAsUser(["--config", config, ...args]);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, "");
    assert.equal(
      r.stderr,
      `accel-agent: config error: [safety] limits_file ${dir.path}/facility-limits.toml does not exist ` +
        `(set in ${config}:2); create it or change [safety] limits_file\n`,
    );
  }
});
