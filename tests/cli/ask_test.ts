/**
 * End to end: the real program, a scripted model on loopback, the simulator.
 */
import assert from "node:assert/strict";
import { type Scenario, startScriptedLlm } from "../support/scripted_llm.ts";
import { runAgent, tempConfig, waitFor } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";

const QUESTION = "What is the horizontal position at LINAC:BPM:01:X?";

function modelEnv(url: string) {
  return { OPENAI_BASE_URL: url, OPENAI_API_KEY: "test-key" };
}

const READ_BPM: Scenario = {
  turns: [
    {
      expect: {
        userIncludes: "LINAC:BPM:01:X",
        toolsOffered: [
          "get_parameter",
          "search_device",
          "read_log",
          "propose_plan",
          "predict_effect",
          "execute_code",
          "run_script",
          "list_scripts",
          "spawn_subagent",
          "agent_status",
          "agent_list",
          "agent_cancel",
          "ask_user",
          "launch_display",
          "plot",
        ],
      },
      respond: {
        toolCalls: [{ name: "get_parameter", arguments: { devices: ["LINAC:BPM:01:X"] } }],
      },
    },
    {
      expect: {
        lastRole: "tool",
        toolResultIncludes: ['"device":"LINAC:BPM:01:X"', '"units":"mm"'],
      },
      respond: {
        text: "LINAC:BPM:01:X reads {{last_tool_result.readings[0].value}} mm.",
        usage: { prompt_tokens: 300, completion_tokens: 20 },
      },
    },
  ],
};

Deno.test("ask --json answers from a get_parameter call on the simulator's live value", async () => {
  await using llm = await startScriptedLlm({ scenario: READ_BPM });
  const r = await runAgent(["ask", "--json"], { env: modelEnv(llm.url), stdin: `${QUESTION}\n` });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(llm.failures, []);
  const out = JSON.parse(r.stdout);
  assert.equal(out.schema, "accel-agent.ask/1");
  assert.equal(out.ok, true);
  assert.equal(out.exit_code, 0);
  assert.equal(out.tool_calls.length, 1);
  const call = out.tool_calls[0];
  assert.equal(call.name, "get_parameter");
  assert.deepEqual(call.args, { devices: ["LINAC:BPM:01:X"] });
  assert.equal(call.ok, true);
  const reading = call.result.readings[0];
  assert.equal(reading.device, "LINAC:BPM:01:X");
  assert.equal(typeof reading.value, "number");
  assert.ok(Math.abs(Date.parse(reading.time) - Date.now()) < 60_000, "a live time stamp");
  assert.equal(out.answer, `LINAC:BPM:01:X reads ${reading.value} mm.`);
  // The first call's usage is estimated by the server, the second's is scripted.
  assert.ok(out.usage.prompt_tokens > 300);
  assert.equal(out.usage.total_tokens, out.usage.prompt_tokens + out.usage.completion_tokens);
  assert.equal(out.model_name, "main");
  assert.equal(typeof out.duration_ms, "number");
});

Deno.test("ask --stream-json prints every event as a JSON line, then the result", async () => {
  await using llm = await startScriptedLlm({ scenario: READ_BPM });
  const r = await runAgent(["ask", "--stream-json", QUESTION], { env: modelEnv(llm.url) });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  const types = lines.map((l) => l.type);
  assert.deepEqual(types.slice(0, 4), ["turn_start", "message_end", "tool_start", "tool_end"]);
  assert.equal(lines[1].toolCalls[0].name, "get_parameter");
  assert.ok(types.includes("text"));
  assert.deepEqual(types.slice(-3), ["message_end", "turn_complete", "result"]);
  assert.equal(lines.at(-1).ok, true);
});

Deno.test("ask prints the answer as text when no JSON is asked for", async () => {
  await using llm = await startScriptedLlm({ scenario: READ_BPM });
  const r = await runAgent(["ask", QUESTION], { env: modelEnv(llm.url) });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^LINAC:BPM:01:X reads -?\d+(\.\d+)?(e-?\d+)? mm\.\n$/);
  assert.match(r.stderr, /✓ get_parameter \d+ ms → LINAC:BPM:01:X = /);
});

Deno.test("SIGINT cancels a stalled model stream with exit 130", async () => {
  await using llm = await startScriptedLlm({
    scenario: { turns: [{ respond: { fault: "stall", afterText: "Looking" } }] },
  });
  const r = await runAgent(["ask", "--json", QUESTION], {
    env: modelEnv(llm.url),
    onSpawn: async (child) => {
      await waitFor(() => llm.requests.length === 1, 60_000, "the model request");
      child.kill("SIGINT");
    },
    // The stream stalls for ever: only the signal can end the program.
    ceilingMs: 60_000,
  });
  assert.equal(r.code, 130, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.cancelled, true);
  assert.equal(out.exit_code, 130);
});

