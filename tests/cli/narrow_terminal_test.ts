/**
 * At 80 columns (a real terminal, tmux), what the program draws fits: no
 * line longer than the terminal (the capture joins lines the terminal
 * wrapped, so one that overflowed comes back longer than 80) and no word
 * split across lines — every word of what was shown is found whole on the
 * screen. Run through the launcher, as an operator runs it.
 */
import assert from "node:assert/strict";
import { globalHelp } from "../../src/cli/args/help.ts";
import { SLASH_HELP } from "../../src/cli/repl/slash.ts";
import { HAS_TMUX, TmuxSession } from "../support/tmux.ts";
import { childEnv, ROOT, runAgent } from "../support/run_agent.ts";
import { LAUNCHER_FLAGS } from "../support/user_grants.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { testApps } from "../support/test_app.ts";
import { tempDir } from "../support/temp.ts";

const COLUMNS = 80;
const SIZE = { columns: COLUMNS, rows: 60 };
const LAUNCH = [Deno.execPath(), "run", ...LAUNCHER_FLAGS, `${ROOT}/launch.ts`];
const ignore = !HAS_TMUX && !Deno.env.get("CI");

/** The screen's words: box drawing and bar characters are not part of any. */
function words(screen: string): Set<string> {
  return new Set(screen.replace(/[│┌┐└┘─┬┴├┤┼]/g, " ").split(/\s+/).filter(Boolean));
}

/**
 * No line past the terminal, and every expected word whole on the screen
 * (a single word wider than a line — a JSON example in a tool's
 * description — cannot be, and is left out).
 */
function assertFits(screen: string, expected: string[], what: string, columns = COLUMNS) {
  const long = screen.split("\n").filter((l) => [...l].length > columns);
  assert.deepEqual(long, [], `${what}: lines wider than ${columns}`);
  const shown = words(screen);
  const missing = expected.filter((w) => [...w].length <= columns - 8 && !shown.has(w));
  assert.deepEqual(missing, [], `${what}: words split or missing\n${screen}`);
}

/** The words of a text, as the screen should hold them. */
const split = (text: string) => text.split(/\s+/).filter(Boolean);

async function screenOf(args: string[], home: string, size = SIZE): Promise<string> {
  await using term = await TmuxSession.start(
    [...LAUNCH, ...args],
    childEnv({ HOME: home }),
    ROOT,
    size,
  );
  const screen = await term.waitFor(/\[exit \d+\]/);
  assert.match(screen, /\[exit 0\]/, screen);
  return screen.slice(0, screen.lastIndexOf("[exit"));
}

