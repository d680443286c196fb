/**
 * In a real terminal (tmux), the program started as a user starts it (the
 * launcher, the config's grants), on the fake EPICS facility with a
 * response file: the predicted line is above the approval question, and
 * when the machine does not move as the file predicts (the fake BPMs stand
 * still), the plan stops at the WAIT after its write and puts the corrector
 * back, which the gateway receives; the screen says both.
 */
import assert from "node:assert/strict";
import { call } from "../agent/subagents/harness.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { HAS_TMUX } from "../support/tmux.ts";
import { LAUNCHED, startRepl } from "../support/repl_session.ts";
import { UserSetup } from "../support/user_grants.ts";

const RESPONSE = {
  name: "ring orbit response",
  measured: new Date(Date.now() - 86_400_000).toISOString(),
  inputs: [{ device: "SR:COR:H01:SETPT", units: "A" }],
  outputs: [{ device: "SR:BPM:01:X", units: "mm" }],
  response: [[5]],
};

Deno.test({
  name:
    "REPL: the predicted line is above the question, and a machine that does not move as predicted stops the plan and restores",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using user = await UserSetup.start({
      extra:
        '[prediction]\nresponse_dir = "response"\n[prediction.watch."SR:BPM:*"]\nnoise = 0.01\n' +
        "[sandbox]\nprewarm = false\n",
    });
    await Deno.mkdir(`${user.dir}/response`);
    await Deno.writeTextFile(`${user.dir}/response/orbit.json`, JSON.stringify(RESPONSE));
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          {
            respond: call("propose_plan", {
              description: "trim H01 and let the orbit settle",
              actions: [
                { type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "trim" },
                { type: "wait", seconds: 1 },
              ],
            }),
          },
          {
            expect: { toolResultIncludes: ['"status":"failed"'] },
            respond: { text: "The orbit did not follow; H01 is back." },
          },
        ],
      },
    });
    await using term = await startRepl(llm.url, user.dir, [
      ...LAUNCHED,
      "--config",
      user.configPath,
    ]);
    await term.type("trim H01");
    await term.send("Enter");
    const asked = await term.waitFor(/Run this plan\?[\s\S]*none: reject it/);
    const rows = asked.split("\n");
    const predicted = rows.findIndex((r) =>
      r.startsWith("Predicted effect (a prediction: response files")
    );
    const question = rows.findLastIndex((r) => r.includes("Run this plan?"));
    assert.ok(predicted >= 0 && predicted < question, asked);
    await term.send("Up"); // from the default "none" to "all"
    await term.send("Enter");
    const done = await term.waitFor(/The orbit did not follow; H01 is back\./);
    assert.match(done, /plan failed: stopped by a deviation from the prediction, 1 restored/);
    assert.deepEqual(user.writes.map((w) => [w.pv, w.value]), [["SR:COR:H01:SETPT", 0.6], [
      "SR:COR:H01:SETPT",
      0.5,
    ]]);
  },
});
