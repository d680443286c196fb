/**
 * The predicted effect as a user meets it, through the launcher on the
 * simulator: `plan show` of a plan of ring-corrector steps, each inside the
 * shipped limits, that the prediction says drives the orbit past MAJOR is
 * refused (exit 1) with the devices and predicted values named and the
 * prediction in `--json`, marked with its source; a small plan is shown
 * with the predicted line above the line that says what it writes.
 */
import assert from "node:assert/strict";
import { childEnv, runAgent } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";

const CORS = ["RING:COR:H01:SETPT", "RING:COR:H02:SETPT", "RING:COR:H03:SETPT"];

async function planFile(dir: string, env: Record<string, string>, step: number, name: string) {
  const got = await runAgent(["get", ...CORS, "--json"], { env });
  assert.equal(got.code, 0, got.stderr);
  const live: { device: string; value: number }[] = JSON.parse(got.stdout).readings;
  const file = `${dir}/${name}.json`;
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      description: "steer the ring",
      actions: live.map((r) => ({
        type: "write",
        device: r.device,
        value: Math.round((r.value + step) * 1e4) / 1e4,
        reason: "trim",
      })),
    }),
  );
  return file;
}

Deno.test("plan show refuses legal ring-corrector steps predicted past MAJOR, naming devices and values, and shows the prediction of a small plan above what it writes", async () => {
  await using tmp = await tempDir("accel-home-");
  const env = { ...childEnv({}), HOME: tmp.path };
  const big = await planFile(tmp.path, env, 0.03, "big");
  const refused = await runAgent(["plan", "show", big, "--json"], { env });
  assert.equal(refused.code, 1, refused.stderr);
  const out = JSON.parse(refused.stdout);
  assert.equal(out.ok, false);
  assert.ok(out.violations.length > 0);
  for (const v of out.violations) assert.equal(v.check, "predicted_effect", JSON.stringify(v));
  assert.match(out.violations[0].message, /MAJOR/);
  assert.match(out.violations[0].message, /[A-Z0-9:]+ -?[\d.]+ → -?[\d.]+/);
  assert.equal(out.prediction.status, "predicted");
  assert.match(out.prediction.source, /^simulator/);
  assert.ok(["MAJOR", "INVALID"].includes(out.prediction.worst) || out.prediction.beamLost);

  const small = await planFile(tmp.path, env, 0.0005, "small");
  const shown = await runAgent(["plan", "show", small], { env });
  assert.equal(shown.code, 0, shown.stdout + shown.stderr);
  const lines = shown.stdout.split("\n");
  const at = lines.findIndex((l) => l.startsWith("Predicted effect (a prediction: simulator"));
  const writes = lines.findIndex((l) => l.startsWith("Writes 3 devices"));
  assert.ok(at >= 0 && writes > at, shown.stdout);
});
