/**
 * The REPL announces a background sub-agent that finishes while the operator
 * is at the prompt, and /agents shows its result.
 */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { HAS_TMUX } from "../support/tmux.ts";
import { startRepl } from "../support/repl_session.ts";
import { call, routed } from "../agent/subagents/harness.ts";
import { tempDir } from "../support/temp.ts";

Deno.test({
  name:
    "REPL: a background sub-agent's end is announced at the prompt and /agents shows its result",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using llm = await startScriptedLlm({
      scenario: routed(3, (w) => {
        if (w.agent === "device_search") {
          // Ends well after the parent's answer, while the operator is at the prompt.
          return {
            fault: "delay",
            ms: 1_500,
            then: call("return", { devices: ["LINAC:GUN:CHARGE"], total: 1, writable: [] }),
          };
        }
        return w.step === 0
          ? call("spawn_subagent", {
            agent: "device_search",
            task: "the gun charge monitor",
            background: true,
          })
          : { text: "Searching in the background." };
      }),
    });
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path);
    await term.type("find the gun charge monitor");
    await term.send("Enter");
    await term.waitFor(/Searching in the background\.[\s\S]*accel›\s*$/m);
    await term.waitFor(
      /⚑ background sub-agent agent-1 \(device_search\) done[\s\S]*accel›\s*$/m,
      10_000,
    );
    await term.type("/agents");
    await term.send("Enter");
    const screen = await term.waitFor(
      /agent-1 device_search[\s\S]*LINAC:GUN:CHARGE[\s\S]*accel›\s*$/m,
    );
    assert.match(screen, /level 2, from operator/);
    await term.type("/quit");
    await term.send("Enter");
    await term.waitFor(/\[exit 0\]/);
    assert.deepEqual(llm.failures, []);
  },
});
