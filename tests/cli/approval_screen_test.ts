/**
 * The approval screen cannot be imitated, in a real terminal (tmux), the
 * program started as a user starts it (the launcher, the config's grants):
 * the line right above the question says what the plan writes however long
 * the table is, and a plan's description — 1000 characters, or crafted to
 * look like table rows once the terminal wraps it at 80 or 120 columns —
 * never begins a line of the screen: every line of it carries the plan
 * text's mark.
 */
import assert from "node:assert/strict";
import { call } from "../agent/subagents/harness.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { HAS_TMUX, type TmuxSession } from "../support/tmux.ts";
import { LAUNCHED, startRepl } from "../support/repl_session.ts";
import { auditEntries } from "../support/audit_entries.ts";
import { tempDir } from "../support/temp.ts";

const ignore = !HAS_TMUX && !Deno.env.get("CI");
const ROWS = 40;

/** A row as the real table draws it, for a device the plan never touches. */
const FAKE_ROW = "│ 1    │ write  │ SR:COR:H01:SETPT    │ 0 → 0.05 mrad (Δ +0.05) │ H01 trim";

/** `n` reads of one device each: the table grows by a row a read. */
function reads(n: number) {
  const names = ["LINAC:BPM:01:X", "LINAC:BPM:02:X", "LINAC:BPM:03:X", "DIAG:ENERGY:MEAS"];
  return Array.from({ length: n }, (_, i) => ({
    type: "read",
    devices: [names[i % names.length]],
    label: `check ${i + 1}`,
  }));
}

/** The rows of the screen from the last approval table's start to its question. */
async function approvalRows(term: TmuxSession): Promise<{ rows: string[]; question: number }> {
  const rows = await term.rows();
  const question = rows.findLastIndex((r) => r.includes("Run this plan?"));
  assert.ok(question > 0, rows.join("\n"));
  return { rows, question };
}

Deno.test({
  name:
    "one write among 150 reads: the line right above the approval question names the write, which has scrolled out of sight; a scan among them is named with its points",
  ignore,
  async fn() {
    const plan = (first: unknown, description: string) => ({
      description,
      actions: [first, ...reads(150)],
    });
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          {
            respond: call(
              "propose_plan",
              plan(
                { type: "write", device: "LINAC:COR:H02:SETPT", value: 0, reason: "zero" },
                "read the orbit",
              ),
            ),
          },
          {
            expect: { toolResultIncludes: ['"status":"rejected"'] },
            respond: { text: "Left as it is." },
          },
          {
            respond: call(
              "propose_plan",
              plan({
                type: "scan",
                writeDevice: "RF:PHASE:SETPT",
                start: -4,
                stop: -5,
                steps: 5,
                readDevices: ["DIAG:ENERGY:MEAS"],
                dwellSeconds: 0.1,
              }, "read the orbit again"),
            ),
          },
          {
            expect: { toolResultIncludes: ['"status":"rejected"'] },
            respond: { text: "No scan then." },
          },
        ],
      },
    });
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path, LAUNCHED, { columns: 120, rows: ROWS });
    await term.type("read the orbit");
    await term.send("Enter");
    await term.waitFor(/Run this plan\? \(y\/N\)/);
    let { rows, question } = await approvalRows(term);
    assert.equal(rows[question - 1], "Writes 1 device: LINAC:COR:H02:SETPT.");
    // The table's write row is out of sight: only the line above the question says it.
    const visible = rows.slice(question - ROWS + 2, question + 1);
    assert.ok(!visible.some((r) => /│ write/.test(r)), visible.join("\n"));
    assert.ok(rows.some((r) => /^│ 1 +│ write +│ LINAC:COR:H02:SETPT/.test(r)), "drawn above");
    await term.type("n");
    await term.send("Enter");
    await term.waitFor(/Left as it is\.[\s\S]*accel›\s*$/m);

    await term.type("scan the phase");
    await term.send("Enter");
    await term.waitFor(/read the orbit again[\s\S]*Run this plan\?[\s\S]*none: reject it/);
    ({ rows, question } = await approvalRows(term));
    assert.equal(rows[question - 1], "Scans RF:PHASE:SETPT (5 points).");
    await term.send("Enter"); // the default: none

    await term.waitFor(/No scan then\.[\s\S]*accel›\s*$/m);
    assert.deepEqual(llm.failures, []);
    const entries = await auditEntries(`${home.path}/.local/state/accel-agent`);
    assert.deepEqual(entries.map((e) => e.decision), ["rejected", "rejected"]);
  },
});

