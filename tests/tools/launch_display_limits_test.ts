/**
 * `launch_display` against a hostile scripted model: thousands of calls in
 * one message open each display once and only a few in a turn; a display
 * opened is not opened again within the window, and is after it.
 */
import assert from "node:assert/strict";
import type { AgentEvent } from "../../src/agent/events.ts";
import { runTurn } from "../../src/agent/loop.ts";
import { Session } from "../../src/agent/session.ts";
import { ConfigSchema } from "../../src/config/schema.ts";
import { DisplayCatalogue } from "../../src/displays/catalogue.ts";
import { launchDisplayTool, LaunchGate } from "../../src/tools/launch_display.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { Simulator } from "../../src/adapters/simulator/mod.ts";
import { type Respond, startScriptedLlm } from "../support/scripted_llm.ts";
import { client } from "../agent/subagents/harness.ts";

const NAMES = ["orbit", "rf", "vacuum", "magnets", "injector"];

function displays(gate: LaunchGate) {
  const config = ConfigSchema.parse({
    displays: NAMES.map((name) => ({ name, file: `${name}.bob` })),
  });
  const started: string[][] = [];
  const deps = {
    catalogue: DisplayCatalogue.of(config, "/site", "/home/op"),
    spawn: (argv: string[]) => {
      started.push(argv);
      return { argv, pid: 1000 + started.length };
    },
    gate,
  };
  const registry = new ToolRegistry(
    [launchDisplayTool(() => deps)],
    { cs: new Simulator(), now: () => 0 },
    { maxOutputChars: 2_000, timeoutMs: 10_000 },
  );
  return { registry, started };
}

/** `n` launch_display calls per display name, interleaved, in one message. */
function flood(n: number): Respond {
  return {
    toolCalls: Array.from({ length: n * NAMES.length }, (_, i) => ({
      name: "launch_display",
      arguments: { display: NAMES[i % NAMES.length] as string },
    })),
    chunkSize: 4096,
  };
}

async function turn(registry: ToolRegistry, session: Session, respond: Respond) {
  await using llm = await startScriptedLlm({
    scenario: { turns: [{ respond }, { respond: { text: "opened" } }] },
  });
  const events: AgentEvent[] = [];
  for await (
    const ev of runTurn({
      session,
      input: "open the screens",
      model: client(llm.url),
      tools: registry,
      systemPrompt: "system",
      maxIterations: 5,
      signal: new AbortController().signal,
      // No cap on the calls themselves: the display's own limits are under test.
      toolCalls: { perMessage: 100_000, perTurn: 100_000 },
    })
  ) events.push(ev);
  return events;
}

Deno.test("2,000 launch_display calls of each display in one message open three displays, each once", async () => {
  let now = 0;
  const gate = new LaunchGate({ perTurn: 3, relaunchMs: 30_000 }, () => now);
  const { registry, started } = displays(gate);
  const session = new Session("s", 0);
  const events = await turn(registry, session, flood(2_000));
  assert.deepEqual(started.map((argv) => argv.at(-1)), [
    "/site/orbit.bob",
    "/site/rf.bob",
    "/site/vacuum.bob",
  ]);
  const ends = events.filter((e) => e.type === "tool_end");
  assert.equal(ends.length, 10_000, "every call is answered");
  assert.equal(ends.filter((e) => e.type === "tool_end" && e.ok).length, 3);
  const reasons = new Set(
    ends.filter((e) => e.type === "tool_end" && !e.ok).map((e) =>
      String((e as { result: { error: string } }).result.error).replace(/\d+ s ago/, "N s ago")
    ),
  );
  assert.deepEqual(
    [...reasons].sort(),
    [
      "launch_display failed: orbit was opened N s ago and is not opened again within 30 s ([agent] display_relaunch_s); it is on the operator's screen already",
      "launch_display failed: rf was opened N s ago and is not opened again within 30 s ([agent] display_relaunch_s); it is on the operator's screen already",
      "launch_display failed: this turn has opened 3 displays, the most one turn may ([agent] max_display_launches_per_turn); tell the operator which others to open",
      "launch_display failed: vacuum was opened N s ago and is not opened again within 30 s ([agent] display_relaunch_s); it is on the operator's screen already",
    ].sort(),
  );

  // The next turn: the window still holds for those opened; others may open.
  now = 29_999;
  await turn(registry, session, flood(10));
  assert.deepEqual(started.slice(3).map((argv) => argv.at(-1)), [
    "/site/magnets.bob",
    "/site/injector.bob",
  ]);
  // Past the window a display opens again.
  now = 60_000;
  await turn(registry, session, {
    toolCalls: [{ name: "launch_display", arguments: { display: "orbit" } }],
  });
  assert.equal(started.at(-1)?.at(-1), "/site/orbit.bob");
  assert.equal(started.length, 6);
});
