/**
 * Against a real model, only when asked: `ACCEL_AGENT_LIVE=1` with
 * `OPENAI_BASE_URL` and/or `OPENAI_API_KEY` (and optionally
 * `ACCEL_AGENT_MODEL`) set. Skipped otherwise; CI has no model.
 */
import assert from "node:assert/strict";
import { runAgent } from "../support/run_agent.ts";

const env = Deno.env.toObject();
const live = env.ACCEL_AGENT_LIVE === "1" && Boolean(env.OPENAI_BASE_URL || env.OPENAI_API_KEY);
const modelEnv = Object.fromEntries(
  ["OPENAI_BASE_URL", "OPENAI_API_KEY", "ACCEL_AGENT_MODEL"].filter((k) => env[k]).map((
    k,
  ) => [k, env[k] as string]),
);

Deno.test({
  name: "live: a real model reads LINAC:BPM:01:X with get_parameter and answers",
  ignore: !live,
  async fn() {
    const r = await runAgent([
      "ask",
      "--json",
      "What is the horizontal position at LINAC:BPM:01:X?",
    ], {
      env: modelEnv,
    });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.ok(
      out.tool_calls.some((c: { name: string; ok: boolean }) => c.name === "get_parameter" && c.ok),
    );
    assert.match(out.answer, /mm/);
  },
});
