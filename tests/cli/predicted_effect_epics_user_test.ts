/**
 * On the fake EPICS facility, through the launcher with the config's own
 * grants: with an orbit response file in `[prediction] response_dir`, the
 * plan table shows the prediction from the file (its name, the date
 * measured and its age), a plan the file predicts past the BPM's HIHI (the
 * limit the gateway serves) is refused with the device and value named and
 * nothing reaches the gateway, and a damaged file is one line saying so.
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";

const RESPONSE = {
  name: "ring orbit response",
  measured: new Date(Date.now() - 2 * 86_400_000).toISOString(),
  inputs: [{ device: "SR:COR:H01:SETPT", units: "A" }],
  outputs: [{ device: "SR:BPM:01:X", units: "mm" }, { device: "SR:BPM:02:X", units: "mm" }],
  response: [[5], [-0.5]],
};

const write = (value: number) => ({
  description: "trim H01",
  actions: [{ type: "write", device: "SR:COR:H01:SETPT", value, reason: "trim" }],
});

Deno.test("with a response file on the fake EPICS facility the table shows the file's prediction and a plan it predicts past MAJOR is refused", async () => {
  await using user = await UserSetup.start({ extra: '[prediction]\nresponse_dir = "response"\n' });
  await Deno.mkdir(`${user.dir}/response`);
  await Deno.writeTextFile(`${user.dir}/response/orbit.json`, JSON.stringify(RESPONSE));
  // SR:COR:H01:SETPT reads 0.5 A; 0.5 A more moves SR:BPM:01:X by 2.5 mm, past its HIHI of 2 mm.
  const big = await user.plan(write(1.0), "big.json");
  const refused = await user.run(["plan", "show", big, "--json"]);
  assert.equal(refused.code, 1, refused.stderr);
  const out = JSON.parse(refused.stdout);
  assert.deepEqual(out.violations.map((v: { check: string }) => v.check), ["predicted_effect"]);
  assert.match(
    out.violations[0].message,
    /SR:BPM:01:X 0\.0084\d → 2\.51 mm, MAJOR \(HIHI ≥ 2\) at actions\[0\]/,
  );
  assert.equal(out.prediction.source, `response files in ${user.dir}/response`);
  assert.equal(out.prediction.models[0].name, "orbit.json");

  const small = await user.plan(write(0.6), "small.json");
  const shown = await user.run(["plan", "show", small]);
  assert.equal(shown.code, 0, shown.stdout + shown.stderr);
  assert.match(
    shown.stdout.replace(/\n {2}/g, " "),
    /Predicted effect \(a prediction: response files in .*\/response \(orbit\.json measured [0-9T:.-]+Z, 2 days old\), made [^)]+; 2 devices watched\): no watched device worse than now; moves most: SR:BPM:01:X 0\.0084\d → 0\.508 mm; SR:BPM:02:X 0\.00909 → -0\.0409 mm\./,
  );
  assert.deepEqual(user.writes, []);

  await Deno.writeTextFile(
    `${user.dir}/response/orbit.json`,
    JSON.stringify({ ...RESPONSE, response: [[5], ["NaN"]] }),
  );
  const damaged = await user.run(["plan", "show", small]);
  assert.equal(damaged.code, 0, damaged.stderr);
  assert.match(
    damaged.stdout.replace(/\n {2}/g, " "),
    /No prediction of this plan's effect: the response model failed: response file orbit\.json: response\[1\]\[0\] \(SR:BPM:02:X per SR:COR:H01:SETPT\) is "NaN"/,
  );
});