Deno.test({
  name: "at 80 columns, --help, search, logs, scripts list and a plan table fit and split no word",
  ignore,
  async fn() {
    await using home = await tempDir();
    assertFits(await screenOf(["--help"], home.path), split(globalHelp(COLUMNS)), "--help");
    for (
      const args of [
        ["search", "ion", "pump", "pressure", "cell", "4", "--limit", "8"],
        ["search", "RING:BPM:*:X", "--limit", "12"],
        ["scripts", "list"],
        [
          "logs",
          "archive",
          "--device",
          "DIAG:ENERGY:MEAS",
          "--device",
          "RF:PHASE:SETPT",
          "--from",
          "-6h",
        ],
        ["logs", "elog"],
        ["logs", "alarm"],
      ]
    ) {
      const json = await runAgent([...args, "--json"], { env: { HOME: home.path } });
      assert.equal(json.code, 0, json.stderr);
      const result = JSON.parse(json.stdout);
      const texts: string[] = [
        ...(result.devices ?? []).flatMap((d: Record<string, unknown>) => [
          String(d.name),
          String(d.description ?? ""),
          ((d.matched as string[] | undefined) ?? []).join(", "),
        ]),
        ...(result.scripts ?? []).flatMap((s: Record<string, unknown>) => [
          String(s.name),
          String(s.description),
        ]),
        ...(result.series ?? []).map((s: Record<string, unknown>) => String(s.device)),
        ...(result.entries ?? []).flatMap((e: Record<string, unknown>) => [
          String(e.title ?? ""),
          String(e.text ?? ""),
        ]),
      ];
      assertFits(await screenOf(args, home.path), texts.flatMap(split), args.join(" "));
    }
    const plan = `${home.path}/plan.json`;
    const reason = "orbit correction after the RF trip: half a step first, then the full step " +
      "once the beam loss monitors stay quiet";
    await Deno.writeTextFile(
      plan,
      JSON.stringify({
        description: "Trim the first linac vertical steerer",
        actions: [
          { type: "read", devices: ["LINAC:BPM:01:Y", "LINAC:BPM:02:Y"] },
          { type: "write", device: "LINAC:COR:V01:SETPT", value: -0.2, reason },
          { type: "wait", seconds: 1, reason: "let the orbit settle" },
        ],
      }),
    );
    // The table and what follows it up to the approval token (a token is one word, never broken).
    const shown = (await screenOf(["plan", "show", plan], home.path)).split(/^approval token/m)[0]
      ?.trimEnd() ?? "";
    assert.match(
      shown,
      /plan hash [0-9a-f]{64}\n(?:Predicted effect \(a prediction: [\s\S]*\n)?Writes 1 device: LINAC:COR:V01:SETPT\.$/,
    );
    assertFits(shown, [...split(reason), "LINAC:COR:V01:SETPT", "LINAC:BPM:02:Y"], "plan show");
    // The change and its Δ stay together.
    assert.match(shown, /\(Δ\+0\.048\)/);
  },
});

Deno.test({
  name: "at 80 columns, the REPL's /help and /tools fit and split no word",
  ignore,
  async fn() {
    await using llm = await startScriptedLlm({ scenario: { turns: [] } });
    await using apps = await testApps(() => "", llm.url);
    const tools = (await apps.open()).tools.list();
    await using home = await tempDir();
    await using term = await TmuxSession.start(
      LAUNCH,
      childEnv({ OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k", HOME: home.path }),
      ROOT,
      SIZE,
    );
    await term.waitFor(/Ask about the machine[^\n]*\n[\s\S]*accel›\s*$/m);
    await term.type("/help");
    await term.send("Enter");
    let screen = await term.waitFor(/\/quit [\s\S]*Ctrl-C cancels[\s\S]*accel›\s*$/);
    assertFits(screen, SLASH_HELP.flatMap(([c, d]) => [...split(c), ...split(d)]), "/help");
    await term.type("/tools");
    await term.send("Enter");
    screen = await term.waitFor(new RegExp(`${tools.at(-1)?.name}[\\s\\S]*accel›\\s*$`, "m"));
    assertFits(screen, tools.flatMap((t) => [t.name, ...split(t.description)]), "/tools");
  },
});

Deno.test({
  name:
    "at 60 and 44 columns, a plan whose names and words cannot stand side by side is drawn as records: nothing split",
  ignore,
  async fn() {
    await using home = await tempDir();
    const plan = `${home.path}/plan.json`;
    const reason = "orbit correction after the RF trip: half a step first, then the full step " +
      "once the beam loss monitors stay quiet";
    await Deno.writeTextFile(
      plan,
      JSON.stringify({
        description: "Trim the first linac vertical steerer",
        actions: [
          { type: "read", devices: ["LINAC:BPM:01:Y", "LINAC:BPM:02:Y"] },
          { type: "write", device: "LINAC:COR:V01:SETPT", value: -0.2, reason },
          { type: "wait", seconds: 1, reason: "let the orbit settle" },
        ],
        rollback: [{ type: "write", device: "LINAC:COR:V01:SETPT", value: -0.248, reason: "back" }],
      }),
    );
    for (const columns of [60, 44]) {
      const screen = await screenOf(["plan", "show", plan], home.path, { columns, rows: 80 });
      const shown = screen.split(/^plan hash/m)[0]?.trimEnd() ?? "";
      assertFits(
        shown,
        [
          ...split(reason),
          "LINAC:COR:V01:SETPT",
          "LINAC:BPM:01:Y",
          "LINAC:BPM:02:Y",
          "LINAC:COR:V01:RDBK",
          "(Δ+0.048)",
          "settle",
        ],
        `plan show at ${columns}`,
        columns,
      );
      // Each action still says what it is, and the rollback is told apart.
      assert.match(shown, /^│ 2 +write +│$/m, shown);
      assert.match(shown, /^│ rb 1 +write +│$/m, shown);
    }
  },
});
