/**
 * The drafts of one process: made from a finished run and saved at once,
 * the question and the model's summary added when the turn ends (the text
 * made again unless the operator edited it), an edit past the cap refused,
 * and a draft that could not be saved never posted.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ApproveAll, assertExecuted, fixture, valueOf } from "../plan/fixture.ts";
import type { FinishedRun } from "../../src/plan/service.ts";
import { ElogService } from "../../src/elog/service.ts";
import { DraftStore } from "../../src/elog/store.ts";
import { FileLogbook } from "../../src/adapters/file_logbook.ts";
import { AuditLog } from "../../src/safety/audit.ts";
import { tempDir } from "../support/temp.ts";

async function finishedRun(): Promise<{ run: FinishedRun; audit: string } & AsyncDisposable> {
  const runs: FinishedRun[] = [];
  const f = await fixture({ onFinished: (r) => Promise.resolve(void runs.push(r)) });
  const h1 = await valueOf(f.cs, "LINAC:COR:H01:SETPT") as number;
  assertExecuted(
    await f.service.propose(
      {
        description: "trim",
        actions: [{ type: "write", device: "LINAC:COR:H01:SETPT", value: h1 + 0.1, reason: "x" }],
      },
      new ApproveAll(),
      new AbortController().signal,
    ),
    "completed",
  );
  return {
    run: runs[0] as FinishedRun,
    audit: `${f.dir}/audit`,
    [Symbol.asyncDispose]: async () => await f[Symbol.asyncDispose](),
  };
}

/** The drafts' service under `dir`, over the audit log in `audit` (the run's). */
function service(dir: string, audit = `${dir}/audit`, maxChars = 4000) {
  return new ElogService({
    store: new DraftStore(`${dir}/drafts`),
    logbook: new FileLogbook(`${dir}/logbook.jsonl`, "file"),
    audit: new AuditLog(audit),
    identity: { operator: "tester", host: "h", configHash: "c" },
    attachmentRoots: [`${dir}/scans`],
    attachmentMaxBytes: 1 << 20,
    now: Date.now,
  }, {
    logbooks: ["Operations"],
    tags: [],
    level: "Info",
    problemLevel: "Problem",
    maxChars,
    summaryChars: 200,
    scansDir: `${dir}/scans`,
  });
}

Deno.test("a draft is saved when the run ends; the turn's notes are added; the operator's edit is kept", async () => {
  await using tmp = await tempDir();
  await using done = await finishedRun();
  const elog = service(tmp.path, done.audit);
  await elog.planFinished(done.run);
  const [id] = elog.takeNew();
  assert.ok(id);
  assert.deepEqual(elog.takeNew(), [], "each draft is handed over once");
  const saved = JSON.parse(await Deno.readTextFile(elog.path(id)));
  assert.equal(saved.status, "pending");
  assert.deepEqual(saved.audit_ids, done.run.auditIds);
  const noted = await elog.annotate(id, { question: "trim H01?", modelSummary: "y".repeat(5000) });
  assert.match(noted.body, /\*\*Question:\*\* trim H01\?/);
  assert.match(noted.body, /… \(4800 more characters left out\)/);
  assert.equal(noted.model_summary?.length, 200 + "… (4800 more characters left out)".length);
  await assert.rejects(
    () => elog.edit(id, "z".repeat(4001)),
    /more than \[elog\] max_chars \(4000\); the draft is left as it was/,
  );
  await assert.rejects(() => elog.edit(id, "   \n"), /the edited text is empty/);
  assert.equal((await elog.load(id)).body, noted.body);
  // The devices table is the audit's: an edit without it is refused, one around it is kept.
  await assert.rejects(
    () => elog.edit(id, "My own words.\n"),
    /the devices table differs from the audit's record of run .* \(the line "\| Device \|.*"\): edit only the text around it, or skip the draft; the draft is left as it was/,
  );
  await elog.edit(id, `${noted.body}My own words.\n`);
  const again = await elog.annotate(id, { question: "other" });
  assert.equal(again.body, `${noted.body}My own words.\n`, "an edited text is not made again");
});

Deno.test("a draft that cannot be saved is said once and never posted (a lost reply could post it twice)", async () => {
  await using tmp = await tempDir();
  await using done = await finishedRun();
  await Deno.writeTextFile(`${tmp.path}/drafts`, "a file where the directory should be");
  const elog = service(tmp.path);
  await elog.planFinished(done.run);
  const [id] = elog.takeNew();
  const problems = elog.takeProblems();
  assert.equal(problems.length, 1);
  assert.match(
    problems[0] ?? "",
    /cannot save the logbook draft .*; the draft is kept in this session only/,
  );
  assert.deepEqual(elog.takeProblems(), []);
  const r = await elog.post(id as string, "operator: test");
  assert.equal(r.status, "kept");
  assert.match(
    r.status === "kept" ? r.error : "",
    /it is not posted, so that it can never be posted twice/,
  );
  await assert.rejects(() => Deno.stat(`${tmp.path}/logbook.jsonl`));
});

Deno.test("an edit is not taken while a post of the draft may have reached the logbook, nor once it is posted", async () => {
  await using tmp = await tempDir();
  await using done = await finishedRun();
  const elog = service(tmp.path, done.audit);
  await elog.planFinished(done.run);
  const [id] = elog.takeNew();
  const d = await elog.load(id as string);
  const text = `${d.body}A note.\n`;
  // A post whose reply was lost: the entry may be in the logbook with the text as it was.
  await elog.deps.store.save({ ...d, status: "posting", attempts: 1 });
  await assert.rejects(
    () => elog.edit(id as string, text),
    /a post of draft .* may have reached .*; post it again to find out before changing it; the draft is left as it was/,
  );
  assert.equal((await elog.load(id as string)).body, d.body);
  await elog.deps.store.save({ ...d, status: "pending", attempts: 1 });
  const r = await elog.post(id as string, "operator: test");
  assert.equal(r.status, "posted");
  await assert.rejects(() => elog.edit(id as string, text), /is posted already; it cannot change/);
});
