/**
 * The lines right above the approval question name every device the plan
 * writes, in a real terminal (tmux), the program started as a user starts it
 * (the launcher, the config's grants): three harmless corrector writes put
 * first cannot push the RF phase write into "and 1 more" while 150 reads
 * scroll the table away.
 */
import assert from "node:assert/strict";
import { call } from "../agent/subagents/harness.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { HAS_TMUX } from "../support/tmux.ts";
import { LAUNCHED, startRepl } from "../support/repl_session.ts";
import { tempDir } from "../support/temp.ts";

const ignore = !HAS_TMUX && !Deno.env.get("CI");
const ROWS = 40;

Deno.test({
  name:
    "three corrector writes, the RF phase and 150 reads: the lines above the approval question name the RF phase",
  ignore,
  async fn() {
    const write = (device: string, value: number) => ({
      type: "write",
      device,
      value,
      reason: "r",
    });
    const reads = Array.from(
      { length: 150 },
      () => ({ type: "read", devices: ["LINAC:BPM:01:X"] }),
    );
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          {
            respond: call("propose_plan", {
              description: "trim the orbit",
              actions: [
                write("LINAC:COR:H01:SETPT", -0.1),
                write("LINAC:COR:H02:SETPT", 0),
                write("LINAC:COR:H03:SETPT", 0),
                write("RF:PHASE:SETPT", -4.5),
                ...reads,
              ],
            }),
          },
          {
            expect: { toolResultIncludes: ['"status":"rejected"'] },
            respond: { text: "Left as it is." },
          },
        ],
      },
    });
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path, LAUNCHED, { columns: 80, rows: ROWS });
    await term.type("trim the orbit");
    await term.send("Enter");
    await term.waitFor(/Run this plan\?[\s\S]*none: reject it/);
    const rows = await term.rows();
    const question = rows.findLastIndex((r) => r.includes("Run this plan?"));
    const bottom = rows.findLastIndex((r, i) => i < question && r.startsWith("plan hash "));
    assert.ok(bottom > 0 && question > bottom, rows.join("\n"));
    // The predicted effect comes first, then what the plan writes, right above the question.
    const writes = rows.findIndex((r, i) => i > bottom && r.startsWith("Writes "));
    assert.ok(writes > bottom, rows.join("\n"));
    assert.match(
      rows.slice(bottom + 1, writes).map((r) => r.trim()).join(" "),
      /^Predicted effect \(a prediction: simulator: the plan run on a copy of the live facility, made /,
    );
    const summary = rows.slice(writes, question).map((r) => r.trim()).join(" ");
    assert.equal(
      summary,
      "Writes 4 devices: LINAC:COR:H01:SETPT, LINAC:COR:H02:SETPT, LINAC:COR:H03:SETPT, " +
        "RF:PHASE:SETPT.",
    );
    // The table's RF row is out of sight: only the summary says it.
    assert.ok(!rows.slice(question - ROWS + 2).some((r) => /│ write +│ RF:PHASE/.test(r)));
    await term.send("Enter"); // the default: none
    await term.waitFor(/Left as it is\.[\s\S]*accel›\s*$/m);
    assert.deepEqual(llm.failures, []);
  },
});
