/**
 * A Ctrl-C that reaches the REPL as SIGINT at the prompt (between two
 * prompts the terminal is briefly out of raw mode) is a Ctrl-C at the
 * prompt, never the end of the program.
 */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../../support/scripted_llm.ts";
import { HAS_TMUX } from "../../support/tmux.ts";
import { startRepl } from "../../support/repl_session.ts";
import { MAIN } from "../../support/run_agent.ts";
import { tempDir } from "../../support/temp.ts";

const CEILING = 60_000;

Deno.test({
  name: "REPL: SIGINT at the prompt counts as Ctrl-C there: twice leaves with exit 0",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using llm = await startScriptedLlm({ scenario: { turns: [] } });
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path);
    const [pid] = await term.processes(MAIN);
    assert.ok(pid, "the program runs in the pane");
    Deno.kill(pid, "SIGINT");
    await term.waitFor(/Ctrl-C again to leave/, CEILING);
    Deno.kill(pid, "SIGINT");
    await term.waitFor(/\[exit 0\]/, CEILING);
  },
});

Deno.test({
  name:
    "REPL: keys typed ahead in one burst after a Ctrl-C and an Enter reach the next prompt, none lost",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [{ expect: { userIncludes: "abc" }, respond: { text: "Got abc." } }],
      },
    });
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path);
    // One write to the terminal: a line, Ctrl-C, Enter (an empty line), then the next question.
    await term.type("x\x03\rabc");
    await term.waitFor(/accel› abc\s*$/m, CEILING);
    await term.send("Enter");
    await term.waitFor(/Got abc\.[\s\S]*accel›\s*$/m, CEILING);
    assert.equal(llm.requests.length, 1);
    assert.deepEqual(llm.failures, []);
  },
});
