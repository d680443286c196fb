/**
 * The event stream is one discriminated union, checked by `deno check`: the
 * `@ts-expect-error` lines below fail the type check (and so this test file)
 * the day an event of the wrong kind or shape compiles.
 */
import assert from "node:assert/strict";
import { type AgentEvent, assertNever } from "../../src/agent/events.ts";
import type { ToolSet } from "../../src/agent/tools.ts";

/** The `emit` a tool is given by the loop. */
type ToolEmit = NonNullable<Parameters<ToolSet["execute"]>[3]>;

Deno.test("the loop's emit takes only events of the union, each with its own fields", () => {
  const seen: AgentEvent[] = [];
  const emit: ToolEmit = (ev) => seen.push(ev);
  emit({ type: "plan_progress", step: 1, total: 2, detail: "write" });
  emit({
    type: "message_end",
    text: "",
    toolCalls: [],
    usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
    finishReason: "stop",
    model: "m",
  });
  // @ts-expect-error an event kind that does not exist
  emit({ type: "tool_progress", id: "a" });
  // @ts-expect-error a text event carries `delta`, not `text`
  emit({ type: "text", text: "hello" });
  // @ts-expect-error tool_end without its outcome
  emit({ type: "tool_end", id: "a", name: "read" });
  // @ts-expect-error a message_end's usage is a Usage, not a number
  emit({ type: "message_end", text: "", toolCalls: [], usage: 3, finishReason: "", model: "" });
  // @ts-expect-error steering text is a string
  emit({ type: "steer_applied", text: ["a"] });
  assert.deepEqual(seen.map((e) => e.type), [
    "plan_progress",
    "message_end",
    "tool_progress",
    "text",
    "tool_end",
    "message_end",
    "steer_applied",
  ]);
});

Deno.test("a consumer's exhaustive switch rejects, at run time too, an event outside the union", () => {
  const kind = (ev: AgentEvent): string => {
    switch (ev.type) {
      case "turn_start":
      case "text":
      case "message_end":
      case "steer_applied":
      case "hook":
      case "tool_calls_refused":
      case "tool_start":
      case "tool_end":
      case "retry":
      case "plan_proposed":
      case "plan_decided":
      case "plan_progress":
      case "turn_complete":
      case "compact":
      case "subagent":
      case "cancelled":
      case "error":
        return ev.type;
      default:
        return assertNever(ev);
    }
  };
  assert.equal(kind({ type: "steer_applied", text: "stop at 5 A" }), "steer_applied");
  const forged = JSON.parse('{"type":"tool_progress"}') as AgentEvent;
  assert.throws(() => kind(forged), /unhandled event \{"type":"tool_progress"\}/);
});
