/**
 * A facility's hooks cannot be gone round by delegating: a sub-agent's tool
 * calls pass the same `before_tool` veto as the operator's agent's.
 */
import assert from "node:assert/strict";
import { commandHooks, type HookRunner } from "../../../src/agent/hooks.ts";
import { startScriptedLlm } from "../../support/scripted_llm.ts";
import { call, routed, setup } from "./harness.ts";

Deno.test("a sub-agent's tool call is vetoed by the facility's before_tool hook and never runs", async () => {
  const asked: string[] = [];
  const run: HookRunner = (_command, stdin) => {
    asked.push(JSON.parse(stdin).tool);
    return Promise.resolve({ status: "exited", code: 1, stderr: "no searches today" });
  };
  const hooks = commandHooks(
    {
      before_tool: [{
        name: "policy",
        command: ["/site/policy"],
        tools: ["search_*"],
        timeout_s: 5,
      }],
      after_tool: [],
    },
    run,
    () => "alice",
  );
  let subagentSaw = "";
  await using llm = await startScriptedLlm({
    scenario: routed(4, (w) => {
      if (w.agent === "device_search") {
        if (w.step === 0) return call("search_device", { pattern: "SR:COR:*" });
        subagentSaw = w.lastTool;
        return call("fail", { reason: "vetoed" });
      }
      if (w.step === 0) {
        return call("spawn_subagent", { agent: "device_search", task: "the SR correctors" });
      }
      return { text: "could not search" };
    }),
  });
  await using t = await setup(llm.url, { hooks });
  const events = await t.ask("Find the SR correctors");
  assert.equal(events.at(-1)?.type, "turn_complete");
  assert.deepEqual(asked, ["search_device"], "spawn_subagent is not a search: not asked");
  assert.equal(
    subagentSaw,
    JSON.stringify({ error: "vetoed by facility hook policy: no searches today" }),
  );
});
