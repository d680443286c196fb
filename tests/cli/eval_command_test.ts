import assert from "node:assert/strict";
import type { EvalReport } from "../../src/eval/report.ts";
import { AGENT_FLAGS, childEnv, MAIN, ROOT, runAgent } from "../support/run_agent.ts";
import { HAS_TMUX, TmuxSession } from "../support/tmux.ts";
import { type ReplayVariant, startScriptedEval } from "../support/scripted_eval_server.ts";
import { shippedTasks } from "../eval/scripted_model.ts";
import { parseTask, type Task } from "../../src/eval/task.ts";
import { SNAPSHOT_PATH } from "../support/sandbox.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Every limit an attempt meets but the ones its task sets, with room to
 * spare on a busy machine: a sandbox task's tool call starts its own
 * interpreter (no prewarmed one in an attempt), four at a time, and met the
 * default 60 s tool limit at load 9–18. The interpreters start from the
 * tests' shared snapshot and optimize only hot code (less CPU each): their
 * speed is not what these tests are about.
 */
const AMPLE_CONFIG =
  `[llm]\nturn_timeout_s = 3600\nrequest_timeout_s = 600\nidle_timeout_s = 600\n` +
  `[agent]\ntool_timeout_s = 3600\nagent_md = ${JSON.stringify(`${ROOT}/AGENT.md`)}\n` +
  // The defaults' relative paths are relative to configs/; this file is elsewhere.
  `[safety]\nlimits_file = ${JSON.stringify(`${ROOT}/configs/safety_limits.toml`)}\n` +
  `[sandbox]\ntimeout_s = 600\noptimize = "hot"\n` +
  `scripts_dir = ${JSON.stringify(`${ROOT}/scripts`)}\n` +
  `cache_dir = ${JSON.stringify(SNAPSHOT_PATH.slice(0, SNAPSHOT_PATH.lastIndexOf("/")))}\n`;

/**
 * Runs `eval --replay` through the launcher (the grants the configuration
 * calls for: the network only to the model's host) against the replay of the
 * shipped tasks' transcripts, in a TMPDIR of its own, with {@link AMPLE_CONFIG}.
 */
async function evalRun(variant: ReplayVariant, args: string[], extra: Task[] = []) {
  await using replay = await startScriptedEval([...await shippedTasks(), ...extra], variant);
  await using config = await tempDir("eval-cli-config-");
  await Deno.writeTextFile(`${config.path}/config.toml`, AMPLE_CONFIG);
  const tmp = await Deno.makeTempDir({ prefix: "eval-cli-" });
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-read",
        "--allow-env",
        "--allow-run",
        `${ROOT}/launch.ts`,
        "eval",
        "--config",
        `${config.path}/config.toml`,
        "--replay",
        ...args,
      ],
      cwd: ROOT,
      clearEnv: true,
      env: childEnv({ TMPDIR: tmp, OPENAI_BASE_URL: replay.url }),
      stdout: "piped",
      stderr: "piped",
    });
    const out = await child.output();
    const r = {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
    };
    const left = [];
    for await (const e of Deno.readDir(tmp)) left.push(e.name);
    return { ...r, left, failures: replay.failures() };
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}

Deno.test("eval against the solving replay reports 100% over at least 40 tasks in at least 9 categories", async () => {
  const out = await Deno.makeTempFile({ suffix: ".json" });
  try {
    const r = await evalRun("solving", ["--concurrency", "4", "--out", out]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.left, [], "attempt state left in TMPDIR");
    assert.match(r.stdout, /^all\s+(\d+)\/\1\s+100%\s+9\d%–100%/m);
    const report: EvalReport = JSON.parse(await Deno.readTextFile(out));
    assert.ok(report.total.attempts >= 40);
    assert.equal(report.total.passes, report.total.attempts);
    assert.ok(report.categories.length >= 9);
    const a = report.attempts.find((x) => x.task === "read-ring-current");
    assert.ok(a && a.calls.length === 1 && a.verdicts.length === 4 && a.transcript.length === 1);
  } finally {
    await Deno.remove(out);
  }
});

