/**
 * The linear model of a facility's response files: hostile files are
 * refused in one line naming the file and the fault (NaN, a value beyond
 * range, a matrix of the wrong shape, repeated or unknown names, units that
 * are not the control system's, a date in the future, a FIFO, a file too
 * large), and through preflight a refused file is "no prediction", never a
 * silent pass. A good file predicts each output's change along the plan,
 * names the written devices no file covers, and warns of a stale file.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../../src/adapters/clock.ts";
import { createSimulator } from "../../../src/adapters/simulator/mod.ts";
import { LinearResponse } from "../../../src/plan/predict/linear.ts";
import {
  MAX_RESPONSE_BYTES,
  parseResponseFile,
  ResponseFileError,
} from "../../../src/plan/predict/response_file.ts";
import { DEFAULT_PREDICTION_POLICY } from "../../../src/plan_model/prediction.ts";
import { loadLimits } from "../../../src/safety/limits.ts";
import { preflight } from "../../../src/plan/preflight.ts";
import { tempDir } from "../../support/temp.ts";
import { LIMITS_FILE } from "../fixture.ts";

const T0 = Date.parse("2026-11-20T12:00:00Z");
const COR = "RING:COR:H01:SETPT";
const BPM = "RING:BPM:01:X";

function file(over: Record<string, unknown> = {}) {
  return {
    name: "ring orbit response",
    measured: "2026-11-19T08:00:00Z",
    inputs: [{ device: COR, units: "mrad" }],
    outputs: [{ device: BPM, units: "mm" }],
    response: [[60]],
    ...over,
  };
}

Deno.test("a hostile response file is refused in one line naming the file and the fault", () => {
  const cases: [unknown, RegExp][] = [
    [
      file({ response: [["NaN"]] }),
      /response\[0\]\[0\] \(RING:BPM:01:X per RING:COR:H01:SETPT\) is "NaN", not a finite number/,
    ],
    [file({ response: [[1e308]] }), /is 1e\+308, not a finite number within ±1000000/],
    [file({ response: [[1, 2]] }), /response row 0 has 2 values for 1 inputs/],
    [file({ response: [] }), /response has 0 rows for 1 outputs/],
    [file({ measured: "2026-12-25T00:00:00Z" }), /measured 2026-12-25T00:00:00Z is in the future/],
    [file({ measured: "yesterday" }), /measured "yesterday" is not a date/],
    [
      file({
        outputs: [{ device: BPM, units: "mm" }, { device: BPM, units: "mm" }],
        response: [[1], [1]],
      }),
      /outputs names RING:BPM:01:X twice/,
    ],
    [file({ inputs: [{ device: "RING COR", units: "mrad" }] }), /inputs\.0\.device: /],
    [file({ extra: 1 }), /Unrecognized key|unrecognized key/i],
  ];
  for (const [body, want] of cases) {
    assert.throws(
      () => parseResponseFile("orbit.json", JSON.stringify(body), T0),
      (e: unknown) => {
        assert.ok(e instanceof ResponseFileError, String(e));
        assert.match(e.message, /^response file orbit\.json: /);
        assert.match(e.message, want);
        assert.ok(!e.message.includes("\n"), e.message);
        return true;
      },
    );
  }
  assert.throws(
    () => parseResponseFile("x.json", "{not json", T0),
    /response file x\.json: not JSON/,
  );
});

async function model(dir: string, files: Record<string, string>, maxAgeDays = 30) {
  for (const [name, text] of Object.entries(files)) {
    await Deno.writeTextFile(`${dir}/${name}`, text);
  }
  const clock = new ManualClock(T0);
  const sim = createSimulator({ seed: 1, clock });
  return {
    sim,
    linear: new LinearResponse({
      dir,
      cs: sim,
      watch: { "RING:BPM:*:X": { high: 1, hihi: 2, low: -1, lolo: -2, noise: 0.001 } },
      maxAgeDays,
      now: () => clock.now(),
    }),
  };
}

async function check(
  sim: ReturnType<typeof createSimulator>,
  linear: LinearResponse,
  step: number,
  extra: string[] = [],
) {
  const limits = await loadLimits(LIMITS_FILE);
  const live = (await sim.read([COR, ...extra])).map((r) => r.value as number);
  return await preflight({
    description: "steer",
    actions: [COR, ...extra].map((device, i) => ({
      type: "write" as const,
      device,
      value: (live[i] as number) + step,
      reason: "r",
    })),
  }, {
    cs: sim,
    limits,
    policy: {
      writesEnabled: true,
      maxScanPoints: 100,
      maxPlanSeconds: 600,
      limitsSource: "limits",
    },
    now: () => T0,
    prediction: { policy: DEFAULT_PREDICTION_POLICY, model: linear },
  });
}

Deno.test("a good file predicts the change from the file; a plan it predicts past MAJOR is refused; a device it does not cover is named", async () => {
  await using dir = await tempDir("accel-response-");
  const { sim, linear } = await model(dir.path, { "orbit.json": JSON.stringify(file()) });
  const [bpm] = await sim.read([BPM]);
  const big = await check(sim, linear, 0.035, ["RING:COR:H02:SETPT"]);
  assert.equal(big.ok, false);
  assert.ok(big.prediction?.status === "predicted", JSON.stringify(big.prediction));
  const moved = big.prediction.moved.find((d) => d.device === BPM);
  assert.ok(moved, JSON.stringify(big.prediction.moved));
  assert.ok(Math.abs((moved.extreme as number) - ((bpm?.value as number) + 60 * 0.035)) < 1e-9);
  assert.deepEqual(big.prediction.uncovered, ["RING:COR:H02:SETPT"]);
  assert.deepEqual(big.prediction.models.map((m) => [m.name, m.measured]), [[
    "orbit.json",
    "2026-11-19T08:00:00.000Z",
  ]]);
  assert.match(
    big.violations[0]?.message ?? "",
    /RING:BPM:01:X -?[\d.]+ → -?[\d.]+ mm, MAJOR \(HIHI ≥ 2\)/,
  );
  const small = await check(sim, linear, 0.001);
  assert.equal(small.ok, true, JSON.stringify(small.violations));
});

Deno.test("a file of wrong units, of unknown names, a FIFO or one too large is no prediction, said why, never a pass", async () => {
  const cases: [Record<string, string> | "fifo" | "huge", RegExp][] = [
    [
      { "orbit.json": JSON.stringify(file({ inputs: [{ device: COR, units: "A" }] })) },
      /gives RING:COR:H01:SETPT in A, the control system in mrad/,
    ],
    [{
      "orbit.json": JSON.stringify(file({ outputs: [{ device: "RING:BPM:99:Q", units: "mm" }] })),
    }, /names RING:BPM:99:Q, which the control system does not have/],
    ["fifo", /response file orbit\.json: .*FIFO/],
    ["huge", /response file orbit\.json: .*(larger|more than|too large|exceeds)/],
  ];
  for (const [files, want] of cases) {
    await using dir = await tempDir("accel-response-");
    if (files === "fifo") {
      const mk = await new Deno.Command("mkfifo", { args: [`${dir.path}/orbit.json`] }).output();
      assert.ok(mk.success);
    } else if (files === "huge") {
      await Deno.writeTextFile(`${dir.path}/orbit.json`, " ".repeat(MAX_RESPONSE_BYTES + 1));
    }
    const { sim, linear } = await model(dir.path, typeof files === "string" ? {} : files);
    const checked = await check(sim, linear, 0.001);
    assert.ok(checked.prediction?.status === "unavailable", JSON.stringify(checked.prediction));
    assert.match(checked.prediction.reason, /^the response model failed: /);
    assert.match(checked.prediction.reason, want);
    assert.equal(checked.ok, true, "a warning unless prediction is required");
  }
});

Deno.test("a file measured longer ago than max_age_days is used, with a warning", async () => {
  await using dir = await tempDir("accel-response-");
  const { sim, linear } = await model(dir.path, {
    "orbit.json": JSON.stringify(file({ measured: "2026-01-01T00:00:00Z" })),
  }, 30);
  const checked = await check(sim, linear, 0.001);
  assert.ok(checked.prediction?.status === "predicted");
  assert.match(
    checked.prediction.warnings.join("\n"),
    /orbit\.json was measured 323 days ago, longer than \[prediction\] max_age_days \(30\)/,
  );
});

Deno.test("the example response file in configs/examples parses", async () => {
  const path = new URL("../../../configs/examples/response/orbit.json", import.meta.url);
  const f = parseResponseFile("orbit.json", await Deno.readTextFile(path), Date.now());
  assert.deepEqual(f.inputs.map((i) => i.device), ["SR:COR:H01:SETPT", "SR:COR:H02:SETPT"]);
  assert.equal(f.response.length, 6);
});
