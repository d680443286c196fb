/**
 * What the loop does around the model and the tools: text the operator typed
 * during a turn reaches the next model call (steering); facility hooks veto
 * or hear of tool calls; a result cut for the model keeps its whole text and
 * says where.
 */
import assert from "node:assert/strict";
import type { AgentEvent, HookEvent } from "../../src/agent/events.ts";
import { commandHooks, type HookRunner, type ToolHooks } from "../../src/agent/hooks.ts";
import { runTurn, type TurnOptions } from "../../src/agent/loop.ts";
import { Session } from "../../src/agent/session.ts";
import type { ToolOutcome, ToolSet } from "../../src/agent/tools.ts";
import { FakeModel, type FakeStep } from "../support/fake_model.ts";

/** `read` answers short; `dump` answers a result cut for the model. Records what ran. */
class Tools implements ToolSet {
  ran: string[] = [];
  onRun?: (name: string) => void;
  specs() {
    return [{ name: "read", description: "reads", parameters: { type: "object" } }];
  }
  isReadOnly() {
    return true;
  }
  awaitsCompletion() {
    return false;
  }
  previewArgs(_name: string, raw: string) {
    return JSON.parse(raw);
  }
  execute(name: string): Promise<ToolOutcome> {
    this.ran.push(name);
    this.onRun?.(name);
    if (name === "dump") {
      const whole = { rows: "x".repeat(500) };
      return Promise.resolve({
        ok: true,
        content: '{"rows":"xx…(cut)…xx"}',
        result: { truncated: { chars: 512, full_output: null }, excerpt: "…" },
        fullResult: whole,
        args: {},
      });
    }
    return Promise.resolve({ ok: true, content: `${name} done`, result: { name }, args: {} });
  }
}

async function turn(steps: FakeStep[], extra: Partial<TurnOptions> & { tools?: Tools } = {}) {
  const model = new FakeModel(steps);
  const session = extra.session ?? new Session("s1", 0);
  const tools = extra.tools ?? new Tools();
  const events: AgentEvent[] = [];
  for await (
    const ev of runTurn({
      input: "question",
      model,
      systemPrompt: "system",
      maxIterations: 5,
      signal: new AbortController().signal,
      ...extra,
      session,
      tools,
    })
  ) events.push(ev);
  return { events, session, model, tools };
}

Deno.test("text typed during a turn reaches the next model call as a marked user message", async () => {
  const session = new Session("s1", 0);
  const tools = new Tools();
  tools.onRun = () => {
    session.steer("  only the first girder  ");
    session.steer("and skip BPM 3");
    session.steer("   ");
  };
  const { events, model } = await turn([
    { toolCalls: [{ id: "a", name: "read", arguments: "{}" }] },
    { text: "Only the first girder, without BPM 3." },
  ], { session, tools });
  const second = model.requests[1]?.messages ?? [];
  assert.deepEqual(second.at(-1), {
    role: "user",
    content: "only the first girder\nand skip BPM 3",
    steered: true,
  });
  assert.equal(second.at(-2)?.role, "tool", "after the results the model asked for");
  const applied = events.filter((e) => e.type === "steer_applied");
  assert.deepEqual(applied, [{
    type: "steer_applied",
    text: "only the first girder\nand skip BPM 3",
  }]);
  const order = events.map((e) => e.type);
  assert.ok(order.indexOf("steer_applied") > order.indexOf("tool_end"));
  assert.equal(session.steering.size, 0);
  assert.deepEqual(session.messages.filter((m) => m.role === "user").length, 2);
});

Deno.test("text typed after the last model call of a turn waits in the queue for the caller", async () => {
  const session = new Session("s1", 0);
  const { events } = await turn([{ text: "done" }], { session });
  session.steer("one more thing");
  assert.ok(!events.some((e) => e.type === "steer_applied"));
  assert.deepEqual(session.steering.take(), ["one more thing"]);
});

