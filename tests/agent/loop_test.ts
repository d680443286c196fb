import assert from "node:assert/strict";
import type { AgentEvent } from "../../src/agent/events.ts";
import { CANCELLED_RESULT, runTurn } from "../../src/agent/loop.ts";
import { Session } from "../../src/agent/session.ts";
import type { ToolOutcome, ToolSet } from "../../src/agent/tools.ts";
import { LlmError } from "../../src/llm/errors.ts";
import { FakeModel, type FakeStep } from "../support/fake_model.ts";

/** Tools that record overlap: `wait_N` takes N ms; `write` is not read-only. */
class RecordingTools implements ToolSet {
  active = 0;
  maxActive = 0;
  order: string[] = [];
  specs() {
    return [{ name: "read", description: "reads", parameters: { type: "object" } }];
  }
  isReadOnly(name: string) {
    return name !== "write" && name !== "plan";
  }
  awaitsCompletion(name: string) {
    return name === "plan";
  }
  previewArgs(_name: string, raw: string) {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }
  /** A change that reports progress and, when cancelled, takes a while to restore. */
  async plan(signal: AbortSignal, emit: (ev: AgentEvent) => void): Promise<ToolOutcome> {
    for (let step = 1; step <= 3; step++) {
      if (signal.aborted) {
        await new Promise((r) => setTimeout(r, 50));
        return {
          ok: true,
          content: "aborted and restored",
          result: { status: "aborted" },
          args: {},
        };
      }
      emit({ type: "plan_progress", step, total: 3, detail: `step ${step}` });
      await new Promise((r) => setTimeout(r, 20));
    }
    return { ok: true, content: "completed", result: { status: "completed" }, args: {} };
  }

  async execute(
    name: string,
    raw: string,
    signal: AbortSignal,
    emit: (ev: AgentEvent) => void = () => {},
  ): Promise<ToolOutcome> {
    if (name === "plan") return await this.plan(signal, emit);
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    this.order.push(`start ${name}`);
    const ms = Number(/^wait_(\d+)$/.exec(name)?.[1] ?? 0);
    try {
      if (name === "hang") await new Promise(() => {});
      await new Promise((r, j) => {
        const t = setTimeout(r, ms);
        signal.addEventListener("abort", () => (clearTimeout(t), j(signal.reason)), { once: true });
      });
      return { ok: true, content: `${name} done`, result: { name }, args: raw };
    } finally {
      this.active--;
      this.order.push(`end ${name}`);
    }
  }
}

async function collect(
  steps: FakeStep[],
  opts: { tools?: ToolSet; maxIterations?: number; signal?: AbortSignal; session?: Session } = {},
) {
  const model = new FakeModel(steps);
  const session = opts.session ?? new Session("s", 0);
  const events: AgentEvent[] = [];
  for await (
    const ev of runTurn({
      session,
      input: "question",
      model,
      tools: opts.tools ?? new RecordingTools(),
      systemPrompt: "system",
      maxIterations: opts.maxIterations ?? 5,
      signal: opts.signal ?? new AbortController().signal,
    })
  ) events.push(ev);
  return { events, session, model };
}

Deno.test("a turn without tools streams text and completes with usage", async () => {
  const { events, session } = await collect([{ text: "All quiet on BPM 1." }]);
  assert.equal(
    events.filter((e) => e.type === "text").map((e) => (e as { delta: string }).delta).join(""),
    "All quiet on BPM 1.",
  );
  assert.deepEqual(events.at(-1), {
    type: "turn_complete",
    usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
    model: "fake-model",
  });
  assert.deepEqual(session.messages, [
    { role: "user", content: "question" },
    { role: "assistant", content: "All quiet on BPM 1." },
  ]);
});

Deno.test("tool results go back to the model, then its answer ends the turn", async () => {
  const { events, session, model } = await collect([
    { toolCalls: [{ id: "a", name: "read", arguments: '{"x":1}' }] },
    { text: "done" },
  ]);
  assert.deepEqual(events.map((e) => e.type), [
    "turn_start",
    "message_end",
    "tool_start",
    "tool_end",
    "text",
    "message_end",
    "turn_complete",
  ]);
  assert.deepEqual(events[0], {
    type: "turn_start",
    input: "question",
    sessionId: "s",
    turn: 1,
    model: "fake-model",
  });
  assert.deepEqual(events[1], {
    type: "message_end",
    text: "",
    toolCalls: [{ id: "a", name: "read", arguments: '{"x":1}' }],
    usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
    finishReason: "tool_calls",
    model: "fake-model",
  });
  assert.deepEqual(events[2], { type: "tool_start", id: "a", name: "read", args: { x: 1 } });
  const second = model.requests[1]?.messages ?? [];
  assert.deepEqual(second.at(-1), {
    role: "tool",
    toolCallId: "a",
    name: "read",
    content: "read done",
  });
  assert.equal(second[0]?.role, "system");
  assert.equal(session.messages.length, 4);
  const complete = events.at(-1) as { usage: { totalTokens: number } };
  assert.equal(complete.usage.totalTokens, 30, "usage sums both model calls");
});

