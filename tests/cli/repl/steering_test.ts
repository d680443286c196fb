/**
 * Steering in a real terminal (tmux): what the operator types while a turn
 * runs is shown on a line of its own, queued, and given to the model — at
 * the turn's next step, or as the next question when no step is left.
 */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../../support/scripted_llm.ts";
import { HAS_TMUX } from "../../support/tmux.ts";
import { PROMPT, startRepl } from "../../support/repl_session.ts";
import { tempDir } from "../../support/temp.ts";

const CEILING = 60_000;
const ignore = !HAS_TMUX && !Deno.env.get("CI");

/** A promise the test resolves: the scripted model answers only once it is. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open = () => {};
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

/** Waits until `check` holds, polling, up to the ceiling. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + CEILING;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test({
  name:
    "REPL: a line typed during an answer is echoed as queued on its own line and, with no step left to take it, becomes the next question",
  ignore,
  async fn() {
    const first = gate();
    const stalled = gate();
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          async () => {
            await first.wait;
            return { text: "First answer." };
          },
          { expect: { userIncludes: "also check the RF" }, respond: { text: "RF checked." } },
          async () => {
            await stalled.wait;
            return { text: "too late" };
          },
        ],
      },
    });
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path);
    await term.type("how is the beam?");
    await term.send("Enter");
    await until(() => llm.requests.length === 1, "the model was asked");
    await term.type("also check the RF");
    await term.send("Enter");
    let screen = await term.waitFor(/queued for the next step/, CEILING);
    assert.match(screen, /^› also check the RF {2}\(queued for the next step\)$/m);
    first.open();
    screen = await term.waitFor(/RF checked\.[\s\S]*accel›\s*$/m, CEILING);
    assert.match(screen, /^First answer\.$/m, "the answer's line is not mixed with the typing");
    assert.match(screen, /^accel› also check the RF$/m, "sent as the next question");
    assert.equal(llm.requests.length, 2);
    assert.deepEqual(llm.failures, []);

    // Ctrl-C still cancels a turn while the operator is typing; what was queued is not sent.
    await term.type("one more");
    await term.send("Enter");
    await until(() => llm.requests.length === 3, "the model was asked again");
    await term.type("queued then cancelled");
    await term.send("Enter");
    await term.waitFor(/queued then cancelled {2}\(queued/, CEILING);
    await term.type("half a line");
    await term.send("C-c");
    screen = await term.waitFor(/cancelled by Ctrl-C[\s\S]*accel›\s*$/m, CEILING);
    assert.match(screen, /not sent, the answer was cancelled: queued then cancelled/);
    stalled.open();
    await term.type("/quit");
    await term.send("Enter");
    await term.waitFor(/\[exit 0\]/, CEILING);
    assert.equal(llm.requests.length, 3, "nothing typed during the cancelled turn was sent");
  },
});

Deno.test({
  name:
    "REPL: a line typed during the first step reaches the model in the same turn's second request",
  ignore,
  async fn() {
    const first = gate();
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          async () => {
            await first.wait;
            return {
              toolCalls: [{ name: "get_parameter", arguments: { devices: ["RF:PHASE:SETPT"] } }],
            };
          },
          {
            expect: { userIncludes: "use the readback instead" },
            respond: { text: "Using the readback." },
          },
        ],
      },
    });
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path);
    await term.type("what is the RF phase?");
    await term.send("Enter");
    await until(() => llm.requests.length === 1, "the model was asked");
    await term.type("use the readback instead");
    await term.send("Enter");
    await term.waitFor(/queued for the next step/, CEILING);
    first.open();
    const screen = await term.waitFor(/Using the readback\.[\s\S]*accel›\s*$/m, CEILING);
    assert.match(screen, /given to the model: use the readback instead/);
    assert.equal(llm.requests.length, 2, "given within the turn, not as a new question");
    assert.deepEqual(llm.failures, []);
    await term.waitFor(PROMPT, CEILING);
  },
});