Deno.test("an unreachable model exits 1 with a one-line reason in the JSON", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  await using config = await tempConfig("[llm]\nmax_retries = 2\nretry_base_ms = 10\n");
  const r = await runAgent(["ask", "--json", "--config", config.path, QUESTION], {
    env: modelEnv(`http://127.0.0.1:${port}/v1`),
  });
  assert.equal(r.code, 1);
  const out = JSON.parse(r.stdout);
  assert.equal(out.ok, false);
  assert.match(out.error.message, /cannot reach the model endpoint/);
  assert.equal(out.error.retryable, true);
});

Deno.test("ask without a model endpoint exits 2 saying what to set", async () => {
  const r = await runAgent(["ask", QUESTION]);
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    // No public endpoint is assumed: a key alone names none.
    /no model endpoint is configured: set OPENAI_BASE_URL .* or \[llm\] base_url .*OPENAI_API_KEY/,
  );
  assert.equal(r.stderr.trim().split("\n").length, 1);
});

Deno.test("the model's malformed and unknown tool calls are answered and the turn still completes", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        {
          respond: {
            toolCalls: [
              { name: "get_parameter", arguments: '{"devices": ["LINAC:BPM:01:X"' },
              { name: "set_parameter", arguments: { device: "RF:PHASE:SETPT", value: 3 } },
            ],
          },
        },
        {
          expect: {
            toolResultIncludes: [
              "arguments are not valid JSON",
              'unknown tool \\"set_parameter\\"',
            ],
          },
          respond: { text: "I could not read it." },
        },
      ],
    },
  });
  const r = await runAgent(["ask", "--json", QUESTION], { env: modelEnv(llm.url) });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(llm.failures, []);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.tool_calls.map((c: { ok: boolean }) => c.ok), [false, false]);
});

Deno.test("a 429 with Retry-After is waited out and the answer still arrives", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [{ respond: { fault: "rate_limit", retryAfterMs: 50 } }, {
        respond: { text: "All quiet." },
      }],
    },
  });
  const r = await runAgent(["ask", "--stream-json", "status?"], { env: modelEnv(llm.url) });
  assert.equal(r.code, 0, r.stderr);
  const retry = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l)).find((e) =>
    e.type === "retry"
  );
  assert.equal(retry.delayMs, 50);
});

Deno.test("the system prompt carries the base prompt, AGENT.md and the context directories' files", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  await Deno.mkdir(`${dir}/context`);
  await Deno.writeTextFile(`${dir}/context/b_shift.md`, "Tonight: RF station 3 conditioning.\n");
  await Deno.writeTextFile(`${dir}/context/a_notes.md`, "Quad Q2 is on a spare supply.\n");
  await Deno.writeTextFile(`${dir}/context/ignored.txt`, "not markdown\n");
  await Deno.writeTextFile(`${dir}/AGENT.md`, "# Test Facility\nThe ring is 288 m.\n");
  await Deno.writeTextFile(
    `${dir}/c.toml`,
    '[agent]\nagent_md = "AGENT.md"\ncontext_dirs = ["context"]\n',
  );
  await using llm = await startScriptedLlm({ scenario: { turns: [{ respond: { text: "ok" } }] } });
  const r = await runAgent(["ask", "--json", "--config", `${dir}/c.toml`, "hi"], {
    env: modelEnv(llm.url),
  });
  assert.equal(r.code, 0, r.stderr);
  const system = String(llm.requests[0]?.body.messages[0]?.content);
  assert.match(system, /^You are accel-agent, an assistant for operators/);
  assert.match(system, /Current time: \d{4}-\d\d-\d\dT/);
  const order = [
    "The ring is 288 m.",
    "# Context: context/a_notes.md",
    "Quad Q2",
    "# Context: context/b_shift.md",
  ];
  const positions = order.map((s) => system.indexOf(s));
  assert.ok(positions.every((p) => p > 0), `all parts present: ${positions}`);
  assert.deepEqual([...positions].sort((a, b) => a - b), positions, "in this order");
  assert.ok(!system.includes("not markdown"));
});

Deno.test("a turn that never ends in an answer stops at max_iterations and exits 1", async () => {
  await using config = await tempConfig("[agent]\nmax_iterations = 2\n");
  const call = {
    respond: { toolCalls: [{ name: "search_device", arguments: { pattern: "RF:*" } }] },
  };
  await using llm = await startScriptedLlm({ scenario: { turns: [call, call] } });
  const r = await runAgent(["ask", "--json", "--config", config.path, "loop"], {
    env: modelEnv(llm.url),
  });
  assert.equal(r.code, 1);
  assert.match(JSON.parse(r.stdout).error.message, /stopped after 2 model calls/);
});
