import assert from "node:assert/strict";
import OpenAI from "openai";
import { type Scenario, startScriptedLlm } from "./scripted_llm.ts";
import { assemble, clientFor, rejection } from "./scripted_llm_testing.ts";

type Message = OpenAI.ChatCompletionMessageParam;

const userAsks: Message[] = [{ role: "user", content: "What is the beam current?" }];

function tool(name: string): OpenAI.ChatCompletionTool {
  return { type: "function", function: { name, parameters: { type: "object" } } };
}

Deno.test("streams text as chunk deltas of chunkSize characters, ending with stop", async () => {
  await using llm = await startScriptedLlm({
    scenario: { turns: [{ respond: { text: "Beam current is 401 mA.", chunkSize: 5 } }] },
  });
  const stream = await clientFor(llm.url).chat.completions.create({
    model: "m",
    messages: userAsks,
    stream: true,
  });
  const said = await assemble(stream);

  assert.equal(said.text, "Beam current is 401 mA.");
  assert.equal(said.finishReason, "stop");
  const deltas = said.chunks.map((c) => c.choices[0]?.delta.content).filter((t) => t);
  assert.deepEqual(deltas, ["Beam ", "curre", "nt is", " 401 ", "mA."]);
  assert.equal(said.chunks[0]?.choices[0]?.delta.role, "assistant");
  assert.ok(said.chunks.every((c) => c.object === "chat.completion.chunk" && c.model === "m"));
  assert.equal(llm.requests[0]?.headers.authorization, "Bearer test");
  assert.equal(llm.requests[0]?.body.stream, true);
  assert.equal(llm.remaining(), 0);
  assert.deepEqual(llm.failures, []);
});

Deno.test("streamed tool calls reassemble from deltas into the exact arguments", async () => {
  const invalidJson = '{"pv": "SR:DCCT", ';
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [{
        respond: {
          text: "Reading.",
          toolCalls: [
            { name: "read_pv", arguments: { pv: "SR:DCCT", timeout_s: 2.5, tags: ["a", "b"] } },
            { name: "no_such_tool", arguments: invalidJson },
            { id: "call_custom", name: "read_pv", arguments: "" },
          ],
        },
      }],
    },
  });
  const stream = await clientFor(llm.url).chat.completions.create({
    model: "m",
    messages: userAsks,
    tools: [tool("read_pv")],
    stream: true,
  });
  const said = await assemble(stream);

  assert.equal(said.text, "Reading.");
  assert.equal(said.finishReason, "tool_calls");
  assert.deepEqual(said.toolCalls, [
    {
      id: "call_1",
      name: "read_pv",
      arguments: JSON.stringify({ pv: "SR:DCCT", timeout_s: 2.5, tags: ["a", "b"] }),
    },
    { id: "call_2", name: "no_such_tool", arguments: invalidJson },
    { id: "call_custom", name: "read_pv", arguments: "" },
  ]);
  const callDeltas = said.chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
  const [head, second] = callDeltas;
  assert.deepEqual(head, {
    index: 0,
    id: "call_1",
    type: "function",
    function: { name: "read_pv", arguments: "" },
  });
  assert.deepEqual(Object.keys(second ?? {}).sort(), ["function", "index"]);
  assert.deepEqual(Object.keys(second?.function ?? {}), ["arguments"]);
  assert.ok(callDeltas.length > 6, "arguments arrive in several pieces");
});

Deno.test("a non-streaming request gets one chat.completion with the same content", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [{
        expect: { stream: false },
        respond: { text: "Checking.", toolCalls: [{ name: "read_pv", arguments: { pv: "X" } }] },
      }],
    },
  });
  const completion = await clientFor(llm.url).chat.completions.create({
    model: "m",
    messages: userAsks,
  });

  assert.equal(completion.object, "chat.completion");
  const choice = completion.choices[0];
  assert.equal(choice?.finish_reason, "tool_calls");
  assert.equal(choice?.message.content, "Checking.");
  assert.deepEqual(choice?.message.tool_calls, [
    { id: "call_1", type: "function", function: { name: "read_pv", arguments: '{"pv":"X"}' } },
  ]);
  assert.ok((completion.usage?.prompt_tokens ?? 0) > 0);
  assert.deepEqual(llm.failures, []);
});

Deno.test("include_usage adds a last chunk with no choices and the usage", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        { respond: { text: "ok", usage: { prompt_tokens: 120, completion_tokens: 3 } } },
        { respond: { text: "estimated" } },
        { respond: { text: "no usage asked" } },
      ],
    },
  });
  const client = clientFor(llm.url);
  const ask = (includeUsage: boolean) =>
    client.chat.completions.create({
      model: "m",
      messages: userAsks,
      stream: true,
      ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
    }).then(assemble);

  const given = await ask(true);
  const last = given.chunks.at(-1);
  assert.deepEqual(last?.choices, []);
  assert.deepEqual(last?.usage, { prompt_tokens: 120, completion_tokens: 3, total_tokens: 123 });
  assert.ok(given.chunks.slice(0, -1).every((c) => c.usage === null));

  const estimated = (await ask(true)).chunks.at(-1)?.usage;
  assert.ok(estimated && estimated.prompt_tokens > 0 && estimated.completion_tokens > 0);

  const none = await ask(false);
  assert.ok(none.chunks.every((c) => c.usage === undefined && c.choices.length === 1));
});

