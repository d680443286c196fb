/**
 * A hostile model's arguments, as a user runs the program (through the
 * launcher, with the config's real grants): JSON nested a million (or a hundred thousand) levels
 * deep is a result the model reads, not a stack overflow that ends the turn
 * as an internal error, and the turn goes on to its answer.
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";
import { type ChatRequest, startScriptedLlm } from "../support/scripted_llm.ts";

Deno.test("tool arguments nested a million levels deep are refused as results; the turn answers", async () => {
  await using user = await UserSetup.start();
  const n = 1_000_000;
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        {
          respond: {
            toolCalls: [
              {
                id: "a",
                name: "get_parameter",
                arguments: `{"devices":${"[".repeat(n)}${"]".repeat(n)}}`,
              },
              {
                id: "b",
                name: "propose_plan",
                arguments: `{"description":"x","actions":${'{"a":'.repeat(n / 10)}1${
                  "}".repeat(n / 10)
                }}`,
              },
            ],
            chunkSize: 1 << 16,
          },
        },
        { respond: { text: "Those calls were malformed." } },
      ],
    },
  });
  const r = await user.run(["ask", "--json", "Read H01."], {
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
    ceilingMs: 120_000,
  });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.answer, "Those calls were malformed.");
  const tools = (llm.requests[1]?.body as ChatRequest).messages.filter((m) => m.role === "tool");
  assert.equal(tools.length, 2);
  for (const t of tools) {
    assert.match(String(t.content), /arguments are nested more than 64 levels deep/);
  }
  assert.deepEqual(user.writes, []);
});
