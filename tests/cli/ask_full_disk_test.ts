/** `ask --json` when the session cannot be saved: the answer is still printed, as JSON. */
import assert from "node:assert/strict";
import { canMount, fill, mountTmpfs } from "../support/full_disk.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { UserSetup } from "../support/user_grants.ts";

Deno.test({
  name:
    "ask --json on a full disk prints its answer as JSON with session_saved false, one line on stderr, and exit 1",
  ignore: !(await canMount()),
  fn: async () => {
    await using llm = await startScriptedLlm({
      scenario: { turns: [{ respond: { text: "The beam current is 300 mA." } }] },
    });
    await using user = await UserSetup.start();
    const sessions = `${user.stateDir}/sessions`;
    const unmount = await mountTmpfs(sessions, "64k");
    try {
      await fill(sessions);
      const r = await user.run(["ask", "--json", "what is the beam current"], {
        env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
      });
      assert.equal(r.code, 1, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.equal(out.answer, "The beam current is 300 mA.");
      assert.equal(out.session_saved, false);
      assert.match(out.session_error, /could not be saved .*No space left on device/);
      assert.equal(out.ok, false);
      assert.equal(out.exit_code, 1);
      // Said once, however many saves the turn tried.
      const said = r.stderr.split("\n").filter((l) => /session could not be saved/.test(l));
      assert.equal(said.length, 1, r.stderr);
      assert.doesNotMatch(r.stderr, /\bat .*\.ts:\d+/); // no stack trace
      // Nothing half-written was left behind.
      for (const e of Deno.readDirSync(sessions)) {
        if (!e.name.endsWith(".jsonl")) continue;
        assert.equal(Deno.statSync(`${sessions}/${e.name}`).size, 0, e.name);
      }
    } finally {
      await unmount();
    }
  },
});
