import assert from "node:assert/strict";
import { AuditLog, entryHash, GENESIS } from "../../src/safety/audit.ts";
import { verifyAudit, verifyAuditDir } from "../../src/safety/audit_verify.ts";
import { loadKey } from "../../src/safety/keys.ts";
import { tempDir } from "../support/temp.ts";

const RECORD = {
  operator: "op",
  host: "console-1",
  configHash: "c".repeat(64),
  planHash: "p".repeat(64),
  plan: { description: "x", actions: [] },
  decision: "approved",
  decidedBy: "terminal",
  status: "completed",
};

/** A log in a temporary directory with one entry per day given; disposing it removes the directory. */
async function logWithDays(days: string[]): Promise<AuditLog & AsyncDisposable> {
  const dir = await tempDir();
  let t = 0;
  const log = new AuditLog(dir.path, () => Date.parse(days[t] as string));
  for (t = 0; t < days.length; t++) await log.append({ ...RECORD, status: `entry ${t + 1}` });
  return Object.assign(log, { [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose]() });
}

Deno.test("entries chain across day files and verify intact", async () => {
  await using log = await logWithDays([
    "2026-11-20T23:59:00Z",
    "2026-11-20T23:59:30Z",
    "2026-11-21T00:00:10Z",
  ]);
  const files = await log.files();
  assert.deepEqual(files.map((f) => f.slice(-16)), ["2026-11-20.jsonl", "2026-11-21.jsonl"]);
  const result = await verifyAudit(files, true);
  assert.ok(result.ok);
  assert.deepEqual([result.entries, result.files, result.keyed, result.unkeyed], [3, 2, 0, 3]);
  const first = JSON.parse((await Deno.readTextFile(files[0] as string)).split("\n")[0] as string);
  assert.equal(first.prevHash, GENESIS);
  assert.equal(first.time, "2026-11-20T23:59:00.000Z");
});

Deno.test("editing one byte of an entry fails verification at that line", async () => {
  await using log = await logWithDays([
    "2026-11-20T10:00:00Z",
    "2026-11-20T10:01:00Z",
    "2026-11-20T10:02:00Z",
  ]);
  const [file] = await log.files();
  const text = await Deno.readTextFile(file as string);
  const at = text.indexOf("entry 2") + "entry ".length;
  await Deno.writeTextFile(file as string, text.slice(0, at) + "7" + text.slice(at + 1));
  assert.deepEqual(await verifyAudit([file as string]), {
    ok: false,
    file,
    line: 2,
    reason: "the entry's content does not match its hash",
  });
});

Deno.test("removing a line breaks the chain at the line after it", async () => {
  await using log = await logWithDays([
    "2026-11-20T10:00:00Z",
    "2026-11-20T10:01:00Z",
    "2026-11-20T10:02:00Z",
  ]);
  const [file] = await log.files();
  const lines = (await Deno.readTextFile(file as string)).split("\n");
  await Deno.writeTextFile(file as string, [lines[0], lines[2], ""].join("\n"));
  const result = await verifyAudit([file as string]);
  assert.equal(result.ok, false);
  assert.ok(!result.ok && result.line === 2 && /does not link/.test(result.reason));
});

Deno.test("removing the oldest day file is caught when the whole directory is verified", async () => {
  await using log = await logWithDays(["2026-11-19T10:00:00Z", "2026-11-20T10:00:00Z"]);
  const files = await log.files();
  await Deno.remove(files[0] as string);
  const result = await verifyAudit(await log.files(), true);
  assert.ok(!result.ok && result.line === 1);
  // One file alone may start anywhere: its predecessor is not at hand.
  assert.equal((await verifyAudit(await log.files())).ok, true);
});

Deno.test("a line that is not JSON is named", async () => {
  await using log = await logWithDays(["2026-11-20T10:00:00Z"]);
  const [file] = await log.files();
  await Deno.writeTextFile(file as string, "garbage\n", { append: true });
  const result = await verifyAudit([file as string]);
  assert.ok(!result.ok && result.line === 2 && result.reason === "not valid JSON");
});

Deno.test("a line re-serialised with the same content (whitespace, number form) fails verification", async () => {
  await using log = await logWithDays(["2026-11-20T10:00:00Z", "2026-11-20T10:01:00Z"]);
  const [file] = await log.files();
  const text = await Deno.readTextFile(file as string);
  await Deno.writeTextFile(
    file as string,
    text.replace('"status":"entry 1"', '"status": "entry 1"'),
  );
  const result = await verifyAudit([file as string]);
  assert.ok(
    !result.ok && result.line === 1 && result.reason === "the line is not as it was written",
  );
});

Deno.test("a clock set back does not write into an older day file", async () => {
  await using dir = await tempDir();
  let now = Date.parse("2026-11-21T00:00:05Z");
  const log = new AuditLog(dir.path, () => now);
  await log.append(RECORD);
  now = Date.parse("2026-11-20T23:59:58Z");
  await log.append(RECORD);
  assert.deepEqual((await log.files()).map((f) => f.slice(-16)), ["2026-11-21.jsonl"]);
  assert.equal((await verifyAudit(await log.files(), true)).ok, true);
});

Deno.test("separate processes appending at once keep one chain", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const script = new URL("../support/audit_append.ts", import.meta.url).pathname;
  const children = [0, 1, 2].map(() =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", script, dir, "15"],
      stdout: "null",
      stderr: "piped",
    })
      .output()
  );
  for (const out of await Promise.all(children)) {
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  }
  const result = await verifyAuditDir(dir, await new AuditLog(dir).files());
  assert.deepEqual(
    result.ok && [result.entries, result.head],
    [45, "matches"],
    JSON.stringify(result),
  );
});

