/**
 * An append checks the tail it chains onto as `audit verify` does: a newest
 * entry or a head record forged without the audit key, or a tail copied from
 * another state directory (another key), is refused with the very line
 * `audit verify` prints, and nothing is appended.
 */
import assert from "node:assert/strict";
import { AuditLog, chainBreakText, entryHash, entryMac, headMac } from "../../src/safety/audit.ts";
import { verifyAuditDir } from "../../src/safety/audit_verify.ts";
import { loadKey } from "../../src/safety/keys.ts";
import { tempDir } from "../support/temp.ts";
import { UserSetup } from "../support/user_grants.ts";

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

/** A keyed log in a state directory of its own, with `n` entries. */
async function keyedLog(n: number) {
  const tmp = await tempDir();
  const state = tmp.path;
  const key = () => loadKey(state, "audit");
  const log = new AuditLog(`${state}/audit`, Date.now, {
    key,
    headPath: `${state}/audit.head`,
  });
  for (let i = 0; i < n; i++) await log.append({ ...RECORD, status: `entry ${i + 1}` });
  return Object.assign(log, {
    state,
    key,
    verify: async () => verifyAuditDir(log.dir, await log.files(), await key(), log.headPath),
    [Symbol.asyncDispose]: () => tmp[Symbol.asyncDispose](),
  });
}

type Log = Awaited<ReturnType<typeof keyedLog>>;

/** Appending is refused with `audit verify`'s line, and the log is byte for byte as it was. */
async function refusedAsVerifyFails(log: Log): Promise<string> {
  const verified = await log.verify();
  assert.ok(!verified.ok, "the forged tail verified");
  const line = chainBreakText(verified);
  const [file] = await log.files();
  const before = await Deno.readTextFile(file as string);
  const head = await Deno.readTextFile(log.headPath);
  for (const attempt of [() => log.append(RECORD), () => log.ready()]) {
    await assert.rejects(attempt, (e: Error) => {
      assert.equal(e.name, "AuditError");
      assert.ok(
        e.message.startsWith(`${line}; `),
        `append said\n  ${e.message}\naudit verify says\n  ${line}`,
      );
      assert.ok(!e.message.includes("\n"));
      return true;
    });
  }
  assert.equal(await Deno.readTextFile(file as string), before);
  assert.equal(await Deno.readTextFile(log.headPath), head);
  return line;
}

/** A forged entry after the log's last one, hashed correctly, with the MAC `mac` gives it. */
async function forgeEntry(log: Log, mac: (hash: string) => Promise<string | undefined>) {
  const [file] = await log.files();
  const lines = (await Deno.readTextFile(file as string)).split("\n").filter(Boolean);
  const last = JSON.parse(lines.at(-1) as string);
  const body = { ...RECORD, status: "nothing happened", time: last.time, prevHash: last.hash };
  const hash = await entryHash(body);
  const m = await mac(hash);
  const entry = { ...body, hash, ...(m === undefined ? {} : { mac: m }) };
  await Deno.writeTextFile(file as string, `${JSON.stringify(entry)}\n`, { append: true });
  return { entries: lines.length + 1, lastHash: hash };
}

