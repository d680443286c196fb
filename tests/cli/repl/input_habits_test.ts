/**
 * The prompt's habits in a real terminal (tmux), against a scripted model:
 * the status line, continuation lines, a pasted block as one message, Tab
 * completion of commands and device names, and `/limits`.
 */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../../support/scripted_llm.ts";
import { HAS_TMUX, type TmuxSession } from "../../support/tmux.ts";
import { PROMPT, startRepl } from "../../support/repl_session.ts";
import { tempDir } from "../../support/temp.ts";

/** Screens are awaited up to this long: the machine is shared and may be slow. */
const CEILING = 60_000;
const ignore = !HAS_TMUX && !Deno.env.get("CI");

/** Presses Tab until the screen matches (the first Tab may only start loading the index). */
async function tabUntil(term: TmuxSession, re: RegExp): Promise<string> {
  const deadline = performance.now() + CEILING;
  for (;;) {
    await term.send("Tab");
    try {
      return await term.waitFor(re, 1_000);
    } catch (e) {
      if (performance.now() > deadline) throw e;
    }
  }
}

Deno.test({
  name:
    "REPL: the status line names model, backend and profile; a trailing backslash continues the line and a pasted block is one message",
  ignore,
  async fn() {
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          { expect: { userIncludes: "first line\nsecond line" }, respond: { text: "Got two." } },
          {
            expect: { userIncludes: "pasted one\npasted two\npasted three" },
            respond: { text: "Got the paste." },
          },
        ],
      },
    });
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path);
    let screen = await term.screen();
    assert.match(
      screen,
      /^accel-agent \d+\.\d+\.\d+ · model \S+ \(.+\) · simulator · profile operator$/m,
    );

    await term.type("first line\\");
    await term.send("Enter");
    await term.waitFor(/^\s+…$/m, CEILING);
    await term.type("second line");
    await term.send("Enter");
    await term.waitFor(/Got two\.[\s\S]*accel›\s*$/m, CEILING);

    await term.paste("pasted one\npasted two\npasted three");
    await term.waitFor(/accel› pasted one↵pasted two↵pasted three\s*$/m, CEILING);
    assert.equal(llm.requests.length, 1, "nothing was sent before Enter");
    await term.send("Enter");
    screen = await term.waitFor(/Got the paste\.[\s\S]*accel›\s*$/m, CEILING);
    assert.equal(llm.requests.length, 2, "the paste was one message");
    assert.deepEqual(llm.failures, []);
    // History keeps each message whole: ↑ brings back the paste, and the continued lines.
    await term.send("Up");
    await term.waitFor(/accel› pasted one↵pasted two↵pasted three\s*$/m, CEILING);
    await term.send("Up");
    await term.waitFor(/accel› first line↵second line\s*$/m, CEILING);
    await term.send("C-u");

    // Ctrl-C at a continuation line drops the lines typed so far.
    await term.type("not sent\\");
    await term.send("Enter");
    await term.waitFor(/^\s+…$/m, CEILING);
    await term.send("C-c");
    await term.waitFor(PROMPT, CEILING);
    await term.type("/quit");
    await term.send("Enter");
    await term.waitFor(/\[exit 0\]/, CEILING);
    assert.equal(llm.requests.length, 2);
  },
});

Deno.test({
  name:
    "REPL: Tab completes /li to /limits and a device prefix to its name; /limits shows the device's limits",
  ignore,
  async fn() {
    await using llm = await startScriptedLlm({ scenario: { turns: [] } });
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path);
    await term.type("/li");
    await term.send("Tab");
    await term.waitFor(/accel› \/limits\s*$/m, CEILING);
    await term.type(" RF:PHA");
    await tabUntil(term, /accel› \/limits RF:PHASE:\s*$/m);
    await term.type("S");
    await term.send("Tab");
    await term.waitFor(/accel› \/limits RF:PHASE:SETPT\s*$/m, CEILING);
    await term.send("Enter");
    let screen = await term.waitFor(/readback[\s\S]*accel›\s*$/m, CEILING);
    assert.match(screen, /entry\s+RF:PHASE:SETPT in .*safety_limits\.toml/);
    assert.match(screen, /writable\s+yes, within the limits below/);
    assert.match(screen, /range\s+-30 … 10 deg/);
    assert.match(screen, /max_step\s+2 deg/);
    assert.match(screen, /tolerance\s+0\.1 deg/);
    assert.match(screen, /readback\s+RF:PHASE:RDBK/);

    await term.type("/limits DIAG:ENERGY:MEAS");
    await term.send("Enter");
    screen = await term.waitFor(
      /DIAG:ENERGY:MEAS\n[\s\S]*writable\s+no[^\n]*\n[\s\S]*accel›\s*$/m,
      CEILING,
    );
    assert.match(screen, /writable\s+no: no entry in .*safety_limits\.toml/);

    // A pattern in the limits file covers a name the control system does not have.
    await term.type("/limits LINAC:COR:H99:SETPT");
    await term.send("Enter");
    screen = await term.waitFor(/H99:SETPT \(no such device\)[\s\S]*accel›\s*$/m, CEILING);
    assert.match(
      screen,
      /entry\s+LINAC:COR:\*:SETPT in .*\n\s+writable\s+no: the control system has no such device/,
    );

    await term.type("/limits");
    await term.send("Enter");
    await term.waitFor(/\/limits takes one device name/, CEILING);
    assert.deepEqual(llm.requests.length, 0, "none of this asked the model");
  },
});
