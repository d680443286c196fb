/**
 * Editing a logbook draft in a real terminal (`plan run` under the
 * launcher, the editor `$EDITOR` names): an edit that changes the devices
 * table is refused with one line and the draft is left as it was, the
 * question comes again, and an edit of the prose is posted marked as
 * edited, with the table as the audit records it.
 *
 * @module
 */
import assert from "node:assert/strict";
import { HAS_TMUX, TmuxSession } from "../support/tmux.ts";
import { childEnv, ROOT } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";
import { LAUNCHER_FLAGS, runAsUser } from "../support/user_grants.ts";

const DEVICE = "LINAC:COR:H01:SETPT";

Deno.test({
  name:
    "an edit that changes the devices table is refused and asked again; the prose edit is posted marked as edited",
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
    // First run: the table's rows are taken out; then a line of prose is added.
    const editor = `${tmp.path}/edit.sh`;
    await Deno.writeTextFile(
      editor,
      `#!/bin/sh\nif [ -e "${tmp.path}/once" ]; then\n` +
        "  printf '\\nThe orbit drifted after the RF trip.\\n' >> \"$1\"\nelse\n" +
        `  touch "${tmp.path}/once"\n  sed -i '/^| \`/d' "$1"\nfi\n`,
    );
    await Deno.chmod(editor, 0o755);
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
      [Deno.execPath(), "run", ...LAUNCHER_FLAGS, `${ROOT}/launch.ts`, "--config", config]
        .concat(["plan", "run", plan]),
      childEnv({ HOME: tmp.path, EDITOR: editor }),
      ROOT,
    );
    await term.waitFor(/Run this plan\? \(y\/N\)\s*$/m);
    await term.type("y");
    await term.send("Enter");
    await term.waitFor(/plan [0-9a-f]{12} completed[\s\S]*Logbook entry:/);
    await term.send("Down");
    await term.send("Enter"); // edit: the rows go
    const screen = await term.waitFor(
      /✗ the devices table differs from the audit's record of run [\s\S]*the draft is left as it was[\s\S]*Logbook entry:/,
    );
    assert.match(screen, new RegExp(`\\| \`${DEVICE}\` \\| ${v} \\| ${v + 0.05} \\|`));
    await term.send("Down");
    await term.send("Enter"); // edit: a line of prose
    await term.waitFor(/The orbit drifted after the RF trip\.[\s\S]*Logbook entry:/);
    await term.send("Enter"); // post
    await term.waitFor(
      /✓ posted to the simulator's logbook \(.*\) as entry sim-1[\s\S]*\[exit 0\]/,
    );
    const [entry] = (await Deno.readTextFile(`${state}/elog/simulator.jsonl`)).trim().split("\n")
      .map((l) => JSON.parse(l));
    assert.match(
      entry.text,
      /^\*Edited by .* before it was posted; the devices table is as the audit records it\.\*\n/,
    );
    assert.match(entry.text, new RegExp(`\\| \`${DEVICE}\` \\| ${v} \\| ${v + 0.05} \\|`));
    assert.match(entry.text, /The orbit drifted after the RF trip\.\n$/);
  },
});

Deno.test({
  name:
    "a link planted where the editor's file goes is not written through: the file it points to is left as it is",
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
    const victim = `${tmp.path}/victim.txt`;
    await Deno.writeTextFile(victim, "the operator's notes\n");
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
      [Deno.execPath(), "run", ...LAUNCHER_FLAGS, `${ROOT}/launch.ts`, "--config", config]
        .concat(["plan", "run", plan]),
      childEnv({ HOME: tmp.path, EDITOR: "true" }),
      ROOT,
    );
    await term.waitFor(/Run this plan\? \(y\/N\)\s*$/m);
    await term.type("y");
    await term.send("Enter");
    await term.waitFor(/plan [0-9a-f]{12} completed[\s\S]*Logbook entry:/);
    const drafts = `${state}/elog/drafts`;
    const [name] = [...Deno.readDirSync(drafts)].map((e) => e.name).filter((n) =>
      n.endsWith(".json")
    );
    await Deno.symlink(victim, `${drafts}/${name?.replace(/\.json$/, ".edit.md")}`);
    await term.send("Down");
    await term.send("Enter"); // edit
    await term.waitFor(/the text is unchanged[\s\S]*Logbook entry:/);
    await term.send("Down");
    await term.send("Down");
    await term.send("Enter"); // skip
    await term.waitFor(/skipped \(recorded in the audit\)\n\[exit 0\]/);
    assert.equal(await Deno.readTextFile(victim), "the operator's notes\n");
  },
});