/** A runner that answers from a table by program, recording what each was given. */
function fakeRunner(answers: Record<string, Awaited<ReturnType<HookRunner>>>) {
  const seen: { program: string; input: Record<string, unknown> }[] = [];
  const run: HookRunner = (command, stdin) => {
    const program = command[0] ?? "";
    seen.push({ program, input: JSON.parse(stdin) });
    const answer = answers[program];
    return answer ? Promise.resolve(answer) : Promise.reject(new Error(`${program}: not found`));
  };
  return { run, seen };
}

const hookSpec = (program: string, tools?: string[]) => ({
  command: [program],
  timeout_s: 5,
  ...(tools ? { tools } : {}),
});

Deno.test("a before_tool hook that exits nonzero vetoes the call: the tool never runs, the model reads why", async () => {
  const { run, seen } = fakeRunner({
    "/site/policy": {
      status: "exited",
      code: 3,
      stderr: "\n  writes to RF need the RF expert\x1b[2J\nmore",
    },
  });
  const hooks = commandHooks(
    { before_tool: [hookSpec("/site/policy", ["re*"])], after_tool: [] },
    run,
    () => "alice",
  );
  const { events, tools, model } = await turn([
    { toolCalls: [{ id: "a", name: "read", arguments: '{"pv":"RF:1"}' }] },
    { text: "I may not." },
  ], { hooks });
  assert.deepEqual(tools.ran, []);
  const message = "vetoed by facility hook policy: writes to RF need the RF expert\\u001b[2J";
  const tool = model.requests[1]?.messages.at(-1);
  assert.deepEqual(tool, {
    role: "tool",
    toolCallId: "a",
    name: "read",
    content: JSON.stringify({ error: message }),
  });
  const hook = events.find((e) => e.type === "hook") as HookEvent;
  assert.deepEqual(hook, {
    type: "hook",
    stage: "before_tool",
    hook: "policy",
    id: "a",
    tool: "read",
    outcome: "vetoed",
    message,
  });
  const end = events.find((e) => e.type === "tool_end");
  assert.ok(end?.type === "tool_end" && !end.ok);
  assert.deepEqual(seen[0]?.input, {
    hook: "before_tool",
    tool: "read",
    call_id: "a",
    args: { pv: "RF:1" },
    session_id: "s1",
    operator: "alice",
  });
});

Deno.test("a before_tool hook that cannot run or times out vetoes (fail closed); one for other tools is not asked", async () => {
  for (
    const [answers, why] of [
      [{}, /vetoed by facility hook gate: it could not be run \(\/site\/gate: not found\)/],
      [{ "/site/gate": { status: "timeout" } }, /gate: it did not finish within 5 s/],
    ] as const
  ) {
    const { run } = fakeRunner(answers);
    const hooks = commandHooks(
      {
        before_tool: [hookSpec("/site/other", ["propose_*"]), hookSpec("/site/gate")],
        after_tool: [],
      },
      run,
      () => "alice",
    );
    const { events, tools } = await turn([
      { toolCalls: [{ id: "a", name: "read", arguments: "{}" }] },
      { text: "ok" },
    ], { hooks });
    assert.deepEqual(tools.ran, []);
    const hook = events.find((e) => e.type === "hook") as HookEvent;
    assert.match(hook.message, why);
  }
});

Deno.test("after_tool hooks hear of the call's outcome; each that fails, exits nonzero or cannot run warns", async () => {
  const { run, seen } = fakeRunner({
    "/site/log": { status: "exited", code: 1, stderr: "log disk full\nmore" },
    "/site/allow": { status: "exited", code: 0, stderr: "" },
  });
  const hooks: ToolHooks = commandHooks(
    {
      before_tool: [hookSpec("/site/allow")],
      after_tool: [hookSpec("/site/log"), { ...hookSpec("/site/gone"), name: "audit-copy" }],
    },
    run,
    () => "bob",
  );
  const { events, tools } = await turn([
    { toolCalls: [{ id: "a", name: "read", arguments: "{}" }] },
    { text: "ok" },
  ], { hooks });
  assert.deepEqual(tools.ran, ["read"]);
  const log = seen.find((s) => s.program === "/site/log")?.input;
  assert.equal(log?.hook, "after_tool");
  assert.equal(log?.ok, true);
  assert.equal(log?.result_summary, "read done");
  assert.equal(log?.operator, "bob");
  const warned = events.filter((e) => e.type === "hook") as HookEvent[];
  assert.deepEqual(warned.map((w) => [w.stage, w.outcome, w.hook]), [
    ["after_tool", "failed", "log"],
    ["after_tool", "failed", "audit-copy"],
  ]);
  assert.equal(
    warned[0]?.message,
    "facility hook log after read failed: it exited with status 1: log disk full",
  );
  assert.match(
    warned[1]?.message ?? "",
    /facility hook audit-copy after read failed: it could not be run/,
  );
  const types = events.map((e) => e.type);
  assert.ok(
    types.indexOf("hook") < types.indexOf("tool_end"),
    "the warning comes before the call's end",
  );
  assert.equal(events.at(-1)?.type, "turn_complete");
});

