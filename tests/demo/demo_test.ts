/**
 * `deno task demo` in a real terminal (tmux): the replay shows each stage of
 * the recorded session and stops by itself.
 */
import assert from "node:assert/strict";
import { HAS_TMUX, TmuxSession } from "../support/tmux.ts";
import { childEnv, ROOT } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";
import { phaseAtOperatingPoint } from "../support/sim_phase.ts";

const CEILING = 90_000;

Deno.test({
  name:
    "the demo replays a question, tool calls, a scan plan approved by a shown keypress, the progress bar, a chart of the scan and a sandbox analysis, then stops",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using home = await tempDir();
    // The replayed scan starts at the operating point: not while the crews' routine scan runs.
    await phaseAtOperatingPoint();
    const deno = JSON.parse(await Deno.readTextFile(`${ROOT}/deno.json`));
    const task = String(deno.tasks.demo).split(" ");
    assert.equal(task[0], "deno");
    // No endpoint nor key: the demo needs neither.
    const env = childEnv({ HOME: home.path });
    delete env.OPENAI_BASE_URL;
    delete env.OPENAI_API_KEY;
    await using term = await TmuxSession.start([Deno.execPath(), ...task.slice(1)], env, ROOT);
    await term.waitFor(/replay — no model is called/, CEILING);
    await term.waitFor(/accel› Scan the RF phase from -4 to -12 deg/, CEILING);
    await term.waitFor(/✓ get_parameter .* RF:PHASE:SETPT = /, CEILING);
    let screen = await term.waitFor(/Run this plan\?/, CEILING);
    assert.match(screen, /RF phase scan around the operating point/);
    assert.match(screen, /RF:PHASE:SETPT\s+│ -4 → -4 … -12 deg/);
    await term.waitFor(/plan [0-9a-f]{12} approved/, CEILING);
    await term.waitFor(/replay pressed ↑ then Enter: all: run it as shown/, CEILING);
    await term.waitFor(/\[█+\] 9\/9/, CEILING);
    screen = await term.waitFor(/✓ plot .*chart of 1 series/, CEILING);
    screen = await term.waitFor(/━━ DIAG:ENERGY:MEAS/, CEILING);
    assert.match(screen, /└[─┬]+▶/, "the chart's x axis");
    await term.waitFor(/✓ execute_code /, CEILING);
    screen = await term.waitFor(/Replay finished — no model was called/, CEILING);
    // A peak is reported only inside the scanned range, never at its edge.
    const peak = /The energy peaks at (-?\d+\.\d\d) deg \(\d+\.\d+ MeV\), inside the scanned range/
      .exec(screen);
    assert.ok(peak, screen);
    assert.ok(Number(peak[1]) > -12 && Number(peak[1]) < -4, peak[1]);
    screen = await term.waitFor(
      /Logbook entry:[\s\S]*post: send it to the simulator's logbook/,
      CEILING,
    );
    assert.match(screen, /Plan completed: RF phase scan around the operating point/);
    await term.waitFor(/✓ posted to the simulator's logbook .* as entry sim-1/, CEILING);
    screen = await term.waitFor(/replay ended\s*\n\[exit 0\]/, CEILING);
    // The program's state went to a temporary home that the demo removed, not the operator's.
    const left = [];
    for await (const e of Deno.readDir(home.path)) left.push(e.name);
    assert.deepEqual(left.filter((n) => n.startsWith(".local")), []);
  },
});