Deno.test("eval against the wrong replay fails every task, each with its grader's reason", async () => {
  const r = await evalRun("wrong", ["--concurrency", "4", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const report: EvalReport = JSON.parse(r.stdout);
  assert.ok(report.tasks.length >= 40);
  for (const t of report.tasks) {
    assert.equal(t.passes, 0, `${t.name} passed against a wrong transcript`);
    assert.ok((t.reasons[0] ?? "").length > 10, `${t.name} failed without a reason`);
  }
  assert.equal(report.total.interval[0], 0);
});

Deno.test("--repeat 3 --concurrency 4 finishes with intervals per task and category and leaves no state", async () => {
  const r = await evalRun("solving", [
    "--repeat",
    "3",
    "--concurrency",
    "4",
    "--tasks",
    "read-values,refuse-limits,write-observe",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.left, []);
  assert.match(r.stdout, /^read-ring-current\s+3\/3\s+100%\s+44%–100%/m);
  assert.match(r.stdout, /^write-observe\s+15\/15\s+100%\s+80%–100%/m);
  assert.match(r.stdout, /^all\s+42\/42\s+100%\s+92%–100%/m);
});

Deno.test("eval compare shows per task what changed between two runs", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (const v of ["solving", "wrong"] as const) {
      const r = await evalRun(v, ["--tasks", "find-devices", "--out", `${dir}/${v}.json`]);
      assert.equal(r.code, 0, r.stderr);
    }
    const c = await runAgent(["eval", "compare", `${dir}/solving.json`, `${dir}/wrong.json`]);
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /^find-linac-energy\s+1\/1\s+0\/1\s+-100%\s+overlap/m);
    assert.match(c.stdout, /^all\s+4\/4\s+0\/4\s+-100%\s+apart/m);
    const bad = await runAgent(["eval", "compare", `${dir}/solving.json`]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /needs two files/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("eval refuses bad counts and selectors with a one-line usage error", async () => {
  const r = await runAgent(["eval", "--repeat", "0", "--replay"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--repeat needs a whole number from 1 to 1000, got "0"/);
  const s = await runAgent(["eval", "--tasks", "no-such-*", "--replay"], {
    env: { OPENAI_BASE_URL: "http://127.0.0.1:9" },
  });
  assert.equal(s.code, 2);
  assert.match(s.stderr, /--tasks "no-such-\*" matches no task id or category/);
});

Deno.test("a facility's own task directory adds its tasks to the run", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const json = {
      id: "facility-lifetime",
      category: "facility",
      title: "Our lifetime check",
      turns: ["Lifetime?"],
      grade: [{ check: "read", devices: ["RING:LIFETIME"] }],
      scripted: {
        solving: {
          turns: [
            {
              respond: {
                toolCalls: [{ name: "get_parameter", arguments: { devices: ["RING:LIFETIME"] } }],
              },
            },
            { respond: { text: "{{last_tool_result.readings[0].value}} h" } },
          ],
        },
        wrong: [{ turns: [{ respond: { text: "10 h" } }] }],
      },
    };
    await Deno.writeTextFile(`${dir}/lifetime.json`, JSON.stringify(json));
    const extra = [parseTask(json, "lifetime.json")];
    const r = await evalRun("solving", ["--tasks-dir", dir, "--tasks", "facility"], extra);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^facility-lifetime\s+1\/1\s+100%/m);
    const w = await evalRun("wrong", ["--tasks-dir", dir, "--tasks", "facility-*"], extra);
    assert.match(w.stdout, /facility-lifetime: never read RING:LIFETIME/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "in a terminal, eval redraws one progress line on stderr as attempts end",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using replay = await startScriptedEval(await shippedTasks(), "solving");
    const argv = [Deno.execPath(), "run", ...AGENT_FLAGS, MAIN, "eval", "--replay"];
    await using term = await TmuxSession.start(
      [...argv, "--tasks", "read-values", "--repeat", "2"],
      childEnv({ OPENAI_BASE_URL: replay.url }),
      ROOT,
    );
    // Ten attempts one after another: a ceiling with room for a busy machine.
    const screen = await term.waitFor(/\[exit 0\]/, 300_000);
    // One bar, redrawn in place: the final state only, then the report.
    assert.equal(screen.match(/^\[#+·*\]/gm)?.length, 1, screen);
    assert.match(screen, /^\[#{20}\] 10\/10 {2}10 passed {2}last: read-/m);
    assert.match(screen, /^all\s+10\/10\s+100%/m);
  },
});
