/** Audit appends on a full disk, and torn tails found on start. */
import assert from "node:assert/strict";
import { AuditError, AuditLog } from "../../src/safety/audit.ts";
import { verifyAuditDir } from "../../src/safety/audit_verify.ts";
import { loadKey } from "../../src/safety/keys.ts";
import { FullDisk } from "../support/full_disk.ts";
import { tempDir } from "../support/temp.ts";

const RECORD = {
  operator: "op",
  host: "console-1",
  configHash: "c".repeat(64),
  planHash: "p".repeat(64),
  plan: { description: "x", actions: [] },
  decision: "approved",
  decidedBy: "terminal",
};

/** A keyed log with `n` entries, whose appends go through `disk`; `reports` collects recoveries. */
async function keyedLog(n: number, disk = new FullDisk(Infinity)) {
  const tmp = await tempDir();
  const key = () => loadKey(tmp.path, "audit");
  const reports: string[] = [];
  const log = new AuditLog(`${tmp.path}/audit`, Date.now, {
    key,
    headPath: `${tmp.path}/audit.head`,
    fs: disk,
    onRecovered: (m) => reports.push(m),
  });
  for (let i = 0; i < n; i++) await log.append({ ...RECORD, status: `entry ${i + 1}` });
  const verify = async () => verifyAuditDir(log.dir, await log.files(), await key(), log.headPath);
  const bytes = async () => await Deno.readFile((await log.files())[0] as string);
  return Object.assign(log, {
    verify,
    bytes,
    disk,
    reports,
    tmp: tmp.path,
    [Symbol.asyncDispose]: () => tmp[Symbol.asyncDispose](),
  });
}

Deno.test("an outcome append that hits a full disk leaves the audit file byte for byte as it was and is reported", async () => {
  await using log = await keyedLog(2);
  const before = await log.bytes();
  const head = await Deno.readTextFile(log.headPath);
  log.disk.budget = log.disk.written + 100; // room for part of the line only
  await assert.rejects(
    () => log.append({ ...RECORD, status: "completed" }),
    (e: Error) => e instanceof AuditError && /No space left on device/.test(e.message),
  );
  assert.deepEqual(await log.bytes(), before);
  assert.equal(await Deno.readTextFile(log.headPath), head);
  const r = await log.verify();
  assert.ok(r.ok && r.entries === 2 && r.head === "matches" && !r.torn, JSON.stringify(r));
  // Space again: the next plan is recorded, on an intact chain.
  log.disk.budget = Infinity;
  await log.append({ ...RECORD, status: "completed" });
  const after = await log.verify();
  assert.ok(after.ok && after.entries === 3 && after.head === "matches", JSON.stringify(after));
});

Deno.test("a head record that cannot be replaced undoes the entry's line too", async () => {
  await using log = await keyedLog(1);
  const before = await log.bytes();
  // The head is replaced through a temporary file: a directory in its place makes that fail.
  await Deno.mkdir(`${log.headPath}.${Deno.pid}.tmp`);
  await assert.rejects(
    () => log.append({ ...RECORD, status: "completed" }),
    /the head record could not be replaced/,
  );
  assert.deepEqual(await log.bytes(), before);
  const r = await log.verify();
  assert.ok(r.ok && r.entries === 1 && r.head === "matches", JSON.stringify(r));
});

Deno.test("a torn last line left by a killed append is told apart by verify, then cut off into .torn and reported on start", async () => {
  await using log = await keyedLog(3);
  const file = (await log.files())[0] as string;
  const intact = await log.bytes();
  // A process killed mid-append: part of a line, no newline, the head not yet replaced.
  const tail = '{"operator":"op","host":"cons';
  await Deno.writeTextFile(file, tail, { append: true });
  const v = await log.verify();
  assert.ok(v.ok, JSON.stringify(v));
  assert.deepEqual(v.torn, { file, line: 4, bytes: tail.length });
  assert.ok(
    v.notes.some((n) => /torn last line .*recoverable, not tampering/.test(n)),
    v.notes.join(),
  );
  await log.ready();
  assert.equal(log.reports.length, 1);
  assert.match(
    log.reports[0] as string,
    new RegExp(`its last line was torn .*${tail.length} bytes.*cut off and kept in .*\\.torn$`),
  );
  assert.deepEqual(await log.bytes(), intact);
  assert.equal(await Deno.readTextFile(`${file}.torn`), '{"operator":"op","host":"cons\n');
  // Never fused into: the next entry starts on a line of its own and the chain holds.
  await log.append({ ...RECORD, status: "completed" });
  const r = await log.verify();
  assert.ok(r.ok && r.entries === 4 && r.head === "matches" && !r.torn, JSON.stringify(r));
});

Deno.test("a torn line after a cut chain is tampering: verify fails and nothing more is recorded", async () => {
  await using log = await keyedLog(3);
  const file = (await log.files())[0] as string;
  const lines = (await Deno.readTextFile(file)).split("\n").filter(Boolean);
  // The newest entry removed, and a torn-looking tail put in its place.
  await Deno.writeTextFile(file, `${lines.slice(0, 2).join("\n")}\n{"operator":"o`);
  const v = await log.verify();
  assert.ok(!v.ok, JSON.stringify(v));
  assert.match(v.reason, /removed/);
  await assert.rejects(() => log.append({ ...RECORD, status: "completed" }), AuditError);
  assert.equal(log.reports.length, 0);
  assert.match(await Deno.readTextFile(file), /\{"operator":"o$/);
});

Deno.test("an append that cannot be cut back says so, and the torn line it left is cut off on the next start", async () => {
  await using log = await keyedLog(2);
  log.disk.budget = log.disk.written + 50;
  log.disk.truncateFails = true;
  await assert.rejects(
    () => log.append({ ...RECORD, status: "completed" }),
    /could not be cut back .*cut off on the next start/,
  );
  log.disk.budget = Infinity;
  log.disk.truncateFails = false;
  await log.append({ ...RECORD, status: "completed" });
  assert.equal(log.reports.length, 1);
  const r = await log.verify();
  assert.ok(r.ok && r.entries === 3 && r.head === "matches", JSON.stringify(r));
});