/** A keyed log (audit key in a temporary state directory) with `n` entries. */
async function keyedLog(n: number) {
  const tmp = await tempDir();
  const state = tmp.path;
  const key = () => loadKey(state, "audit");
  const log = new AuditLog(`${state}/audit`, Date.now, { key });
  for (let i = 0; i < n; i++) await log.append({ ...RECORD, status: `entry ${i + 1}` });
  const verify = async () => verifyAuditDir(log.dir, await log.files(), await key());
  return Object.assign(log, {
    verify,
    key,
    [Symbol.asyncDispose]: () => tmp[Symbol.asyncDispose](),
  });
}

Deno.test("a keyed log verifies with every entry's MAC checked and the head matching", async () => {
  await using log = await keyedLog(3);
  const r = await log.verify();
  assert.ok(r.ok, JSON.stringify(r));
  assert.deepEqual([r.entries, r.keyed, r.unkeyed, r.head], [3, 3, 0, "matches"]);
  assert.deepEqual(JSON.parse(await Deno.readTextFile(`${log.dir}/HEAD`)).entries, 3);
});

Deno.test("removing the newest entries of a keyed log is detected through the head record", async () => {
  await using log = await keyedLog(4);
  const [file] = await log.files();
  const lines = (await Deno.readTextFile(file as string)).split("\n").filter(Boolean);
  await Deno.writeTextFile(file as string, `${lines.slice(0, 2).join("\n")}\n`);
  const r = await log.verify();
  assert.ok(!r.ok);
  assert.match(
    r.reason,
    /the log ends after 2 entries but the head records 4: the last 2 were removed/,
  );
  // Nothing more is chained onto a cut tail.
  await assert.rejects(
    log.append(RECORD),
    /AuditError: audit chain broken at .*\/HEAD:1: the log ends after 2 entries but the head records 4: the last 2 were removed; nothing can be recorded until it is looked at \(accel-agent audit verify\)$/,
  );
});

Deno.test("a keyed entry rewritten and re-hashed down the chain without the key fails on its MAC", async () => {
  await using log = await keyedLog(3);
  const [file] = await log.files();
  const entries = (await Deno.readTextFile(file as string)).split("\n").filter(Boolean)
    .map((l) => JSON.parse(l));
  // The forger edits entry 2 and recomputes every hash after it, keeping the old MACs.
  entries[1].status = "nothing happened";
  let prev = entries[0].hash;
  for (const e of entries.slice(1)) {
    const { hash: _h, mac, ...body } = e;
    body.prevHash = prev;
    const hash = await entryHash(body);
    Object.assign(e, body, { hash, mac });
    prev = hash;
  }
  await Deno.writeTextFile(file as string, entries.map((e) => JSON.stringify(e)).join("\n") + "\n");
  await Deno.writeTextFile(`${log.dir}/HEAD`, JSON.stringify({ entries: 3, lastHash: prev }));
  const r = await log.verify();
  assert.ok(!r.ok && r.line === 2, JSON.stringify(r));
  assert.match(r.reason, /MAC does not match \(rewritten without the audit key\)/);
});

Deno.test("an old log written without a key verifies as unkeyed and says what that does not prove", async () => {
  await using log = await logWithDays(["2026-11-20T10:00:00Z", "2026-11-20T10:01:00Z"]);
  await Deno.remove(`${log.dir}/HEAD`);
  const r = await verifyAuditDir(log.dir, await log.files());
  assert.ok(r.ok, JSON.stringify(r));
  assert.equal(r.head, "absent");
  assert.deepEqual([r.keyed, r.unkeyed], [0, 2]);
  assert.match(r.notes.join("\n"), /2 entries were written without an audit key/);
  assert.match(r.notes.join("\n"), /a cut tail cannot be detected/);
  // A keyed append continues the old chain; from then on it is keyed.
  const key = await loadKey(log.dir, "audit");
  const keyed = new AuditLog(log.dir, Date.now, { key: () => Promise.resolve(key) });
  await keyed.append(RECORD);
  const after = await verifyAuditDir(log.dir, await keyed.files(), key);
  assert.ok(after.ok, JSON.stringify(after));
  assert.deepEqual([after.entries, after.keyed, after.unkeyed, after.head], [3, 1, 2, "matches"]);
});

Deno.test("an unkeyed entry appended after keyed ones fails verification", async () => {
  await using log = await keyedLog(2);
  await new AuditLog(log.dir).append(RECORD);
  const r = await log.verify();
  assert.ok(!r.ok && r.line === 3, JSON.stringify(r));
  assert.match(r.reason, /no MAC after keyed entries/);
});

Deno.test("a keyed log whose head record was deleted refuses to append and fails verification", async () => {
  await using log = await keyedLog(2);
  await Deno.remove(`${log.dir}/HEAD`);
  await assert.rejects(log.append(RECORD), /head record is missing/);
  const r = await log.verify();
  assert.ok(!r.ok && /head record is missing/.test(r.reason), JSON.stringify(r));
});

Deno.test("an audit directory that is a file fails with one AuditError naming it", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(`${tmp.path}/audit`, "not a directory");
  const log = new AuditLog(`${tmp.path}/audit`);
  await assert.rejects(log.ready(), (e: Error) => {
    assert.equal(e.name, "AuditError");
    assert.match(e.message, /^cannot write the audit log in .*\/audit \(/);
    return true;
  });
});
