/**
 * The REPL in a real terminal, started as `deno task agent` starts it (the
 * launcher, the config's grants, the editor `$EDITOR` names): after each
 * plan that ran, its logbook draft is shown with post / edit / skip. Post
 * files it in the simulator's logbook; edit opens `$EDITOR` on the text and
 * shows it again; skip posts nothing and the audit says so.
 *
 * @module
 */
import assert from "node:assert/strict";
import { HAS_TMUX, TmuxSession } from "../support/tmux.ts";
import { READY } from "../support/repl_session.ts";
import { childEnv, ROOT } from "../support/run_agent.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { tempDir } from "../support/temp.ts";
import { LAUNCHER_FLAGS, runAsUser } from "../support/user_grants.ts";
import { auditEntries } from "../support/audit_entries.ts";

const DEVICE = "LINAC:COR:H01:SETPT";

Deno.test({
  name: "REPL: each plan's logbook draft is posted, edited in $EDITOR then posted, or skipped",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using tmp = await tempDir();
    const state = `${tmp.path}/state`;
    const config = `${tmp.path}/config.toml`;
    const editor = `${tmp.path}/edit.sh`;
    await Deno.writeTextFile(
      config,
      `[state]\ndir = ${JSON.stringify(state)}\n\n[safety]\nlimits_file = ${
        JSON.stringify(`${ROOT}/configs/safety_limits.toml`)
      }\n\n[sandbox]\nwork_dir = ${JSON.stringify(`${tmp.path}/work`)}\nprewarm = false\n`,
    );
    await Deno.writeTextFile(
      editor,
      "#!/bin/sh\nprintf '\\nEdited by the operator: corrector was warm.\\n' >> \"$1\"\n",
    );
    await Deno.chmod(editor, 0o755);
    const got = await runAsUser(["--config", config, "get", DEVICE, "--json"]);
    const v = JSON.parse(got.stdout).readings[0].value as number;
    const plan = (value: number, what: string) => ({
      respond: {
        toolCalls: [{
          name: "propose_plan",
          arguments: {
            description: what,
            actions: [{ type: "write", device: DEVICE, value, reason: what }],
          },
        }],
      },
    });
    const done = (text: string) => ({
      expect: { toolResultIncludes: ['"status":"completed"'] },
      respond: { text },
    });
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          plan(v + 0.05, "first trim"),
          done("First done."),
          plan(v, "trim back"),
          done("Back done."),
          plan(v + 0.05, "third trim"),
          done("Third done."),
        ],
      },
    });
    await using term = await TmuxSession.start(
      [Deno.execPath(), "run", ...LAUNCHER_FLAGS, `${ROOT}/launch.ts`, "--config", config],
      childEnv({
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "k",
        HOME: tmp.path,
        // The launcher grants the program $EDITOR names, and that one only.
        EDITOR: editor,
      }),
      ROOT,
    );
    await term.waitFor(READY);
    const turn = async (question: string, answer: RegExp) => {
      await term.type(question);
      await term.send("Enter");
      await term.waitFor(/Run this plan\? \(y\/N\)\s*$/m);
      await term.type("y");
      await term.send("Enter");
      return await term.waitFor(
        new RegExp(
          `${answer.source}[\\s\\S]*Logbook entry:[\\s\\S]*post: send it to the simulator's logbook[\\s\\S]*skip: no entry`,
        ),
      );
    };

    let screen = await turn("trim H01", /First done\./);
    assert.match(screen, /logbook draft [0-9a-f]{8} → the simulator's logbook/);
    assert.match(screen, /Plan completed: first trim/);
    assert.match(screen, new RegExp(`\\| \`${DEVICE}\` \\| ${v} \\| ${v + 0.05} \\|`));
    await term.send("Enter"); // post (the default)
    await term.waitFor(
      /✓ posted to the simulator's logbook \(.*\) as entry sim-1[\s\S]*accel›\s*$/,
    );

    await turn("put it back", /Back done\./);
    await term.send("Down");
    await term.send("Enter"); // edit
    screen = await term.waitFor(
      /Edited by the operator: corrector was warm\.[\s\S]*Logbook entry:/,
    );
    await term.send("Enter"); // post the edited text
    await term.waitFor(/as entry sim-2[\s\S]*accel›\s*$/);

    await turn("trim again", /Third done\./);
    await term.send("Down");
    await term.send("Down");
    await term.send("Enter"); // skip
    await term.waitFor(
      /logbook draft [0-9a-f]{8} skipped \(recorded in the audit\)[\s\S]*accel›\s*$/,
    );
    await term.type("/quit");
    await term.send("Enter");
    await term.waitFor(/\[exit 0\]/);
    assert.deepEqual(llm.failures, []);

    const book = (await Deno.readTextFile(`${state}/elog/simulator.jsonl`)).trim().split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(book.map((e) => [e.id, e.title]), [
      ["sim-1", "Plan completed: first trim"],
      ["sim-2", "Plan completed: trim back"],
    ]);
    assert.match(book[1].text, /Edited by the operator: corrector was warm\.\n$/);
    assert.doesNotMatch(book[0].text, /Edited/);
    const audit = await auditEntries(state);
    assert.deepEqual(
      audit.filter((e) => e.decision.startsWith("elog")).map((e) => [e.decision, e.decidedBy]),
      [
        ["elog_posted", "operator: terminal"],
        ["elog_posted", "operator: terminal"],
        ["elog_skipped", "operator: terminal"],
      ],
    );
  },
});

Deno.test({
  name: "plan run in a terminal asks post / edit / skip for the plan's logbook draft",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using tmp = await tempDir();
    const state = `${tmp.path}/state`;
    const config = `${tmp.path}/config.toml`;
    await Deno.writeTextFile(
      config,
      `[state]\ndir = ${JSON.stringify(state)}\n\n[safety]\nlimits_file = ${
        JSON.stringify(`${ROOT}/configs/safety_limits.toml`)
      }\n`,
    );
    const got = await runAsUser(["--config", config, "get", DEVICE, "--json"]);
    const v = JSON.parse(got.stdout).readings[0].value as number;
    const plan = `${tmp.path}/trim.json`;
    await Deno.writeTextFile(
      plan,
      JSON.stringify({
        description: "terminal trim",
        actions: [{ type: "write", device: DEVICE, value: v + 0.05, reason: "trim" }],
      }),
    );
    await using term = await TmuxSession.start(
      [
        Deno.execPath(),
        "run",
        ...LAUNCHER_FLAGS,
        `${ROOT}/launch.ts`,
        "--config",
        config,
        "plan",
        "run",
        plan,
      ],
      childEnv({ HOME: tmp.path }),
      ROOT,
    );
    await term.waitFor(/Run this plan\? \(y\/N\)\s*$/m);
    await term.type("y");
    await term.send("Enter");
    const screen = await term.waitFor(/plan [0-9a-f]{12} completed[\s\S]*Logbook entry:/);
    assert.match(screen, /Plan completed: terminal trim/);
    await term.send("Down");
    await term.send("Down");
    await term.send("Enter");
    await term.waitFor(/logbook draft [0-9a-f]{8} skipped \(recorded in the audit\)\n\[exit 0\]/);
    const audit = await auditEntries(state);
    assert.deepEqual(audit.map((e) => e.status), [
      "started",
      "write_ahead",
      "completed",
      "skipped",
    ]);
  },
});
