/**
 * The REPL in a real terminal (tmux), under a user's real grants (launch.ts),
 * with a scripted model that opens a display: the test launcher starts with
 * the right file and macros, and the prompt comes back while it still runs.
 */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { HAS_TMUX } from "../support/tmux.ts";
import { startRepl } from "../support/repl_session.ts";
import { ROOT } from "../support/run_agent.ts";
import { LAUNCHER_FLAGS } from "../support/user_grants.ts";
import { tempDir } from "../support/temp.ts";

const LAUNCHER = `${ROOT}/tests/support/display_launcher.sh`;

Deno.test({
  name:
    "REPL: the model opens a display; the launcher gets the file and macros and the prompt does not wait for it",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using dir = await tempDir();
    const out = `${dir.path}/argv.txt`;
    const config = `${dir.path}/config.toml`;
    await Deno.writeTextFile(
      config,
      `[state]\ndir = "state"\n[sandbox]\nprewarm = false\nwork_dir = "work"\n` +
        `[launchers.phoebus]\ncommand = [${JSON.stringify(LAUNCHER)}, ${
          JSON.stringify(out)
        }, "-resource", "{file}?{macros}"]\n` +
        `[[displays]]\nname = "orbit"\nfile = "orbit.bob"\nkeywords = ["bpm"]\n` +
        `macros.PLANE = { values = ["X", "Y"], default = "X" }\n`,
    );
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          {
            respond: {
              toolCalls: [{
                name: "launch_display",
                arguments: { display: "bpm", macros: { PLANE: "Y" } },
              }],
            },
          },
          {
            expect: { toolResultIncludes: ['"display":"orbit"'] },
            respond: { text: "The orbit display is open (pid {{last_tool_result.launched.pid}})." },
          },
        ],
      },
    });
    await using term = await startRepl(llm.url, dir.path, [
      Deno.execPath(),
      "run",
      ...LAUNCHER_FLAGS,
      `${ROOT}/launch.ts`,
      "--config",
      config,
    ]);
    let pid = 0;
    try {
      await term.type("show me the vertical orbit screen");
      await term.send("Enter");
      // The launcher stays up 30 s; the answer and the prompt come well before (ceiling 15 s).
      const screen = await term.waitFor(/display is open \(pid (\d+)\)\.[\s\S]*accel›\s*$/m);
      pid = Number(/display is open \(pid (\d+)\)/.exec(screen)?.[1]);
      assert.match(screen, /✓ launch_display .*opened orbit \(phoebus\), pid \d+/);
      const resource = `${dir.path}/orbit.bob?PLANE=Y`;
      const written = (await Deno.readTextFile(out)).trimEnd().split("\n");
      assert.deepEqual(written, [String(pid), "-resource", resource]);
      assert.ok(await running(pid), "the launcher is still running while the prompt is back");
      assert.equal(
        await ps("sid", pid),
        String(pid),
        "in a session of its own: no Ctrl-C reaches it",
      );

      await term.type("/display");
      await term.send("Enter");
      await term.waitFor(/orbit\s+phoebus[\s\S]*macros: PLANE=X \(X\|Y\)[\s\S]*accel›\s*$/m);
      await term.type("/quit");
      await term.send("Enter");
      await term.waitFor(/\[exit 0\]/);
      assert.ok(await running(pid), "the display outlives the agent");
      assert.deepEqual(llm.failures, []);
    } finally {
      if (pid) Deno.kill(pid, "SIGTERM");
    }
  },
});

/** `ps -o FIELD= -p PID`: "" when the process is gone. */
async function ps(field: string, pid: number): Promise<string> {
  const out = await new Deno.Command("ps", {
    args: ["-o", `${field}=`, "-p", String(pid)],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).trim();
}

async function running(pid: number): Promise<boolean> {
  const stat = await ps("stat", pid);
  return stat !== "" && !stat.startsWith("Z");
}