Deno.test("independent read-only calls in one response run concurrently", async () => {
  const tools = new RecordingTools();
  const { events } = await collect([
    { toolCalls: [{ name: "wait_60" }, { name: "wait_10" }, { name: "wait_30" }] },
    { text: "ok" },
  ], { tools });
  assert.equal(tools.maxActive, 3);
  // tool_end events arrive in completion order; tool results keep the call order.
  const ends = events.filter((e) => e.type === "tool_end").map((e) => (e as { name: string }).name);
  assert.deepEqual(ends, ["wait_10", "wait_30", "wait_60"]);
});

Deno.test("a call that is not read-only runs alone, between the read-only batches", async () => {
  const tools = new RecordingTools();
  await collect([
    { toolCalls: [{ name: "wait_5" }, { name: "write" }, { name: "wait_1" }] },
    { text: "ok" },
  ], { tools });
  assert.deepEqual(tools.order, [
    "start wait_5",
    "end wait_5",
    "start write",
    "end write",
    "start wait_1",
    "end wait_1",
  ]);
});

Deno.test("repeated tool call ids are made unique so every call gets its result", async () => {
  const { model } = await collect([
    { toolCalls: [{ id: "x", name: "read" }, { id: "x", name: "read" }] },
    { text: "ok" },
  ]);
  const ids = (model.requests[1]?.messages ?? []).filter((m) => m.role === "tool").map((m) =>
    (m as { toolCallId: string }).toolCallId
  );
  assert.equal(new Set(ids).size, 2);
});

Deno.test("cancelling during a tool answers every pending call and keeps the session valid", async () => {
  const controller = new AbortController();
  const tools = new RecordingTools();
  setTimeout(() => controller.abort(new Error("cancelled by Ctrl-C")), 30);
  const started = performance.now();
  const { events, session } = await collect([
    { toolCalls: [{ id: "h", name: "hang" }, { id: "w", name: "wait_5" }] },
  ], { tools, signal: controller.signal });
  assert.ok(performance.now() - started < 1_000);
  assert.deepEqual(events.at(-1), { type: "cancelled", reason: "cancelled by Ctrl-C" });
  const results = session.messages.filter((m) => m.role === "tool").map((m) => m.content);
  assert.deepEqual(results, [CANCELLED_RESULT, "wait_5 done"]);
});

Deno.test("cancelling during the model call keeps the question and nothing half-said", async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error("cancelled by SIGINT")), 20);
  const { events, session } = await collect([{ hang: true }], { signal: controller.signal });
  assert.deepEqual(events.map((e) => e.type), ["turn_start", "cancelled"]);
  assert.deepEqual(events[1], { type: "cancelled", reason: "cancelled by SIGINT" });
  assert.deepEqual(session.messages, [{ role: "user", content: "question" }]);
});

Deno.test("a model failure after retries is an error event, not an exception", async () => {
  const { events } = await collect([{
    error: new LlmError("server", "model endpoint answered 500: boom", { status: 500 }),
  }]);
  assert.deepEqual(events.slice(1), [{
    type: "error",
    message: "model endpoint answered 500: boom",
    retryable: true,
    kind: "server",
  }]);
});

Deno.test("the turn stops at max iterations with an error saying what to change", async () => {
  const { events, model } = await collect(
    [{ toolCalls: [{ name: "read" }] }, { toolCalls: [{ name: "read" }] }, { text: "never" }],
    { maxIterations: 2 },
  );
  assert.equal(model.remaining, 1);
  const last = events.at(-1) as { type: string; message: string };
  assert.equal(last.type, "error");
  assert.match(last.message, /stopped after 2 model calls .*max_iterations/);
});

Deno.test("a session continues after a cancelled turn", async () => {
  const session = new Session("s", 0);
  const controller = new AbortController();
  controller.abort(new Error("cancelled"));
  await collect([{ text: "unused" }], { session, signal: controller.signal });
  const { events } = await collect([{ text: "second answer" }], { session });
  assert.equal(events.at(-1)?.type, "turn_complete");
  assert.deepEqual(session.userInputs(), ["question", "question"]);
});

Deno.test("events a tool emits while it runs reach the stream in order, before its end", async () => {
  const { events } = await collect([{ toolCalls: [{ id: "p", name: "plan" }] }, { text: "done" }]);
  assert.deepEqual(
    events.slice(2, 7).map((e) => e.type === "plan_progress" ? `progress ${e.step}` : e.type),
    [
      "tool_start",
      "progress 1",
      "progress 2",
      "progress 3",
      "tool_end",
    ],
  );
});

Deno.test("a cancelled turn waits for a tool that restores what it changed, and records its result", async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error("cancelled by Ctrl-C")), 30);
  const { events, session } = await collect(
    [{ toolCalls: [{ id: "p", name: "plan" }, { id: "h", name: "hang" }] }],
    { signal: controller.signal },
  );
  const end = events.find((e) => e.type === "tool_end");
  assert.deepEqual(end && "result" in end ? end.result : undefined, { status: "aborted" });
  assert.equal(events.at(-1)?.type, "cancelled");
  const results = session.messages.filter((m) => m.role === "tool").map((m) => m.content);
  assert.deepEqual(results, ["aborted and restored", CANCELLED_RESULT]);
});
