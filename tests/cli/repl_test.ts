/**
 * The interactive session in a real terminal (tmux), against a scripted model.
 */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { AGENT_FLAGS, childEnv, MAIN, ROOT } from "../support/run_agent.ts";
import { HAS_TMUX, TmuxSession } from "../support/tmux.ts";

const PROMPT = /accel›\s*$/m;

Deno.test({
  name:
    "REPL: answers with tool calls shown, Ctrl-C cancels a stalled answer and keeps the session",
  // CI installs tmux; elsewhere a missing tmux skips rather than fails.
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          {
            respond: {
              toolCalls: [{ name: "get_parameter", arguments: { devices: ["RF:PHASE:SETPT"] } }],
            },
          },
          {
            respond: {
              text: "## RF phase\n\nThe phase is **{{last_tool_result.readings[0].value}}** deg.",
            },
          },
          { respond: { fault: "stall", afterText: "Let me" } },
          {
            expect: { userIncludes: "still there?" },
            respond: { text: "Yes." },
          },
        ],
      },
    });
    const home = await Deno.makeTempDir();
    await using term = await TmuxSession.start(
      [Deno.execPath(), "run", ...AGENT_FLAGS, MAIN],
      childEnv({ OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k", HOME: home }),
      ROOT,
    );
    await term.waitFor(PROMPT);
    await term.type("what is the RF phase?");
    await term.send("Enter");
    let screen = await term.waitFor(/The phase is \S+ deg\.[\s\S]*accel›\s*$/m);
    assert.match(screen, /✓ get_parameter \d+ ms → RF:PHASE:SETPT = /);
    assert.match(screen, /^RF phase$/m, "the Markdown heading is rendered without #");

    await term.type("and the energy?");
    await term.send("Enter");
    await term.waitFor(/and the energy\?\s+Let me/);
    await new Promise((r) => setTimeout(r, 200));
    const sent = performance.now();
    await term.send("C-c");
    screen = await term.waitFor(/cancelled: cancelled by Ctrl-C[\s\S]*accel›\s*$/m, 5_000);
    assert.ok(performance.now() - sent < 2_000, "back at the prompt promptly");

    await term.type("still there?");
    await term.send("Enter");
    await term.waitFor(/Yes\.[\s\S]*accel›\s*$/m);

    await term.type("/history");
    await term.send("Enter");
    screen = await term.waitFor(/3 still there\?[\s\S]*accel›\s*$/m);
    assert.match(screen, /1 what is the RF phase\?/);

    await term.type("/cost");
    await term.send("Enter");
    await term.waitFor(/tokens this session: \d+ in/);

    await term.type("/quit");
    await term.send("Enter");
    await term.waitFor(/\[exit 0\]/);
    assert.deepEqual(llm.failures, []);
    const history = await Deno.readTextFile(`${home}/.local/state/accel-agent/history`);
    assert.match(
      history,
      /what is the RF phase\?\nand the energy\?\nstill there\?\n\/history\n\/cost\n\/quit\n/,
    );
  },
});

Deno.test({
  name: "REPL: Ctrl-C twice at an empty prompt leaves with exit 0",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using llm = await startScriptedLlm({ scenario: { turns: [] } });
    await using term = await TmuxSession.start(
      [Deno.execPath(), "run", ...AGENT_FLAGS, MAIN],
      childEnv({ OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k", HOME: await Deno.makeTempDir() }),
      ROOT,
    );
    await term.waitFor(PROMPT);
    await term.send("C-c");
    await term.waitFor(/Ctrl-C again to leave/);
    await term.send("C-c");
    await term.waitFor(/\[exit 0\]/);
  },
});
