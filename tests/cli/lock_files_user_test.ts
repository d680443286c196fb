/**
 * The lock files of the state directory (the audit's, a logbook draft's, the
 * file logbook's) found as a FIFO: the command that takes the lock ends in
 * one line naming the file, instead of waiting for ever in an `open` that no
 * signal can cut short (opening a FIFO for writing waits for a reader).
 * Through the launcher with the config's real grants; a 60 s ceiling kills a
 * program that hangs, and the test fails on its exit code.
 */
import assert from "node:assert/strict";
import { runAsUser } from "../support/user_grants.ts";
import { tempDir } from "../support/temp.ts";

async function mkfifo(path: string): Promise<void> {
  await Deno.remove(path).catch(() => {});
  assert.ok((await new Deno.Command("mkfifo", { args: [path] }).output()).success);
}

/**
 * The one line that names `file` as a FIFO: on stderr, or (a draft's post
 * report) on stdout; a failure exit, no stack trace.
 */
function assertRefused(r: { code: number; stdout: string; stderr: string }, file: RegExp): void {
  const all = `${r.stdout}${r.stderr}`;
  assert.notEqual(r.code, 137, `the program waited on the FIFO: ${all}`);
  assert.equal(r.code, 1, all);
  const lines = all.trim().split("\n").filter((l) => file.test(l));
  assert.equal(lines.length, 1, all);
  assert.match(lines[0] ?? "", /is a FIFO \(named pipe\), not a regular file/);
  assert.doesNotMatch(all, /internal error|\n\s+at /);
}

Deno.test("a lock file found as a FIFO ends plan run and elog post in one line naming it, never a hang", async () => {
  await using dir = await tempDir();
  const state = `${dir.path}/state`;
  const config = `${dir.path}/config.toml`;
  await Deno.writeTextFile(
    config,
    `[state]\ndir = ${JSON.stringify(state)}\n[sandbox]\nprewarm = false\nspare_processes = 0\n`,
  );
  const plan = `${dir.path}/look.json`;
  await Deno.writeTextFile(
    plan,
    JSON.stringify({
      description: "look",
      actions: [{ type: "read", devices: ["RING:BPM:01:X"] }],
    }),
  );
  const run = (args: string[]) => runAsUser(["--config", config, ...args], { ceilingMs: 60_000 });
  const token = (p: string) =>
    run(["plan", "show", p, "--json"]).then((r) => JSON.parse(r.stdout).approval.token as string);

  // The audit's lock: every plan takes it.
  assert.equal((await run(["plan", "run", plan, "--approved-hash", await token(plan)])).code, 0);
  const tokenAgain = await token(plan);
  await mkfifo(`${state}/audit/.lock`);
  assertRefused(
    await run(["plan", "run", plan, "--approved-hash", tokenAgain]),
    /audit\/\.lock: is a FIFO/,
  );
  await Deno.remove(`${state}/audit/.lock`);

  // A draft's lock, and the logbook's.
  const shift = await run(["elog", "shift", "--json"]);
  assert.equal(shift.code, 0, shift.stderr);
  const id = JSON.parse(shift.stdout).draft.id as string;
  const drafts = `${state}/elog/drafts`;
  await mkfifo(`${drafts}/${id}.lock`);
  assertRefused(await run(["elog", "post", id]), new RegExp(`${id}\\.lock: is a FIFO`));
  await Deno.remove(`${drafts}/${id}.lock`);
  await mkfifo(`${state}/elog/simulator.jsonl.lock`);
  assertRefused(await run(["elog", "post", id]), /simulator\.jsonl\.lock: is a FIFO/);
  await Deno.remove(`${state}/elog/simulator.jsonl.lock`);
  // Nothing was posted meanwhile: the draft posts now, once.
  const posted = await run(["elog", "post", id, "--json"]);
  assert.equal(posted.code, 0, posted.stderr);
});
