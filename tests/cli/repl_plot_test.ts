/**
 * The REPL in a real terminal (tmux), under a user's real grants (launch.ts):
 * the scripted model plots an archived series and the chart appears inline.
 */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { HAS_TMUX } from "../support/tmux.ts";
import { startRepl } from "../support/repl_session.ts";
import { ROOT } from "../support/run_agent.ts";
import { LAUNCHER_FLAGS } from "../support/user_grants.ts";
import { tempDir } from "../support/temp.ts";

Deno.test({
  name: "REPL: the model plots an archived series and the chart is drawn inline, its SVG saved",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using dir = await tempDir();
    const config = `${dir.path}/config.toml`;
    await Deno.writeTextFile(
      config,
      `[state]\ndir = "state"\n[sandbox]\nprewarm = false\nwork_dir = "work"\n`,
    );
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          {
            respond: {
              toolCalls: [{
                name: "plot",
                arguments: { source: "archive", devices: ["RING:DCCT:CURRENT"], from: "-2h" },
              }],
            },
          },
          {
            expect: { toolResultIncludes: ['"name":"RING:DCCT:CURRENT"'] },
            respond: {
              text: "Beam current over two hours: min {{last_tool_result.series[0].min}} mA.",
            },
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
    await term.type("plot the beam current for the last two hours");
    await term.send("Enter");
    const screen = await term.waitFor(
      /Beam current over two hours: min [\d.]+ mA\.[\s\S]*accel›\s*$/m,
    );
    assert.match(screen, /✓ plot .*chart of 1 series/);
    assert.match(screen, /archive \S+ → \S+ \[mA\]/, "the chart's title with its units");
    assert.match(screen, /└[─┬]+▶/, "the x axis");
    assert.match(screen, /\d\d:\d\d:00/, "time labels");
    assert.match(screen, /━━ RING:DCCT:CURRENT \[mA\]  ● min [\d.]+ mA at \S+, max [\d.]+ mA at/);
    const svg = /svg: (\S+\.svg)/.exec(screen)?.[1];
    assert.ok(svg?.startsWith(`${dir.path}/work/plots/`), screen);
    assert.match(
      await Deno.readTextFile(svg as string),
      /<svg [\s\S]*RING:DCCT:CURRENT[\s\S]*<\/svg>/,
    );
    await term.type("/quit");
    await term.send("Enter");
    await term.waitFor(/\[exit 0\]/);
    assert.deepEqual(llm.failures, []);
  },
});