Deno.test("expectation mismatches are recorded in failures and the turn still responds", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      name: "expectations",
      turns: [{
        expect: {
          toolsOffered: ["read_pv", "write_pv"],
          toolsInclude: ["archive_query"],
          toolsExclude: ["read_pv"],
          lastRole: "tool",
          userIncludes: "lifetime",
          toolResultIncludes: ["401"],
          toolResultFor: { toolCallId: "call_9", includes: "x" },
          systemIncludes: "control room",
          model: "gpt-x",
          stream: true,
        },
        respond: { text: "still answered" },
      }, {
        expect: {
          toolsOffered: ["read_pv"],
          lastRole: "tool",
          userIncludes: "beam current",
          toolResultIncludes: ["401", "mA"],
          toolResultFor: { toolCallId: "call_1", includes: "401" },
          systemIncludes: "operator",
          model: "m",
          stream: false,
        },
        respond: { text: "fine" },
      }],
    },
  });
  const client = clientFor(llm.url);
  const first = await client.chat.completions.create({
    model: "m",
    messages: [{ role: "system", content: "You assist an operator." }, ...userAsks],
    tools: [tool("read_pv")],
  });
  assert.equal(first.choices[0]?.message.content, "still answered");
  assert.equal(llm.failures.length, 10);
  assert.ok(llm.failures.every((f) => f.startsWith("expectations turn 1: expected")));
  assert.match(llm.failures[0] ?? "", /tools offered \[read_pv, write_pv\], got \[read_pv\]/);

  await client.chat.completions.create({
    model: "m",
    messages: [
      { role: "system", content: "You assist an operator." },
      { role: "user", content: "What is the beam current now?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "call_1",
          type: "function",
          function: { name: "read_pv", arguments: "{}" },
        }],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"value": 401, "unit": "mA"}' },
    ],
    tools: [tool("read_pv")],
  });
  assert.equal(llm.failures.length, 10, "the second turn met every expectation");
});

Deno.test("templates fill text and arguments from the last tool result and user message", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [{
        respond: {
          text: "{{last_user}}: {{last_tool_result.pvs[1].value}} {{last_tool_result.unit}}",
          toolCalls: [
            { name: "echo", arguments: '{"raw": {{last_tool_result.pvs[0]}}}' },
            { name: "echo", arguments: { pv: "{{last_tool_result.pvs[1].name}}" } },
            { name: "echo", arguments: "{{last_tool_result.nope}}" },
          ],
        },
      }],
    },
  });
  const content = JSON.stringify({
    unit: "mA",
    pvs: [{ name: "A", value: 1 }, { name: 'B"2', value: 401.5 }],
  });
  const completion = await clientFor(llm.url).chat.completions.create({
    model: "m",
    messages: [
      { role: "user", content: [{ type: "text", text: "current" }] },
      { role: "tool", tool_call_id: "call_0", content },
    ],
  });
  const message = completion.choices[0]?.message;
  assert.equal(message?.content, "current: 401.5 mA");
  const args = message?.tool_calls?.map((call) =>
    call.type === "function" ? call.function.arguments : ""
  );
  assert.deepEqual(args, [
    '{"raw": {"name":"A","value":1}}',
    JSON.stringify({ pv: 'B"2' }),
    "<unresolved: last_tool_result.nope>",
  ]);
  assert.deepEqual(llm.failures, [
    "scenario turn 1: unresolved template {{last_tool_result.nope}}",
  ]);
});

Deno.test("a request past the last turn gets a 500 error body and a recorded failure", async () => {
  await using llm = await startScriptedLlm({
    scenario: { name: "short", turns: [{ respond: { text: "only one" } }] },
  });
  const client = clientFor(llm.url);
  await client.chat.completions.create({ model: "m", messages: userAsks });
  const error = await rejection(client.chat.completions.create({ model: "m", messages: userAsks }));

  assert.ok(error instanceof OpenAI.InternalServerError, String(error));
  assert.equal(error.status, 500);
  assert.equal(error.code, "scenario_exhausted");
  assert.equal(llm.remaining(), 0);
  assert.equal(llm.requests.length, 2);
  assert.equal(llm.requests[1]?.turn, null);
  assert.equal(llm.failures.length, 1);
  assert.match(llm.failures[0] ?? "", /no turns left \(short has 1\)/);
});

Deno.test("function turns answer from the request; loop scenarios cycle forever", async () => {
  const scenario: Scenario = {
    loop: true,
    turns: [
      (req) => ({ text: `you said ${req.messages.length} message(s)` }),
      { respond: { text: "second" } },
    ],
  };
  await using llm = await startScriptedLlm({ scenario });
  const client = clientFor(llm.url);
  const texts: (string | null | undefined)[] = [];
  for (let i = 0; i < 5; i++) {
    const completion = await client.chat.completions.create({ model: "m", messages: userAsks });
    texts.push(completion.choices[0]?.message.content);
  }
  assert.deepEqual(texts, [
    "you said 1 message(s)",
    "second",
    "you said 1 message(s)",
    "second",
    "you said 1 message(s)",
  ]);
  assert.equal(llm.remaining(), Infinity);
  assert.deepEqual(llm.requests.map((r) => r.turn), [0, 1, 0, 1, 0]);
});

Deno.test("models are listed and settled() resolves once every turn is answered", async () => {
  await using llm = await startScriptedLlm({
    scenario: { models: ["scripted", "gpt-x"], turns: [{ respond: { text: "hi" } }] },
  });
  const client = clientFor(llm.url);
  const models = [];
  for await (const model of client.models.list()) models.push(model.id);
  assert.deepEqual(models, ["scripted", "gpt-x"]);

  let settled = false;
  const waiting = llm.settled().then(() => settled = true);
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(settled, false);
  await client.chat.completions.create({ model: "m", messages: userAsks });
  await waiting;
  assert.equal(settled, true);
  assert.equal(llm.url.endsWith("/v1"), true);
  assert.match(llm.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
});
