/**
 * A plan stopped by any signal a control room sends — SIGINT (Ctrl-C),
 * SIGTERM (a service manager, `kill`), SIGHUP (the terminal or ssh session
 * closed) — restores what it changed, records it and prints its result,
 * also when only the program (not its launcher) receives the signal. Run as
 * a user runs it, on the fake EPICS gateway, which sees every write.
 */
import assert from "node:assert/strict";
import { waitFor } from "../support/run_agent.ts";
import { programPid, UserSetup, writeThenHold } from "../support/user_grants.ts";
import { AuditLog } from "../../src/safety/audit.ts";

const H01 = "SR:COR:H01:SETPT";

const CASES: { signal: Deno.Signal; code: number; to: "launcher" | "program" }[] = [
  { signal: "SIGTERM", code: 143, to: "launcher" },
  { signal: "SIGHUP", code: 129, to: "launcher" },
  { signal: "SIGINT", code: 130, to: "launcher" },
  { signal: "SIGTERM", code: 143, to: "program" },
  { signal: "SIGHUP", code: 129, to: "program" },
];

for (const c of CASES) {
  Deno.test(
    `${c.signal} to the ${c.to} mid-plan restores the corrector, records it and prints the JSON (exit ${c.code})`,
    async () => {
      await using user = await UserSetup.start();
      const file = await user.plan(writeThenHold());
      let guard: ReturnType<typeof setTimeout> | undefined;
      const ran = await user.run([
        "plan",
        "run",
        file,
        "--approved-hash",
        await user.token(file),
        "--json",
      ], {
        onSpawn: async (launcher) => {
          await waitFor(() => user.writes.length === 1, 60_000, "the plan's write");
          const program = await programPid(launcher);
          Deno.kill(c.to === "launcher" ? launcher.pid : program, c.signal);
          // A program the signal did not stop would wait out its 600 s: end it, and fail below.
          guard = setTimeout(() => {
            for (const pid of [program, launcher.pid]) {
              try {
                Deno.kill(pid, "SIGKILL");
              } catch { /* gone */ }
            }
          }, 60_000);
        },
      });
      clearTimeout(guard);
      assert.equal(ran.code, c.code, ran.stderr);
      const out = JSON.parse(ran.stdout);
      assert.equal(out.status, "aborted");
      assert.equal(out.exit_code, c.code);
      assert.match(JSON.stringify(out.errors), new RegExp(`cancelled by ${c.signal}`));
      // On the wire: the write, then the restore to the original.
      assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }, { pv: H01, value: 0.5 }]);
      // In the audit: the plan's start and its outcome with the restore.
      const log = new AuditLog(`${user.stateDir}/audit`);
      const lines = (await Promise.all((await log.files()).map((f) => Deno.readTextFile(f))))
        .join("").trim().split("\n").map((l) => JSON.parse(l));
      const last = lines.at(-1);
      assert.equal(last.status, "aborted");
      assert.deepEqual(
        last.restores.map((
          r: { device: string; to: number; ok: boolean },
        ) => [r.device, r.to, r.ok]),
        [[H01, 0.5, true]],
      );
    },
  );
}
