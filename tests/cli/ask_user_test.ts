/**
 * `ask_user`: in one-shot mode nobody can answer; in the REPL the operator
 * answers at a prompt between the answer's output.
 */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { runAgent } from "../support/run_agent.ts";
import { HAS_TMUX } from "../support/tmux.ts";
import { startRepl } from "../support/repl_session.ts";
import { tempDir } from "../support/temp.ts";

const ASK = {
  respond: {
    toolCalls: [{ name: "ask_user", arguments: { question: "Which RF station do you mean?" } }],
  },
};

Deno.test("ask_user in one-shot mode returns at once that no operator is available", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [ASK, {
        expect: { toolResultIncludes: ['"note":"no operator available"'] },
        respond: { text: "Assuming station 3." },
      }],
    },
  });
  const r = await runAgent(["ask", "--json", "check the RF station"], {
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(llm.failures, []);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.tool_calls[0].result, { answer: null, note: "no operator available" });
  assert.equal(out.answer, "Assuming station 3.");
});

Deno.test({
  name: "ask_user in the REPL asks the operator at a prompt and gives the model the answer",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [ASK, {
          expect: { toolResultIncludes: ['"answer":"number 3"'] },
          respond: { text: "Checking station 3 now." },
        }],
      },
    });
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path);
    await term.type("check the RF station");
    await term.send("Enter");
    await term.waitFor(/The assistant asks: Which RF station do you mean\?[\s\S]*Your answer/);
    await term.type("number 3");
    await term.send("Enter");
    await term.waitFor(/Checking station 3 now\.[\s\S]*accel›\s*$/m);
    await term.type("/quit");
    await term.send("Enter");
    await term.waitFor(/\[exit 0\]/);
    assert.deepEqual(llm.failures, []);
  },
});
