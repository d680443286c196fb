/** The launcher behind `deno task agent|start`: grants from the config, signals and exit codes through. */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { childEnv, killAfter, ROOT, waitFor } from "../support/run_agent.ts";
import { HAS_TMUX } from "../support/tmux.ts";
import { startRepl } from "../support/repl_session.ts";
import { tempDir } from "../support/temp.ts";

Deno.test("SIGINT to the launcher (no terminal) cancels the answer with exit 130", async () => {
  await using llm = await startScriptedLlm({
    scenario: { turns: [{ respond: { fault: "stall", afterText: "Looking" } }] },
  });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-env",
      "--allow-run",
      `${ROOT}/launch.ts`,
      "ask",
      "--json",
      "hi",
    ],
    cwd: ROOT,
    clearEnv: true,
    env: childEnv({ OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" }),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = new Response(child.stdout).text();
  const err = new Response(child.stderr).text();
  await waitFor(() => llm.requests.length === 1, 60_000, "the model request");
  child.kill("SIGINT");
  // The stream stalls for ever: only the signal can end the program.
  const ceiling = killAfter(child, 60_000);
  const status = await child.status;
  ceiling.disarm();
  assert.equal(status.code, 130, (await err) + ceiling.note());
  assert.equal(JSON.parse(await out).cancelled, true);
});

Deno.test({
  name:
    "REPL through the launcher: the terminal passes through, Ctrl-C twice at the prompt leaves with exit 0",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    await using llm = await startScriptedLlm({ scenario: { turns: [] } });
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path, [
      Deno.execPath(),
      "run",
      "--allow-read",
      "--allow-env",
      "--allow-run",
      `${ROOT}/launch.ts`,
    ]);
    await term.send("C-c");
    await term.waitFor(/Ctrl-C again to leave/);
    await term.send("C-c");
    await term.waitFor(/\[exit 0\]/);
  },
});
