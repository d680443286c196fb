/**
 * `/audit` and `/permissions` in a real terminal (tmux), the program started
 * by the launcher with a user's grants: what the records and the grants say
 * is shown escaped, and a tampered chain is reported.
 */
import assert from "node:assert/strict";
import { AuditLog } from "../../../src/safety/audit.ts";
import { startScriptedLlm } from "../../support/scripted_llm.ts";
import { HAS_TMUX } from "../../support/tmux.ts";
import { startRepl } from "../../support/repl_session.ts";
import { ROOT } from "../../support/run_agent.ts";
import { tempDir } from "../../support/temp.ts";

const CEILING = 60_000;

/** The REPL as a user starts it: through the launcher, which computes the grants. */
const LAUNCHED = [
  Deno.execPath(),
  "run",
  "--allow-read",
  "--allow-env",
  "--allow-run",
  `${ROOT}/launch.ts`,
];

Deno.test({
  name:
    "REPL: /audit 3 shows the last three records escaped with the chain verified, then a tampered record breaks it; /permissions shows the grants the launcher gave; Tab completes device names under them",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using llm = await startScriptedLlm({ scenario: { turns: [] } });
    await using home = await tempDir();
    const state = `${home.path}/.local/state/accel-agent`;
    const log = new AuditLog(`${state}/audit`, Date.now, { headPath: `${state}/audit.head` });
    for (let i = 0; i < 5; i++) {
      await log.append({
        operator: i === 4 ? "eve\x1b[2J\x1b[Hroot" : "alice",
        host: "h",
        configHash: "c",
        planHash: `${i}`.repeat(64),
        plan: {},
        decision: i === 3 ? "rejected" : "approved",
        decidedBy: "terminal",
        status: `entry ${i}`,
      });
    }
    await using term = await startRepl(llm.url, home.path, LAUNCHED);

    await term.type("/audit 3");
    await term.send("Enter");
    let screen = await term.waitFor(/chain verified[\s\S]*accel›\s*$/m, CEILING);
    assert.match(screen, /chain verified: 5 entries, head matches/);
    assert.doesNotMatch(screen, /entry [01]\b/, "only the last three");
    assert.match(screen, /approved · entry 2 · plan 222222222222 · by terminal · operator alice/);
    assert.match(screen, /rejected · entry 3/);
    assert.match(screen, /operator eve\\x1b\[2J\\x1b\[Hroot/, "the operator's name is escaped");

    // Someone edits a record: /audit says the chain is broken.
    const [file] = await log.files();
    assert.ok(file);
    const text = await Deno.readTextFile(file);
    await Deno.writeTextFile(file, text.replace('"entry 1"', '"entry 9"'));
    await term.type("/audit 2");
    await term.send("Enter");
    screen = await term.waitFor(/chain BROKEN at [^\n]*\n[\s\S]*accel›\s*$/m, CEILING);
    assert.match(screen, /chain BROKEN at .*\.jsonl:2: /);

    await term.type("/audit 0");
    await term.send("Enter");
    await term.waitFor(/\/audit takes a count from 1 to 200/, CEILING);

    await term.type("/permissions");
    await term.send("Enter");
    screen = await term.waitFor(/\n\s+sys\s[^\n]*\n[\s\S]*accel›\s*$/m, CEILING);
    const port = new URL(llm.url).port;
    assert.match(screen, new RegExp(`net\\s+[^\\n]*127\\.0\\.0\\.1:${port}`));
    assert.match(screen, /write\s+[^\n]*\.local\/state\/accel-agent/);
    assert.doesNotMatch(screen, /more than needed/, "the launcher grants only what is listed");

    // Device names load in a worker, which has the launcher's grants too.
    await term.type("/limits RF:PHA");
    const deadline = performance.now() + CEILING;
    for (;;) {
      await term.send("Tab");
      const shown = await term.waitFor(/accel› \/limits RF:PHASE:\s*$/m, 1_000).catch(() => "");
      if (shown) break;
      assert.ok(performance.now() < deadline, "Tab never completed RF:PHA");
    }
  },
});