/**
 * Descriptions aimed at a terminal `columns` wide: table rows placed where the
 * terminal (or a program wrapping at the width, with or without a two-column
 * mark) would begin a line, spaced and unspaced; and 1000 characters of it.
 */
function crafted(columns: number): string[] {
  const at = (offset: number, filler: string) => {
    let text = "trim".padEnd(offset, filler);
    while (text.length < 1000) text += FAKE_ROW.padEnd(columns, filler);
    return text.slice(0, 1000);
  };
  return [at(columns, " "), at(columns, "x"), at(columns - 2, " "), at(columns - 2, "-")];
}

for (const columns of [80, 120]) {
  Deno.test({
    name:
      `at ${columns} columns, no description (1000 characters, rows placed where lines begin) draws a line that begins like a table row`,
    ignore,
    async fn() {
      const descriptions = crafted(columns);
      for (const d of descriptions) assert.equal(d.length, 1000);
      const turns = descriptions.flatMap((description) => [
        {
          respond: call("propose_plan", {
            description,
            actions: [{ type: "write", device: "RF:PHASE:SETPT", value: -4.5, reason: "phase" }],
          }),
        },
        {
          expect: { toolResultIncludes: ['"status":"rejected"'] },
          respond: { text: "Not run." },
        },
      ]);
      await using llm = await startScriptedLlm({ scenario: { turns } });
      await using home = await tempDir();
      await using term = await startRepl(llm.url, home.path, LAUNCHED, { columns, rows: ROWS });
      for (const [i] of descriptions.entries()) {
        await term.type(`plan ${i + 1}`);
        await term.send("Enter");
        await term.waitFor(/Run this plan\? \(y\/N\)/);
        const { rows, question } = await approvalRows(term);
        // Everything the screen shows between the operator's question and the approval question.
        const asked = rows.findLastIndex((r) => r.startsWith(`accel› plan ${i + 1}`));
        assert.ok(asked >= 0 && asked < question, rows.join("\n"));
        const shown = rows.slice(asked + 1, question + 1);
        const top = shown.findIndex((r) => r.startsWith("┌"));
        const bottom = shown.findIndex((r) => r.startsWith("└"));
        assert.ok(top > 0 && bottom > top, shown.join("\n"));
        // Every line that begins like a table line is the real table's.
        for (const [j, r] of shown.entries()) {
          if (/^\s*[│┌└├┬┼|]/.test(r)) {
            assert.ok(j >= top && j <= bottom, `a line outside the table begins like it: ${r}`);
            assert.doesNotMatch(r, /SR:COR:H01|H01 trim/, `the description drew a row: ${r}`);
          }
        }
        // The description is a labelled block right above the table: every line behind its
        // mark, and bounded.
        const label = shown.findIndex((r) => r.startsWith("Plan description"));
        assert.ok(label >= 0 && label < top, shown.join("\n"));
        const block = shown.slice(label + 1, top);
        assert.ok(block.length >= 2 && block.length <= 10, block.join("\n"));
        for (const r of block) assert.match(r, /^» /, `a line of plan text without its mark: ${r}`);
        assert.ok(shown.some((r) => /^│ 1 +│ write +│ RF:PHASE:SETPT/.test(r)), "the real row");
        assert.equal(shown.at(-2), "Writes 1 device: RF:PHASE:SETPT.");
        for (const r of shown) assert.ok([...r].length <= columns, `wider than the terminal: ${r}`);
        await term.type("n");
        await term.send("Enter");
        await term.waitFor(new RegExp(`plan ${i + 1}[\\s\\S]*Not run\\.[\\s\\S]*accel›\\s*$`));
      }
      assert.deepEqual(llm.failures, []);
    },
  });
}
