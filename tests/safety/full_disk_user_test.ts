/**
 * A disk that fills while a plan runs, under a user's real grants: the audit
 * directory is a small tmpfs (mounted as root; the test is skipped where
 * mounting is refused), filled the moment the gateway sees the plan's write.
 */
import assert from "node:assert/strict";
import { canMount, fill, mountTmpfs } from "../support/full_disk.ts";
import { UserSetup } from "../support/user_grants.ts";

Deno.test({
  name:
    "a plan whose outcome append hits a full disk after its write says not recorded, exits 1, keeps its run marker and is reported on the next start",
  ignore: !(await canMount()),
  fn: async () => {
    await using user = await UserSetup.start();
    const audit = `${user.stateDir}/audit`;
    await Deno.mkdir(audit, { recursive: true, mode: 0o700 });
    const unmount = await mountTmpfs(audit, "512k");
    try {
      const file = await user.file(
        "plan.json",
        JSON.stringify({
          description: "trim H01",
          actions: [
            { type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "trim" },
            { type: "wait", seconds: 2, reason: "let it settle" },
            // Each entry carries the plan: more than a page, so the outcome cannot fit into
            // the slack of the day file's last tmpfs page.
            ...Array.from(
              { length: 24 },
              () => ({ type: "wait", seconds: 0, reason: "x".repeat(190) }),
            ),
          ],
        }),
      );
      const shown = await user.run(["plan", "show", file, "--json"]);
      assert.equal(shown.code, 0, shown.stderr);
      const token = JSON.parse(shown.stdout).approval.token as string;
      const running = user.run(["plan", "run", file, "--approved-hash", token, "--json"]);
      // The write is on the wire: the disk fills before the outcome is appended. A run that
      // ends without writing fails here instead of leaving the test waiting.
      await Promise.race([
        user.writesReached(1),
        running.then((r) => {
          if (!user.writes.length) {
            throw new Error(`the plan's write never reached the gateway: ${r.stderr}`);
          }
        }),
      ]);
      assert.equal(user.writes.length, 1);
      await fill(audit);
      const ran = await running;

      // The printed result: the plan ran, its outcome is not recorded, exit 1.
      assert.equal(ran.code, 1, ran.stderr);
      const out = JSON.parse(ran.stdout);
      assert.equal(out.status, "completed");
      assert.equal(out.recorded, false);
      assert.equal(out.exit_code, 1);
      assert.ok(
        out.errors.some((e: string) =>
          /the outcome could not be recorded: .*No space left on device.*run journal/.test(e)
        ),
        JSON.stringify(out.errors),
      );
      // The device: written once, never restored (the plan completed).
      assert.deepEqual(user.writes, [{ pv: "SR:COR:H01:SETPT", value: 0.6 }]);
      // The audit: whole lines only, ending with the write-ahead record; the marker kept.
      const days = [...Deno.readDirSync(audit)].filter((e) => e.name.endsWith(".jsonl"));
      assert.equal(days.length, 1);
      const text = await Deno.readTextFile(`${audit}/${days[0]?.name}`);
      assert.ok(text.endsWith("\n"), "the audit file ends in a torn line");
      const entries = text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
      assert.equal(entries.at(-1).status, "write_ahead");
      assert.deepEqual(
        [...Deno.readDirSync(`${user.stateDir}/running`)].length >= 1,
        true,
        "the run marker was not kept",
      );

      // Space again: the next command reports the plan, and the chain is intact.
      await Deno.remove(`${audit}/filler`);
      const verify = await user.run(["audit", "verify"]);
      assert.equal(verify.code, 0, verify.stderr);
      assert.match(verify.stdout, /audit chain intact/);
      assert.match(
        verify.stderr,
        /plan [0-9a-f]{12} "trim H01" .* ended completed but its outcome is not in the audit log.*plan recover/,
      );
    } finally {
      await unmount();
    }
  },
});