Deno.test("a result cut for the model keeps its whole text through the writer, and the model reads where", async () => {
  const kept = new Map<string, string>();
  const { events, model, session } = await turn([
    { toolCalls: [{ id: "call/9", name: "dump", arguments: "{}" }] },
    { text: "ok" },
  ], {
    keepFullResult: (id, text) => {
      kept.set(id, text);
      return Promise.resolve(`/state/sessions/s1/tool-results/${id}.txt`);
    },
  });
  assert.deepEqual([...kept.keys()], ["call/9"]);
  assert.equal(kept.get("call/9"), JSON.stringify({ rows: "x".repeat(500) }));
  const content = model.requests[1]?.messages.at(-1)?.content ?? "";
  assert.ok(content.startsWith('{"rows":"xx…(cut)…xx"}\n'));
  assert.ok(
    content.endsWith(
      "[the result was cut for you; its whole text (511 characters) is in /state/sessions/s1/tool-results/call/9.txt]",
    ),
    content,
  );
  assert.equal(session.messages.find((m) => m.role === "tool")?.content, content);
  const end = events.find((e) => e.type === "tool_end");
  assert.ok(end?.type === "tool_end");
  assert.equal(end.fullOutput, "/state/sessions/s1/tool-results/call/9.txt");
});

Deno.test("without a session directory the model is told the whole was not kept; a failed write says why", async () => {
  const none = await turn([{ toolCalls: [{ id: "a", name: "dump", arguments: "{}" }] }, {
    text: "ok",
  }]);
  assert.match(
    none.model.requests[1]?.messages.at(-1)?.content ?? "",
    /\(511 characters\) was not kept: this run has no session directory\]$/,
  );
  const end = none.events.find((e) => e.type === "tool_end");
  assert.ok(end?.type === "tool_end" && end.fullOutput === null);
  const failed = await turn([{ toolCalls: [{ id: "a", name: "dump", arguments: "{}" }] }, {
    text: "ok",
  }], { keepFullResult: () => Promise.reject(new Error("No space left on device")) });
  assert.match(
    failed.model.requests[1]?.messages.at(-1)?.content ?? "",
    /could not be saved: No space left on device\]$/,
  );
});

Deno.test("a short result is left as it is: nothing is written", async () => {
  let writes = 0;
  const { model, events } = await turn([
    { toolCalls: [{ id: "a", name: "read", arguments: "{}" }] },
    { text: "ok" },
  ], {
    keepFullResult: () => {
      writes++;
      return Promise.resolve("x");
    },
  });
  assert.equal(writes, 0);
  assert.equal(model.requests[1]?.messages.at(-1)?.content, "read done");
  const end = events.find((e) => e.type === "tool_end");
  assert.ok(end?.type === "tool_end" && !("fullOutput" in end));
});

Deno.test("text left in the queue goes with the next turn's first model call, after its question", async () => {
  const session = new Session("s1", 0);
  session.steer("and the second girder too");
  const { model, events } = await turn([{ text: "ok" }], { session });
  const sent = model.requests[0]?.messages.slice(-2);
  assert.deepEqual(sent, [
    { role: "user", content: "question" },
    { role: "user", content: "and the second girder too", steered: true },
  ]);
  assert.deepEqual(events.slice(0, 2).map((e) => e.type), ["turn_start", "steer_applied"]);
});
