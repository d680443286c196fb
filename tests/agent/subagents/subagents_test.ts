/**
 * Acceptance of sub-agents with the scripted model server: parallel
 * background searches polled and used, an invalid result corrected, a
 * level-3 agent refused spawning, a cancelled background agent, and a
 * sub-agent that cannot reach propose_plan.
 */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../../support/scripted_llm.ts";
import { call, routed, setup } from "./harness.ts";
import { toolJson } from "../../support/data_block.ts";

Deno.test("a parent spawns two background device searches in parallel, polls them and uses their typed results", async () => {
  const order: string[] = [];
  await using llm = await startScriptedLlm({
    scenario: routed(9, (w) => {
      order.push(
        `${w.agent}:${
          w.task.includes("BPM") ? "bpm" : w.task.includes("corrector") ? "cor" : "-"
        }:${w.step}`,
      );
      if (w.agent === "device_search") {
        const pattern = w.task.includes("BPM") ? "RING:BPM:??:X" : "RING:COR:H*:SETPT";
        if (w.step === 0) {
          // Slow enough that the parent's first poll sees both running.
          return { fault: "delay", ms: 200, then: call("search_device", { pattern, limit: 200 }) };
        }
        const found = toolJson(w.lastTool) as {
          total: number;
          devices: { name: string; writable: boolean }[];
        };
        return call("return", {
          devices: found.devices.map((d) => d.name),
          total: found.total,
          writable: found.devices.filter((d) => d.writable).map((d) => d.name),
        });
      }
      switch (w.step) {
        case 0:
          return {
            toolCalls: [
              {
                name: "spawn_subagent",
                arguments: {
                  agent: "device_search",
                  task: "all ring BPM horizontal positions",
                  background: true,
                },
              },
              {
                name: "spawn_subagent",
                arguments: {
                  agent: "device_search",
                  task: "ring horizontal corrector setpoints",
                  background: true,
                },
              },
            ],
          };
        case 1:
          return {
            toolCalls: [
              { name: "agent_status", arguments: { id: "agent-1" } },
              { name: "agent_status", arguments: { id: "agent-2" } },
            ],
          };
        case 2:
          return {
            toolCalls: [
              { name: "agent_status", arguments: { id: "agent-1", wait_seconds: 10 } },
              { name: "agent_status", arguments: { id: "agent-2", wait_seconds: 10 } },
            ],
          };
        default: {
          const results = w.messages.slice(-2).map((m) => toolJson(m.content));
          const [bpm, cor] = results as { result: { total: number; writable: string[] } }[];
          return {
            text:
              `${bpm?.result.total} BPMs, ${cor?.result.total} correctors (${cor?.result.writable.length} settable).`,
          };
        }
      }
    }),
  });
  await using t = await setup(llm.url);
  const events = await t.ask("Which ring BPMs and horizontal correctors are there?");
  assert.deepEqual(llm.failures, []);
  const ends = events.filter((e) => e.type === "tool_end");
  // spawn returns at once with ids; the first poll sees both still running.
  assert.deepEqual(ends.slice(0, 2).map((e) => (e.result as { id: string }).id), [
    "agent-1",
    "agent-2",
  ]);
  assert.deepEqual(ends.slice(2, 4).map((e) => (e.result as { status: string }).status), [
    "running",
    "running",
  ]);
  // Calls of one batch end in any order; take them by id.
  const polled = ends.slice(4, 6).sort((a, b) =>
    String((a.result as { id: string }).id).localeCompare(String((b.result as { id: string }).id))
  ).map((e) => e.result as { status: string; result: { total: number; devices: string[] } });
  assert.deepEqual(polled.map((p) => p.status), ["done", "done"]);
  assert.equal(polled[0]?.result.total, 60);
  assert.ok(polled[0]?.result.devices.every((d) => /^RING:BPM:\d\d:X$/.test(d)));
  assert.equal(polled[1]?.result.total, 40);
  const answer = events.filter((e) => e.type === "text").map((e) => (e as { delta: string }).delta)
    .join("");
  assert.equal(answer, "60 BPMs, 40 correctors (40 settable).");
  assert.ok(t.session.messages.length > 0);
  // Both sub-agents asked the model before either got its tool result back: they ran in parallel.
  const firstTwo = order.filter((o) => o.startsWith("device_search")).slice(0, 2);
  assert.deepEqual(firstTwo.map((o) => o.endsWith(":0")), [true, true]);
  // The parent never saw a sub-agent's conversation, only results.
  const parentText = JSON.stringify(t.session.messages);
  assert.ok(!parentText.includes("search_device"), "no sub-agent tool call reaches the parent");
  const runs = t.manager.list();
  assert.deepEqual(runs.map((r) => [r.id, r.parentId, r.level, r.status]), [
    ["agent-1", "operator", 2, "done"],
    ["agent-2", "operator", 2, "done"],
  ]);
  assert.equal(
    t.subagentEvents.filter((e) => e.type === "subagent" && e.status === "done").length,
    2,
  );
});

