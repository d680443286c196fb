/**
 * The schemas of the agent tools and ask_user, as the model sees them (the
 * spawn description lists the shipped agents). Update with
 * `deno test -A tests/tools/agent_tool_schemas_test.ts -- --update`.
 */
import assert from "node:assert/strict";
import { TreeBudget } from "../../src/agent/subagents/budget.ts";
import { SubagentManager } from "../../src/agent/subagents/manager.ts";
import { loadAgentDefinitions } from "../../src/app/subagent_wiring.ts";
import { agentTools } from "../../src/tools/agent_tools.ts";
import { askUserTool } from "../../src/tools/ask_user.ts";
import { ALL_TOOLS } from "../../src/tools/mod.ts";

const SNAPSHOT = new URL("./__snapshots__/agent_tool_schemas.json", import.meta.url);
const AGENTS = new URL("../../configs/agents/", import.meta.url).pathname;

Deno.test("the agent tools' and ask_user's schemas match the snapshot, every parameter described", async () => {
  const manager = new SubagentManager({
    definitions: await loadAgentDefinitions([AGENTS], ALL_TOOLS),
    buildTools: () => {
      throw new Error("unused");
    },
    modelFor: () => Promise.reject(new Error("unused")),
    budget: new TreeBudget(1, 1),
    now: () => 0,
  });
  const tools = [
    ...agentTools(manager, {
      id: "operator",
      level: 1,
      model: () => Promise.reject(new Error("unused")),
    }),
    askUserTool(() => undefined),
  ];
  const text = `${
    JSON.stringify(
      tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
      null,
      2,
    )
  }\n`;
  if (Deno.args.includes("--update")) await Deno.writeTextFile(SNAPSHOT, text);
  assert.equal(text, await Deno.readTextFile(SNAPSHOT));
  for (const t of tools) {
    const props = (t.parameters.properties ?? {}) as Record<string, { description?: string }>;
    for (const [name, schema] of Object.entries(props)) {
      assert.ok(schema.description, `${t.name}.${name} has no description`);
    }
  }
});
