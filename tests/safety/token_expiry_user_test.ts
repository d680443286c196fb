/**
 * A token that runs out between its check and the plan's first write, as a
 * user runs the program (the launcher, the config's grants, `plan run` with
 * its token) on the fake EPICS facility: the run is held after its approval
 * is recorded (the audit's lock taken, as a slow disk or a gateway answering
 * the second preflight late would hold it) until the token has expired.
 * Nothing reaches the wire, and one line says the token expired before the
 * first write.
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";

Deno.test("a token that expires after its check and before the plan's first write writes nothing", async () => {
  // A slow gateway and no monitors kept: the executor's second preflight takes seconds.
  await using user = await UserSetup.start({
    safety: "approval_expiry_s = 30",
    epicsConfig: { read_timeout_ms: 30_000, monitor_linger_ms: 0 },
  });
  const file = await user.plan({
    description: "trim",
    actions: [{ type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "trim" }],
  });
  const shown = await user.run(["plan", "show", file, "--json"]);
  const { token, expires_at } = JSON.parse(shown.stdout).approval;
  const expiry = Date.parse(expires_at);
  const audit = `${user.stateDir}/audit`;
  user.epics.pvws.latencyMs = 2000;
  const ran = await user.run(["plan", "run", file, "--approved-hash", token, "--json"], {
    ceilingMs: 180_000,
    onSpawn: async () => {
      // The token is checked and the run recorded as started; the write-ahead record waits.
      for (;;) {
        const text = await auditText(audit);
        if (text.includes('"status":"started"')) break;
        assert.doesNotMatch(text, /"rejected"/, "the token was refused before the run started");
        await new Promise((r) => setTimeout(r, 20));
      }
      using lock = await Deno.open(`${audit}/.lock`, { write: true, create: true });
      await lock.lock(true);
      assert.doesNotMatch(await auditText(audit), /"write_ahead"/, "held before its write-ahead");
      await new Promise((r) => setTimeout(r, Math.max(0, expiry - Date.now()) + 1500));
    },
  });
  assert.deepEqual(user.writes, []);
  const out = JSON.parse(ran.stdout);
  assert.equal(out.status, "refused", ran.stdout);
  assert.match(
    out.errors.join("\n"),
    /approval refused: the token expired at .*before the plan's first write/,
  );
  assert.doesNotMatch(ran.stderr, /^\s+at /m);
});

async function auditText(dir: string): Promise<string> {
  let text = "";
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.name.endsWith(".jsonl")) text += await Deno.readTextFile(`${dir}/${e.name}`);
    }
  } catch {
    // not written yet
  }
  return text;
}
