/**
 * The REPL's prompt comes up once the config is read, before the rest of the
 * program has loaded: what the operator types at it is kept.
 */
import assert from "node:assert/strict";
import { HAS_TMUX, TmuxSession } from "../support/tmux.ts";
import { AGENT_FLAGS, childEnv, MAIN, ROOT } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";
import { PROMPT_TEXT } from "../../src/cli/repl/early_prompt.ts";

Deno.test({
  name:
    "a line typed at the prompt before the session has loaded reaches the session, and the banner replaces the early prompt",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using home = await tempDir();
    const env = childEnv({
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
      OPENAI_API_KEY: "k",
      HOME: home.path,
    });
    await using term = await TmuxSession.start(
      [Deno.execPath(), "run", ...AGENT_FLAGS, MAIN],
      env,
      ROOT,
    );
    // Typed the moment a prompt shows, whichever one it is.
    await term.waitFor(/accel›/, 60_000);
    await term.type("/history");
    await term.send("Enter");
    const screen = await term.waitFor(/no questions yet\s*\naccel›\s*$/m, 60_000);
    assert.match(screen, /accel-agent \d+\.\d+\.\d+ · model .* · simulator/);
    // One banner, and the line was run once.
    assert.equal(screen.match(/accel-agent \d+\.\d+\.\d+ ·/g)?.length, 1);
    assert.equal(screen.match(/no questions yet/g)?.length, 1);
    assert.ok(screen.trimEnd().endsWith(PROMPT_TEXT.trim()));
    await term.type("/quit");
    await term.send("Enter");
    await term.waitFor(/\[exit 0\]/, 60_000);
  },
});

Deno.test({
  name:
    "a config with a type error: the early prompt is erased and the config error is the only thing left on screen",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using home = await tempDir();
    // The TOML parses, so the glance draws the prompt; the schema then refuses the file.
    const config = `${home.path}/bad.toml`;
    await Deno.writeTextFile(
      config,
      '[llm]\nbase_url = "http://127.0.0.1:9/v1"\n[agent]\nmax_iterations = "many"\n',
    );
    const env = childEnv({ HOME: home.path });
    await using term = await TmuxSession.start(
      [Deno.execPath(), "run", ...AGENT_FLAGS, MAIN, "--config", config],
      env,
      ROOT,
    );
    const screen = await term.waitFor(/\[exit 2\]/, 60_000);
    assert.match(screen, /^accel-agent: config error: .*bad\.toml:4: key agent\.max_iterations/m);
    assert.doesNotMatch(screen, /accel›/);
  },
});

/**
 * Runs `argv` in a terminal; after it ends, the shell prints the terminal's
 * line discipline ("icanon" is normal mode, "-icanon" raw) and its exit code.
 */
async function withLineDiscipline(argv: string[], env: Record<string, string>) {
  const program = argv.map((a) => `'${a}'`).join(" ");
  const line = `${program}; code=$?; stty -a | grep -o -- '-\\?icanon'; exit $code`;
  return await TmuxSession.start(["bash", "-c", line], env, ROOT);
}

Deno.test({
  name:
    "SIGINT, SIGTERM or SIGHUP while the early prompt shows erase it, give the shell its terminal back out of raw mode, and end with 128+n",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    // The early prompt over a load that never ends: the signal cannot meet anything else.
    const hold = [Deno.execPath(), "run", "--allow-env", `${ROOT}/tests/cli/early_prompt_hold.ts`];
    for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129]] as const) {
      await using term = await withLineDiscipline(hold, childEnv({}));
      await term.waitFor(/accel›/, 60_000);
      const [pid] = await term.processes(`${ROOT}/tests/cli/early_prompt_hold.ts`);
      assert.ok(pid, "the program runs in the pane");
      Deno.kill(pid, signal);
      const screen = await term.waitFor(/\[exit \d+\]/, 60_000);
      assert.match(screen, new RegExp(`\\[exit ${code}\\]`), `${signal}:\n${screen}`);
      // Erased: the shell's next output starts where the prompt was, in normal mode.
      assert.match(screen, /^icanon$/m, `${signal}:\n${screen}`);
      assert.doesNotMatch(screen, /accel›/, `${signal}:\n${screen}`);
    }
  },
});

Deno.test({
  name:
    "SIGTERM the moment a prompt shows ends the program with 143 and gives the shell its terminal back out of raw mode",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using home = await tempDir();
    const env = childEnv({
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
      OPENAI_API_KEY: "k",
      HOME: home.path,
    });
    await using term = await withLineDiscipline(
      [Deno.execPath(), "run", ...AGENT_FLAGS, MAIN],
      env,
    );
    await term.waitFor(/accel›/, 60_000);
    const [pid] = await term.processes(MAIN);
    assert.ok(pid, "the program runs in the pane");
    Deno.kill(pid, "SIGTERM");
    const screen = await term.waitFor(/\[exit \d+\]/, 60_000);
    assert.match(screen, /\[exit 143\]/);
    // Whichever prompt the signal met (on a busy machine the session's may be up
    // by then): the early one is erased, the session's own stays on its line.
    assert.match(screen, /^(accel› )?icanon$/m, screen);
  },
});
