/** `[simulator] devices` end to end: the program reads, writes and searches a grown facility. */
import assert from "node:assert/strict";
import { runAgent, tempConfig } from "../support/run_agent.ts";

Deno.test("get and search reach generated arcs when [simulator] devices grows the facility", async () => {
  await using config = await tempConfig("[simulator]\ndevices = 20000\n");
  const got = await runAgent([
    "get",
    "ARC003:BPM:05:X",
    "ARC003:ENERGY:MEAS",
    "RING:BPM:05:X",
    "--json",
    "--config",
    config.path,
  ]);
  assert.equal(got.code, 0, got.stderr);
  const readings = JSON.parse(got.stdout).readings as {
    device: string;
    value: unknown;
    units: string;
  }[];
  assert.deepEqual(readings.map((r) => [r.device, typeof r.value, r.units]), [
    ["ARC003:BPM:05:X", "number", "mm"],
    ["ARC003:ENERGY:MEAS", "number", "MeV"],
    ["RING:BPM:05:X", "number", "mm"],
  ]);
  const found = await runAgent([
    "search",
    "ARC003:COR:H*:SETPT",
    "--limit",
    "3",
    "--json",
    "--config",
    config.path,
  ]);
  assert.equal(found.code, 0, found.stderr);
  const page = JSON.parse(found.stdout);
  assert.equal(page.total, 40);
  assert.equal(page.devices[0].name, "ARC003:COR:H01:SETPT");
});

Deno.test("a [simulator] devices smaller than the default facility stops the program with one line naming the key", async () => {
  await using config = await tempConfig("[simulator]\ndevices = 100\n");
  const r = await runAgent(["get", "LINAC:BPM:01:X", "--config", config.path]);
  assert.equal(r.code, 2);
  assert.equal(
    r.stderr,
    `accel-agent: config error: ${config.path}:2: key simulator.devices: must be at least 3044, got number 100\n`,
  );
});
