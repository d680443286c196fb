/**
 * Bracketed paste is asked for only while the prompt is open: leaving with
 * Ctrl-D, or being stopped by SIGTERM or SIGHUP at the prompt, hands the
 * shell a terminal whose pastes are plain again.
 */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../../support/scripted_llm.ts";
import { HAS_TMUX, type TmuxSession } from "../../support/tmux.ts";
import { startRepl } from "../../support/repl_session.ts";
import { MAIN } from "../../support/run_agent.ts";
import { tempDir } from "../../support/temp.ts";

const CEILING = 60_000;

/** After the program ended, a paste reaches the shell's `sleep` without paste markers. */
async function assertPlainPaste(term: TmuxSession, exit: number): Promise<void> {
  await term.waitFor(new RegExp(`\\[exit ${exit}\\]`), CEILING);
  await term.paste("pasted-after-exit");
  const screen = await term.waitFor(/pasted-after-exit/, CEILING);
  assert.doesNotMatch(screen, /\[20[01]~/, "the terminal still marks pastes");
}

for (
  const how of [
    { name: "Ctrl-D", exit: 0 },
    { name: "SIGTERM", exit: 143 },
    { name: "SIGHUP", exit: 129 },
  ] as const
) {
  Deno.test({
    name: `REPL: leaving the prompt by ${how.name} turns bracketed paste off again`,
    ignore: !HAS_TMUX && !Deno.env.get("CI"),
    async fn() {
      await using llm = await startScriptedLlm({ scenario: { turns: [] } });
      await using home = await tempDir();
      await using term = await startRepl(llm.url, home.path);
      if (how.name === "Ctrl-D") {
        await term.send("C-d");
      } else {
        const [pid] = await term.processes(MAIN);
        assert.ok(pid, "the program runs in the pane");
        Deno.kill(pid, how.name);
      }
      await assertPlainPaste(term, how.exit);
    },
  });
}
