/**
 * The interactive session in a real terminal (tmux), against a scripted model.
 */
import assert from "node:assert/strict";
import { call } from "../agent/subagents/harness.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { HAS_TMUX } from "../support/tmux.ts";
import { startRepl } from "../support/repl_session.ts";
import { auditEntries } from "../support/audit_entries.ts";
import { tempDir } from "../support/temp.ts";
import { SCAN_PLAN } from "../../demo/session.ts";
import { phaseAtOperatingPoint } from "../support/sim_phase.ts";

Deno.test({
  name:
    "REPL: answers with tool calls shown, Ctrl-C cancels a stalled answer and keeps the session",
  // CI installs tmux; elsewhere a missing tmux skips rather than fails.
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          {
            respond: {
              toolCalls: [{ name: "get_parameter", arguments: { devices: ["RF:PHASE:SETPT"] } }],
            },
          },
          {
            respond: {
              text: "## RF phase\n\nThe phase is **{{last_tool_result.readings[0].value}}** deg.",
            },
          },
          { respond: { fault: "stall", afterText: "Let me" } },
          {
            expect: { userIncludes: "still there?" },
            respond: { text: "Yes." },
          },
        ],
      },
    });
    await using homeDir = await tempDir();
    const home = homeDir.path;
    await using term = await startRepl(llm.url, home);
    await term.type("what is the RF phase?");
    await term.send("Enter");
    let screen = await term.waitFor(/The phase is \S+ deg\.[\s\S]*accel›\s*$/m);
    assert.match(screen, /✓ get_parameter \d+ ms → RF:PHASE:SETPT = /);
    assert.match(screen, /^RF phase$/m, "the Markdown heading is rendered without #");

    await term.type("and the energy?");
    await term.send("Enter");
    await term.waitFor(/and the energy\?\s+Let me/);
    // The stream stalls for ever: only Ctrl-C brings the prompt back.
    await term.send("C-c");
    screen = await term.waitFor(/cancelled: cancelled by Ctrl-C[\s\S]*accel›\s*$/m);

    await term.type("still there?");
    await term.send("Enter");
    await term.waitFor(/Yes\.[\s\S]*accel›\s*$/m);

    await term.type("/history");
    await term.send("Enter");
    screen = await term.waitFor(/3 still there\?[\s\S]*accel›\s*$/m);
    assert.match(screen, /1 what is the RF phase\?/);

    await term.type("/cost");
    await term.send("Enter");
    await term.waitFor(/tokens this session: \d+ in/);

    await term.type("/quit");
    await term.send("Enter");
    await term.waitFor(/\[exit 0\]/);
    assert.deepEqual(llm.failures, []);
    const history = await Deno.readTextFile(`${home}/.local/state/accel-agent/history`);
    assert.match(
      history,
      /what is the RF phase\?\nand the energy\?\nstill there\?\n\/history\n\/cost\n\/quit\n/,
    );
  },
});

Deno.test({
  name: "REPL: Ctrl-C twice at an empty prompt leaves with exit 0",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using llm = await startScriptedLlm({ scenario: { turns: [] } });
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path);
    await term.send("C-c");
    await term.waitFor(/Ctrl-C again to leave/);
    await term.send("C-c");
    await term.waitFor(/\[exit 0\]/);
  },
});

