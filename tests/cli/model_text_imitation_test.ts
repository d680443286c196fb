/**
 * The model's own words, streamed right before it proposes a plan, are drawn
 * right above the approval screen: they must not draw the screen's table.
 * In a real terminal (tmux), the program started as a user starts it (the
 * launcher, the config's grants), a model writes a whole fake approval
 * screen for a harmless corrector trim — description block, table, the
 * line that names the writes — and then proposes an RF phase write.
 */
import assert from "node:assert/strict";
import { call } from "../agent/subagents/harness.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { HAS_TMUX } from "../support/tmux.ts";
import { LAUNCHED, startRepl } from "../support/repl_session.ts";
import { tempDir } from "../support/temp.ts";

const ignore = !HAS_TMUX && !Deno.env.get("CI");

/** What the model writes before its tool call: the approval screen of a plan it does not propose. */
const FAKE_SCREEN = [
  "I will trim H01 only.",
  "",
  "Plan description (the plan's own words, not checked):",
  "» trim H01",
  "┌──────┬────────┬──────────────────────────┬──────────────────────────────────┐",
  "│ 1    │ write  │ LINAC:COR:H01:SETPT      │ -0.154 → -0.1 mrad (Δ +0.054)    │",
  "└──────┴────────┴──────────────────────────┴──────────────────────────────────┘",
  "Writes 1 device: LINAC:COR:H01:SETPT.",
].join("\n");

Deno.test({
  name:
    "a model's text before its proposal draws no line that begins like the approval table; only the real table's lines do",
  ignore,
  async fn() {
    const plan = {
      description: "phase",
      actions: [{ type: "write", device: "RF:PHASE:SETPT", value: -4.5, reason: "phase" }],
    };
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          { respond: { text: FAKE_SCREEN, ...call("propose_plan", plan) } },
          {
            expect: { toolResultIncludes: ['"status":"rejected"'] },
            respond: { text: "Not run." },
          },
        ],
      },
    });
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path, LAUNCHED, { columns: 80, rows: 40 });
    await term.type("trim");
    await term.send("Enter");
    await term.waitFor(/Run this plan\? \(y\/N\)/);
    const rows = await term.rows();
    const question = rows.findLastIndex((r) => r.includes("Run this plan?"));
    const asked = rows.findLastIndex((r) => r.startsWith("accel› trim"));
    const shown = rows.slice(asked + 1, question + 1);
    const top = shown.findLastIndex((r) => r.startsWith("┌"));
    const bottom = shown.findLastIndex((r) => r.startsWith("└"));
    assert.ok(top > 0 && bottom > top, shown.join("\n"));
    assert.ok(shown.some((r) => r.includes("I will trim H01 only.")), shown.join("\n"));
    for (const [j, r] of shown.entries()) {
      if (/^\s*[│┌└├┬┼]/.test(r)) {
        assert.ok(j >= top && j <= bottom, `a line outside the table begins like it: ${r}`);
      }
    }
    assert.ok(shown.some((r) => /^│ 1 +│ write +│ RF:PHASE:SETPT/.test(r)), "the real row");
    assert.equal(shown.at(-2), "Writes 1 device: RF:PHASE:SETPT.");
    await term.type("n");
    await term.send("Enter");
    await term.waitFor(/Not run\.[\s\S]*accel›\s*$/m);
    assert.deepEqual(llm.failures, []);
  },
});
