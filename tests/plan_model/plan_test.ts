import assert from "node:assert/strict";
import { parsePlan, planHash, scanPoints } from "../../src/plan_model/plan.ts";
import { readPlanFile, savePlan } from "../../src/plan/plan_file.ts";
import { tempDir } from "../support/temp.ts";

const FLAT = {
  description: "bump",
  actions: [
    { type: "write", device: "LINAC:COR:H01:SETPT", value: 0.1, reason: "r" },
    {
      type: "scan",
      writeDevice: "RF:PHASE:SETPT",
      start: -4,
      stop: -8,
      steps: 5,
      readDevices: ["DIAG:ENERGY:MEAS"],
      dwellSeconds: 1,
    },
  ],
};
const NESTED = {
  description: "bump",
  actions: [
    { type: "write", params: { reason: "r", value: 0.1, device: "LINAC:COR:H01:SETPT" } },
    {
      params: {
        write_device: "RF:PHASE:SETPT",
        start: -4,
        stop: -8,
        steps: 5,
        read_devices: ["DIAG:ENERGY:MEAS"],
        dwell_seconds: 1,
      },
      type: "scan",
    },
  ],
};

Deno.test("the nested shape normalises to the flat one, with the same hash", async () => {
  const flat = parsePlan(FLAT);
  const nested = parsePlan(NESTED);
  assert.ok(flat.ok && nested.ok);
  assert.deepEqual(nested.plan, flat.plan);
  assert.equal(await planHash(nested.plan), await planHash(flat.plan));
});

Deno.test("the hash covers content: key order does not matter, any change does", async () => {
  const a = parsePlan(FLAT);
  const b = parsePlan({ actions: FLAT.actions, description: "bump" });
  const c = parsePlan({ ...FLAT, description: "bump!" });
  assert.ok(a.ok && b.ok && c.ok);
  assert.equal(await planHash(a.plan), await planHash(b.plan));
  assert.notEqual(await planHash(a.plan), await planHash(c.plan));
  assert.match(await planHash(a.plan), /^[0-9a-f]{64}$/);
});

Deno.test("a plan in TOML and the same plan saved as JSON hash the same", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  await Deno.writeTextFile(
    `${dir}/p.toml`,
    `description = "bump"
[[actions]]
type = "write"
device = "LINAC:COR:H01:SETPT"
value = 0.1
reason = "r"
`,
  );
  const fromToml = await readPlanFile(`${dir}/p.toml`);
  const saved = await savePlan(dir, fromToml);
  assert.match(saved, /plan-[0-9a-f]{12}\.json$/);
  assert.equal(await planHash(await readPlanFile(saved)), await planHash(fromToml));
});

Deno.test("scan points include start and stop exactly", () => {
  assert.deepEqual(
    scanPoints({
      type: "scan",
      writeDevice: "X",
      start: 0,
      stop: 1,
      steps: 5,
      readDevices: ["Y"],
      dwellSeconds: 0,
    }),
    [0, 0.25, 0.5, 0.75, 1],
  );
  const odd = scanPoints({
    type: "scan",
    writeDevice: "X",
    start: 0.1,
    stop: 0.7,
    steps: 7,
    readDevices: ["Y"],
    dwellSeconds: 0,
  });
  assert.equal(odd.at(-1), 0.7);
});