Deno.test({
  name:
    "REPL: a scan plan's approval prompt is shown, answered, and the plan runs with a progress bar",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using homeDir = await tempDir();
    const home = homeDir.path;
    // The scan the demo replays: the energy read at each phase, rolled back in max_step steps.
    const scanPlan = SCAN_PLAN;
    const scan = SCAN_PLAN.actions[0] as { stop: number; steps: number };
    await phaseAtOperatingPoint();
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          { respond: { toolCalls: [{ name: "propose_plan", arguments: scanPlan }] } },
          {
            expect: { toolResultIncludes: ['"status":"completed"', '"decision":"approved"'] },
            respond: { text: "Scan done: {{last_tool_result.csv_files[0]}}" },
          },
        ],
      },
    });
    await using term = await startRepl(llm.url, home);
    await term.type(`scan the RF phase from -4 to ${scan.stop} deg`);
    await term.send("Enter");
    let screen = await term.waitFor(/Run this plan\?[\s\S]*all: run it as shown/);
    assert.match(screen, /RF phase scan around the operating point/);
    assert.match(screen, new RegExp(`RF:PHASE:SETPT\\s+│ -4 → -4 … ${scan.stop} deg`));
    assert.match(screen, new RegExp(`${scan.steps} points, dwell 0\\.3 s`));
    assert.match(screen, /plan hash [0-9a-f]{64}/);
    await term.send("Up");
    await term.send("Enter");
    screen = await term.waitFor(new RegExp(`\\[█+░*\\] \\d\\/${scan.steps}`));
    screen = await term.waitFor(/Scan done: \S+scan-[0-9a-f]{12}-0-\S+\.csv[\s\S]*Logbook entry:/);
    assert.match(screen, /plan [0-9a-f]{12} approved/);
    await term.send("Enter"); // post the plan's logbook draft
    await term.waitFor(/posted to the simulator's logbook .* as entry sim-1[\s\S]*accel›\s*$/m);
    await term.type("/quit");
    await term.send("Enter");
    await term.waitFor(/\[exit 0\]/);
    assert.deepEqual(llm.failures, []);
    const entries = await auditEntries(`${home}/.local/state/accel-agent`);
    assert.deepEqual(entries.map((e) => [e.decidedBy, e.status]), [
      ["terminal", "started"],
      ["terminal", "write_ahead"],
      ["terminal", "completed"],
      ["operator: terminal", "posted"],
    ]);
  },
});

Deno.test({
  name: "REPL: a single write defaults to no; choose runs only the changes picked",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using homeDir = await tempDir();
    const home = homeDir.path;
    const write = (device: string, value: number) => ({
      type: "write",
      device,
      value,
      reason: "test",
    });
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          {
            respond: call("propose_plan", {
              description: "one bump",
              actions: [write("LINAC:COR:H01:SETPT", -0.1)],
            }),
          },
          {
            expect: { toolResultIncludes: ['"status":"rejected"'] },
            respond: { text: "Left unchanged." },
          },
          {
            respond: call("propose_plan", {
              description: "two bumps",
              actions: [
                write("LINAC:COR:H01:SETPT", -0.1),
                { type: "wait", seconds: 0.1 },
                write("LINAC:COR:H02:SETPT", 0),
              ],
            }),
          },
          {
            expect: { toolResultIncludes: ['"decision":"partial"', '"status":"completed"'] },
            respond: { text: "One bump done." },
          },
        ],
      },
    });
    await using term = await startRepl(llm.url, home);
    await term.type("bump H01");
    await term.send("Enter");
    await term.waitFor(/Run this plan\? \(y\/N\)/);
    await term.send("Enter");
    await term.waitFor(/Left unchanged\.[\s\S]*accel›\s*$/m);

    await term.type("bump H01 and H02");
    await term.send("Enter");
    await term.waitFor(/choose: pick the changes to run/);
    await term.send("Down");
    await term.send("Down");
    await term.send("Enter");
    await term.waitFor(/Changes to run/);
    await term.send("Space"); // untick the first write
    await term.send("Enter");
    const screen = await term.waitFor(/two bumps[\s\S]*two bumps[\s\S]*all: run it as shown/);
    assert.match(screen.slice(screen.lastIndexOf("two bumps")), /LINAC:COR:H02:SETPT/);
    assert.doesNotMatch(screen.slice(screen.lastIndexOf("two bumps")), /LINAC:COR:H01:SETPT/);
    await term.send("Up");
    await term.send("Enter");
    await term.waitFor(/One bump done\.[\s\S]*Logbook entry:/);
    await term.send("Down");
    await term.send("Down");
    await term.send("Enter"); // skip the plan's logbook draft
    await term.waitFor(/logbook draft [0-9a-f]{8} skipped[\s\S]*accel›\s*$/m);
    assert.deepEqual(llm.failures, []);
    const entries = await auditEntries(`${home}/.local/state/accel-agent`);
    assert.deepEqual(entries.map((e) => [e.decision, e.decidedBy, e.status ?? null]), [
      ["rejected", "terminal", null],
      ["partial", "terminal", "started"],
      ["partial", "terminal", "write_ahead"],
      ["partial", "terminal", "completed"],
      ["elog_skipped", "operator: terminal", "skipped"],
    ]);
    assert.deepEqual(
      entries[3]?.plan.actions.map((a: { type: string; device?: string }) => a.device ?? a.type),
      [
        "wait",
        "LINAC:COR:H02:SETPT",
      ],
    );
  },
});