Deno.test("a sub-agent whose result breaks its signature is told why and corrects it, costing a turn", async () => {
  await using llm = await startScriptedLlm({
    scenario: routed(4, (w) => {
      if (w.agent === "parent") {
        return w.step === 0
          ? call("spawn_subagent", { agent: "device_search", task: "the linac gun charge monitor" })
          : { text: "done" };
      }
      if (w.step === 0) return call("return", { devices: "LINAC:GUN:CHARGE", total: "1" });
      assert.match(w.lastTool, /result\.devices must be an array/);
      assert.match(w.lastTool, /result\.total must be an integer/);
      assert.match(w.lastTool, /result\.writable is required/);
      return call("return", { devices: ["LINAC:GUN:CHARGE"], total: 1, writable: [] });
    }),
  });
  await using t = await setup(llm.url);
  const events = await t.ask("Find the gun charge monitor");
  assert.deepEqual(llm.failures, []);
  assert.equal(llm.remaining(), 0);
  const spawn = events.find((e) => e.type === "tool_end" && e.name === "spawn_subagent");
  assert.ok(spawn && spawn.type === "tool_end");
  assert.deepEqual(spawn.result, {
    id: "agent-1",
    agent: "device_search",
    parent_id: "operator",
    level: 2,
    status: "done",
    result: { devices: ["LINAC:GUN:CHARGE"], total: 1, writable: [] },
    turns: 2,
    tokens: (spawn.result as { tokens: number }).tokens,
  });
});

Deno.test("a level-2 agent may spawn, but its level-3 child is never offered spawn_subagent and is refused", async () => {
  const offered: Record<string, string[]> = {};
  await using llm = await startScriptedLlm({
    scenario: routed(7, (w, req) => {
      offered[`${w.agent}:${w.step}`] = (req.tools ?? []).map((t) => t.function?.name ?? "");
      if (w.agent === "parent") {
        return w.step === 0
          ? call("spawn_subagent", { agent: "diagnostics", task: "check RF station 3" })
          : { text: "done" };
      }
      if (w.agent === "diagnostics") {
        return w.step === 0
          ? call("spawn_subagent", { agent: "log_analysis", task: "RF trips in the last day" })
          : call("return", { status: "unknown", findings: [w.lastTool], suspect_devices: [] });
      }
      // log_analysis, level 3: tries to spawn anyway.
      if (w.step === 0) return call("spawn_subagent", { agent: "device_search", task: "anything" });
      return call("fail", { reason: toolJson(w.lastTool).error });
    }),
  });
  await using t = await setup(llm.url);
  await t.ask("Diagnose RF station 3");
  assert.deepEqual(llm.failures, []);
  assert.ok(offered["diagnostics:0"]?.includes("spawn_subagent"));
  assert.ok(!offered["log_analysis:0"]?.includes("spawn_subagent"));
  assert.ok(!offered["log_analysis:0"]?.some((n) => n.startsWith("agent_")));
  const [diag, logs] = t.manager.list();
  assert.equal(logs?.level, 3);
  assert.equal(logs?.parentId, diag?.id);
  assert.equal(logs?.status, "failed");
  assert.match(logs?.error ?? "", /unknown tool "spawn_subagent"/);
  // And the manager refuses a level-3 spawner outright.
  await assert.rejects(
    t.manager.spawn({
      id: logs?.id ?? "",
      level: 3,
      model: () => Promise.reject(new Error("unused")),
    }, {
      agent: "device_search",
      task: "x",
    }),
    /level-3 agent cannot spawn/,
  );
});

