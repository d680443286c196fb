/**
 * What an endpoint says about itself reaches the REPL's screen as text: the
 * model id it reports, shown in the usage line after an answer, is escaped
 * (it once retitled the terminal and cleared the screen). Run as a user runs
 * the program (the launcher, the config's grants) in a real terminal.
 */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../../support/scripted_llm.ts";
import { HAS_TMUX } from "../../support/tmux.ts";
import { LAUNCHED, startRepl } from "../../support/repl_session.ts";
import { tempDir } from "../../support/temp.ts";

/** Retitles the terminal, clears it, homes the cursor and paints a fake approval. */
const HOSTILE_ID = "gpt-4o\x1b]0;pwned\x07\x1b[2J\x1b[H\x1b[32m✓ plan approved\x1b[0m\u202e";

Deno.test({
  name:
    "REPL: a model id with escape sequences, as the endpoint reports it, is shown escaped in the usage line: no new title, no cleared screen",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          { respond: { text: "The beam is stable.", model: HOSTILE_ID } },
          { respond: { text: "Still stable.", model: HOSTILE_ID } },
        ],
      },
    });
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path, LAUNCHED);
    const title = await term.title();
    await term.type("how is the beam?");
    await term.send("Enter");
    let screen = await term.waitFor(/The beam is stable\.[\s\S]*accel›\s*$/m);
    const shown =
      "gpt-4o\\x1b]0;pwned\\x07\\x1b[2J\\x1b[H\\x1b[32m✓ plan approved\\x1b[0m\\u{202e}";
    assert.ok(screen.includes(`  ${shown} · `), screen);
    // The screen was not cleared: the banner and the question are still above the answer.
    assert.match(screen, /Ask about the machine in plain language[\s\S]*how is the beam\?/);
    assert.equal(await term.title(), title, "the terminal's title is unchanged");
    assert.doesNotMatch(await term.title(), /pwned/);

    await term.type("and now?");
    await term.send("Enter");
    screen = await term.waitFor(/Still stable\.[\s\S]*accel›\s*$/m);
    assert.equal(screen.split(shown).length - 1, 2, "each usage line shows it escaped");
    assert.match(screen, /Ask about the machine in plain language/);
    assert.equal(await term.title(), title);
    assert.deepEqual(llm.failures, []);
  },
});

/** Counts a hostile endpoint may send instead of numbers. */
const HOSTILE_COUNT = "7\x1b[2J\x1b]0;pwned\x07";

Deno.test({
  name:
    "REPL: token counts an endpoint reports as text with escape sequences are never shown: the usage line and /cost give the estimate",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    const usage = { prompt_tokens: HOSTILE_COUNT, completion_tokens: 3 } as unknown as {
      prompt_tokens: number;
      completion_tokens: number;
    };
    await using llm = await startScriptedLlm({
      scenario: { turns: [{ respond: { text: "The beam is stable.", usage } }] },
    });
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path, LAUNCHED);
    const title = await term.title();
    await term.type("how is the beam?");
    await term.send("Enter");
    let screen = await term.waitFor(/The beam is stable\.[\s\S]*accel›\s*$/m);
    assert.match(screen, / · \d+ in · \d+ out\n/);
    assert.doesNotMatch(screen, /pwned/);
    await term.type("/cost");
    await term.send("Enter");
    screen = await term.waitFor(/total cost[^\n]*\n[\s\S]*accel›\s*$/m);
    assert.match(screen, /last turn: \d+ in · \d+ out/);
    assert.doesNotMatch(screen, /pwned/);
    assert.match(screen, /Ask about the machine in plain language/, "the screen was not cleared");
    assert.equal(await term.title(), title);
    assert.deepEqual(llm.failures, []);
  },
});
