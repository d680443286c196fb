/**
 * The REPL on a disk that fills and frees: a turn whose saves fail says so
 * once and goes on; its messages stay unsaved until a save succeeds, and
 * the next turn writes them with its own.
 */
import assert from "node:assert/strict";
import { SessionStore } from "../../src/app/session_store.ts";
import { canMount, fill, mountTmpfs } from "../support/full_disk.ts";
import { startRepl } from "../support/repl_session.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { tempDir } from "../support/temp.ts";
import { HAS_TMUX } from "../support/tmux.ts";

Deno.test({
  name:
    "a REPL turn on a full disk says once that the session was not saved, and the next turn saves both",
  ignore: !HAS_TMUX || !(await canMount()),
  fn: async () => {
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [{ respond: { text: "First answer." } }, { respond: { text: "Second answer." } }],
      },
    });
    await using home = await tempDir();
    const sessions = `${home.path}/.local/state/accel-agent/sessions`;
    const unmount = await mountTmpfs(sessions, "64k");
    try {
      await fill(sessions);
      await using term = await startRepl(llm.url, home.path);
      await term.type("first question");
      await term.send("Enter");
      await term.waitFor(/First answer\.[\s\S]*accel›\s*$/m);
      const screen = await term.screen();
      assert.equal(screen.match(/session could not be saved/g)?.length, 1, screen);
      // Space again: the next turn's save writes the first turn too.
      await Deno.remove(`${sessions}/filler`);
      await term.type("second question");
      await term.send("Enter");
      await term.waitFor(/Second answer\.[\s\S]*accel›\s*$/m);
      await term.type("/quit");
      await term.send("Enter");
      await term.waitFor(/\[exit 0\]/);
      const saved = await new SessionStore(sessions).load();
      assert.deepEqual(
        saved.session.messages.map((m) => m.content),
        ["first question", "First answer.", "second question", "Second answer."],
      );
    } finally {
      await unmount();
    }
  },
});
