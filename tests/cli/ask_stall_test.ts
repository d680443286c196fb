/**
 * A model that stalls, and text that was taken back, as a user meets them:
 * plain `ask` prints only the answer that stands (the text of an attempt
 * that was retried never reaches stdout), and in a terminal stderr counts
 * the seconds waited; piped, it stays quiet. The REPL shows a stalled
 * stream's waiting line with its seconds, then the answer.
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { HAS_TMUX, TmuxSession } from "../support/tmux.ts";
import { childEnv, ROOT } from "../support/run_agent.ts";
import { LAUNCHER_FLAGS } from "../support/user_grants.ts";
import { startRepl } from "../support/repl_session.ts";
import { tempDir } from "../support/temp.ts";

const FAST_RETRY = "[llm]\nretry_base_ms = 1\nretry_max_ms = 1\n";

Deno.test("plain ask prints only the answer that stands: the text of a stream that broke and was retried is not on stdout", async () => {
  await using user = await UserSetup.start({ extra: FAST_RETRY });
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        { respond: { fault: "reset", afterText: "The ring current is 12", status: 503 } },
        { respond: { text: "The ring current is 301 mA." } },
      ],
    },
  });
  const r = await user.run(["ask", "What is the ring current?"], {
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "The ring current is 301 mA.\n");
  assert.match(r.stderr, /↻ model call failed/);
  assert.doesNotMatch(r.stderr, /void/, "nothing was printed that had to be taken back");
  // Piped, stderr draws no spinner.
  assert.doesNotMatch(r.stderr, /thinking|waiting for the model|\r/);
});

Deno.test({
  name: "plain ask in a terminal counts the seconds it waits for the model on stderr",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using dir = await tempDir();
    await Deno.writeTextFile(
      `${dir.path}/config.toml`,
      `[state]\ndir = "state"\n[sandbox]\nprewarm = false\n`,
    );
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [{ respond: { fault: "delay", ms: 8_000, then: { text: "301 mA." } } }],
      },
    });
    const argv = [
      Deno.execPath(),
      "run",
      ...LAUNCHER_FLAGS,
      `${ROOT}/launch.ts`,
      "--config",
      `${dir.path}/config.toml`,
      "ask",
      "What is the ring current?",
    ];
    await using term = await TmuxSession.start(
      argv,
      childEnv({ OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k", HOME: dir.path }),
      ROOT,
    );
    await term.waitFor(/thinking… [1-9] s/);
    const done = await term.waitFor(/\[exit \d+\]/);
    assert.match(done, /301 mA\.\n[\s\S]*\[exit 0\]/);
  },
});

Deno.test({
  name:
    "REPL: a stream that stalls after some text shows the waiting line with its seconds, then the answer",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using dir = await tempDir();
    const config = `${dir.path}/config.toml`;
    await Deno.writeTextFile(
      config,
      `[state]\ndir = "state"\n[sandbox]\nprewarm = false\n[llm]\nidle_timeout_s = 8\n${
        FAST_RETRY.replace("[llm]\n", "")
      }`,
    );
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          { respond: { fault: "stall", afterText: "The ring current is" } },
          { respond: { text: "The ring current is 301 mA." } },
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
    await term.type("What is the ring current?");
    await term.send("Enter");
    await term.waitFor(/waiting for the model… [2-9] s/);
    const screen = await term.waitFor(/The ring current is 301 mA\.[\s\S]*accel›\s*$/m);
    assert.match(screen, /model stream stalled: no data for 8 s/);
  },
});
