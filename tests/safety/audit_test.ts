import assert from "node:assert/strict";
import { AuditLog, GENESIS, verifyAudit } from "../../src/safety/audit.ts";
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
  assert.deepEqual({ ...result, lastHash: "" }, { ok: true, entries: 3, files: 2, lastHash: "" });
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
  const result = await verifyAudit(await new AuditLog(dir).files(), true);
  assert.deepEqual(result.ok && result.entries, 45, JSON.stringify(result));
});
