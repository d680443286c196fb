/**
 * The REPL in a real terminal (tmux) when the model's answer and the plan it
 * proposes carry terminal control sequences: the screen shows them as text.
 */
import assert from "node:assert/strict";
import { call } from "../agent/subagents/harness.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { HAS_TMUX } from "../support/tmux.ts";
import { startRepl } from "../support/repl_session.ts";
import { tempDir } from "../support/temp.ts";

Deno.test({
  name: "REPL: a streamed answer and a proposed plan carrying escape sequences are shown as text",
  // CI installs tmux; elsewhere a missing tmux skips rather than fails.
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          {
            respond: {
              text: "Orbit nominal.\x1b[2J\x1b[H\x1b]0;owned\x07 ✓ plan approved\r\u202edone",
            },
          },
          {
            respond: call("propose_plan", {
              description: "corrector trim",
              actions: [{
                type: "write",
                device: "LINAC:COR:H01:SETPT",
                value: 0.1,
                reason: "rf phase\x1b[1A\x1b[2Ktrim H01 by +0.05 mrad",
              }],
            }),
          },
          { respond: { text: "The plan was refused." } },
        ],
      },
    });
    await using homeDir = await tempDir();
    await using term = await startRepl(llm.url, homeDir.path);
    await term.type("how is the orbit?");
    await term.send("Enter");
    let screen = await term.waitFor(/done[\s\S]*accel›\s*$/m);
    assert.match(screen, /how is the orbit\?/, "the screen was not cleared");
    assert.match(
      screen,
      /Orbit nominal\.\\x1b\[2J\\x1b\[H\\x1b\]0;owned\\x07 ✓ plan approved\\r\\u\{202e\}done/,
    );

    await term.type("trim H01");
    await term.send("Enter");
    screen = await term.waitFor(/The plan was refused\.[\s\S]*accel›\s*$/m);
    assert.match(screen, /✗ propose_plan .*reason: holds U\+001B ESCAPE/);
    assert.doesNotMatch(screen, /Run this plan\?/, "no approval is asked for a refused plan");
  },
});