Deno.test("an entry forged without the key after the last one is refused on append with audit verify's line", async () => {
  await using log = await keyedLog(2);
  // A MAC made with some other key; the head is left one entry behind (an interrupted append).
  const other = await crypto.subtle.importKey(
    "raw",
    crypto.getRandomValues(new Uint8Array(32)),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  await forgeEntry(log, (h) => entryMac(other, h));
  const line = await refusedAsVerifyFails(log);
  assert.match(line, /:3: the entry's MAC does not match \(rewritten without the audit key\)$/);
});

Deno.test("an entry forged without a MAC and a head re-written without the key are refused on append", async () => {
  await using log = await keyedLog(2);
  const head = await forgeEntry(log, () => Promise.resolve(undefined));
  await Deno.writeTextFile(log.headPath, `${JSON.stringify(head)}\n`);
  const line = await refusedAsVerifyFails(log);
  assert.match(line, /:3: the entry has no MAC after keyed entries/);
});

Deno.test("a head record re-written without the key (a cut tail made to look whole) is refused on append", async () => {
  await using log = await keyedLog(3);
  const [file] = await log.files();
  const lines = (await Deno.readTextFile(file as string)).split("\n").filter(Boolean);
  await Deno.writeTextFile(file as string, `${lines.slice(0, 2).join("\n")}\n`);
  const kept = JSON.parse(lines[1] as string);
  // The forger's key is not the log's: the head's MAC cannot match.
  const forger = await loadKey(`${log.state}/elsewhere`, "audit");
  const head = { entries: 2, lastHash: kept.hash };
  await Deno.writeTextFile(
    log.headPath,
    `${JSON.stringify({ ...head, mac: await headMac(forger, head) })}\n`,
  );
  const line = await refusedAsVerifyFails(log);
  assert.match(line, /audit\.head:1: the head record's MAC does not match/);
});

Deno.test("a tail copied from another state directory (another key) is refused on append", async () => {
  await using mine = await keyedLog(2);
  await using theirs = await keyedLog(3);
  const [myFile] = await mine.files();
  const [theirFile] = await theirs.files();
  // Their whole day file and head, put in place of ours: every hash and link is sound.
  await Deno.copyFile(theirFile as string, myFile as string);
  await Deno.copyFile(theirs.headPath, mine.headPath);
  const line = await refusedAsVerifyFails(mine);
  assert.match(line, /:1: the entry's MAC does not match/);
});

Deno.test("an intact keyed log, and one whose head is one entry behind, still take appends", async () => {
  await using log = await keyedLog(2);
  // The head of two entries, kept over a third append: as if the third's process stopped there.
  const two = await Deno.readTextFile(log.headPath);
  await log.append(RECORD);
  await Deno.writeTextFile(log.headPath, two);
  await log.append(RECORD);
  const r = await log.verify();
  assert.ok(r.ok, JSON.stringify(r));
  assert.deepEqual([r.entries, r.keyed, r.head], [4, 4, "matches"]);
});

Deno.test("under a user's grants, a plan after a forged last entry is refused with audit verify's line and writes nothing", async () => {
  await using user = await UserSetup.start();
  const file = await user.file(
    "p.json",
    JSON.stringify({
      description: "trim H01",
      actions: [{ type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "trim" }],
    }),
  );
  const read = await user.file(
    "read.json",
    JSON.stringify({
      description: "look",
      actions: [{ type: "read", devices: ["SR:COR:H01:SETPT"] }],
    }),
  );
  assert.equal(
    (await user.run(["plan", "run", read, "--approved-hash", await user.token(read)])).code,
    0,
  );
  const token = await user.token(file);
  // One entry more, hashed and linked as the log would, with a MAC of another key; the head is
  // left one behind, which an interrupted append also leaves.
  const dir = `${user.stateDir}/audit`;
  const [name] = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".jsonl"));
  const day = `${dir}/${name}`;
  const lines = (await Deno.readTextFile(day)).split("\n").filter(Boolean);
  const last = JSON.parse(lines.at(-1) as string);
  const body = { ...last, status: "nothing happened", prevHash: last.hash };
  delete body.hash;
  delete body.mac;
  const hash = await entryHash(body);
  const other = await loadKey(`${user.dir}/elsewhere`, "audit");
  await Deno.writeTextFile(
    day,
    `${JSON.stringify({ ...body, hash, mac: await entryMac(other, hash) })}\n`,
    { append: true },
  );
  const verify = await user.run(["audit", "verify"]);
  assert.equal(verify.code, 1);
  const said = verify.stderr.trim().replace(/^accel-agent: /, "");
  assert.match(said, new RegExp(`:${lines.length + 1}: the entry's MAC does not match`));
  const run = await user.run(["plan", "run", file, "--approved-hash", token, "--json"]);
  assert.equal(run.code, 1, run.stderr);
  const out = JSON.parse(run.stdout);
  assert.equal(out.status, "audit_failed");
  assert.ok(
    out.errors.concat(out.error ?? []).some((e: string) => e.includes(said)),
    `${JSON.stringify(out)}\nexpected to include: ${said}`,
  );
  assert.deepEqual(user.writes, []);
});