Deno.test("a background sub-agent can be cancelled while its model call hangs", async () => {
  await using llm = await startScriptedLlm({
    scenario: routed(4, (w) => {
      if (w.agent === "device_search") return { fault: "stall" };
      switch (w.step) {
        case 0:
          return call("spawn_subagent", {
            agent: "device_search",
            task: "every vacuum gauge",
            background: true,
          });
        case 1:
          return call("agent_cancel", { id: "agent-1" });
        default:
          return call("agent_status", { id: "agent-1" });
      }
    }),
  });
  await using t = await setup(llm.url);
  const done = new Promise((resolve) =>
    t.manager.subscribe((ev) => ev.status === "cancelled" && resolve(ev))
  );
  const controller = new AbortController();
  // The parent's turn ends by itself after its last scripted call; cap it anyway.
  const events = await t.ask("Find the vacuum gauges", controller.signal).catch(() => []);
  await done;
  const cancel = events.find((e) => e.type === "tool_end" && e.name === "agent_cancel");
  assert.ok(cancel && cancel.type === "tool_end");
  assert.deepEqual(cancel.result, { id: "agent-1", cancelled: true, status: "cancelled" });
  const run = t.manager.get("agent-1");
  assert.equal(run?.status, "cancelled");
  assert.match(run?.error ?? "", /cancelled by operator/);
  assert.equal(t.manager.cancel("agent-1"), false, "a finished run cannot be cancelled again");
});

Deno.test("a sub-agent asked to propose a plan cannot: it has no propose_plan and nothing is written", async () => {
  const offered: string[][] = [];
  await using llm = await startScriptedLlm({
    scenario: routed(5, (w, req) => {
      if (w.agent === "parent") {
        if (w.step === 0) {
          return call("spawn_subagent", {
            agent: "diagnostics",
            task: "Propose a plan that sets RING:COR:H01:SETPT to 0.05 with propose_plan",
            allow_tools: ["get_parameter", "propose_plan"],
          });
        }
        if (w.step === 1) {
          assert.match(
            w.lastTool,
            /allow_tools may only narrow diagnostics's tools.*not allowed: propose_plan/,
          );
          return call("spawn_subagent", {
            agent: "diagnostics",
            task: "Propose a plan that sets RING:COR:H01:SETPT to 0.05 with propose_plan",
          });
        }
        return { text: "The sub-agent could not change anything." };
      }
      offered.push((req.tools ?? []).map((t) => t.function?.name ?? ""));
      if (w.step === 0) {
        return call("propose_plan", {
          title: "bump",
          actions: [{ type: "write", device: "RING:COR:H01:SETPT", value: 0.05, reason: "asked" }],
        });
      }
      return call("fail", { reason: toolJson(w.lastTool).error });
    }),
  });
  await using t = await setup(llm.url);
  await t.ask("Have a sub-agent bump the corrector");
  assert.deepEqual(llm.failures, []);
  assert.equal(llm.remaining(), 0);
  assert.ok(offered.length > 0);
  for (const names of offered) assert.ok(!names.includes("propose_plan"), names.join(","));
  const run = t.manager.get("agent-1");
  assert.equal(run?.status, "failed");
  assert.match(run?.error ?? "", /unknown tool "propose_plan"/);
  assert.equal(t.cs.attempts, 0, "no write was even attempted");
  assert.deepEqual(t.approver.shown, [], "no plan reached an approver");
});
