/**
 * A draft is posted exactly once: retried after a lost reply or a killed
 * process, posted from two processes at once, refused and then accepted —
 * the logbook holds one entry, and the audit says which. Damaged draft
 * files are named in one line and left as they are.
 *
 * @module
 */
import assert from "node:assert/strict";
import { FileLogbook } from "../../src/adapters/file_logbook.ts";
import { OlogLogbook } from "../../src/adapters/epics/olog_post.ts";
import { type Logbook, type LogbookEntry, UncertainPostError } from "../../src/adapters/logbook.ts";
import type { Draft } from "../../src/elog/draft.ts";
import { type PostDeps, postDraft, skipDraft } from "../../src/elog/post.ts";
import { DraftError, DraftStore } from "../../src/elog/store.ts";
import { AuditLog } from "../../src/safety/audit.ts";
import { FakeHttp } from "../support/facility/fake_http.ts";
import { FakeOlog } from "../support/facility/fake_olog.ts";
import { tempDir } from "../support/temp.ts";
import { auditEntries } from "../support/audit_entries.ts";

/**
 * A draft as the program saves one. A shift summary's: it names no plan run,
 * so posting it needs no audit of a run (`tests/cli/elog_facts_user_grants_test.ts`
 * posts plan drafts against the audit).
 */
function draft(over: Partial<Draft> = {}): Draft {
  return {
    version: 1,
    id: crypto.randomUUID(),
    kind: "shift",
    created_at: "2026-11-20T12:00:00.000Z",
    status: "pending",
    title: "Shift summary",
    body: "**Logbook:** 4 entries\n",
    level: "Info",
    logbooks: ["Operations"],
    tags: [],
    devices: [],
    attachments: [],
    author: "tester",
    audit_ids: [],
    edited: false,
    facts: null,
    attempts: 0,
    ...over,
  };
}

function setup(dir: string, logbook?: Logbook): PostDeps & { file: FileLogbook } {
  const file = new FileLogbook(`${dir}/elog/logbook.jsonl`, "file");
  return {
    file,
    store: new DraftStore(`${dir}/elog/drafts`),
    logbook: logbook ?? file,
    audit: new AuditLog(`${dir}/audit`),
    identity: { operator: "tester", host: "h", configHash: "c" },
    attachmentRoots: [`${dir}/scans`],
    attachmentMaxBytes: 1 << 20,
    now: Date.now,
  };
}

/** The file logbook, but the reply of its first `lose` posts is lost after the entry is written. */
class LosingReplies implements Logbook {
  readonly kind = "file";
  constructor(readonly inner: FileLogbook, public lose: number) {}
  get where() {
    return this.inner.where;
  }
  find(id: string) {
    return this.inner.find(id);
  }
  async post(e: LogbookEntry) {
    const r = await this.inner.post(e);
    if (this.lose-- > 0) throw new UncertainPostError("the reply was lost");
    return r;
  }
}

async function lines(path: string): Promise<unknown[]> {
  return (await Deno.readTextFile(path)).split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

Deno.test("a posted draft is not sent again, and the audit records the entry's id", async () => {
  await using tmp = await tempDir();
  const deps = setup(tmp.path);
  const d = draft();
  await deps.store.save(d);
  const first = await postDraft(deps, d.id, "operator: test");
  assert.equal(first.status, "posted");
  const again = await postDraft(deps, d.id, "operator: test");
  assert.ok(again.status === "posted" && again.already);
  assert.equal((await lines(deps.file.path)).length, 1);
  const audit = (await auditEntries(tmp.path)).filter((e) => e.decision === "elog_posted");
  assert.equal(audit.length, 1);
  assert.equal(audit[0]?.results.entry, first.status === "posted" ? first.entryId : "");
  assert.equal(audit[0]?.results.draft, d.id);
  assert.equal(audit[0]?.run, undefined, "a logbook record closes no plan run");
});

Deno.test("a reply lost after the logbook took the entry: the next post finds it and sends nothing", async () => {
  await using tmp = await tempDir();
  const plain = setup(tmp.path);
  const losing = new LosingReplies(plain.file, 1);
  const deps = { ...plain, logbook: losing };
  const d = draft();
  await deps.store.save(d);
  const lost = await postDraft(deps, d.id, "operator: test");
  assert.equal(lost.status, "kept");
  assert.equal(lost.draft.status, "posting", "it may have reached the logbook");
  // The next post goes to a logbook that would take a second copy if asked (no dedupe in Olog).
  const posts: string[] = [];
  const counting: Logbook = {
    kind: "file",
    where: plain.file.where,
    find: (id) => plain.file.find(id),
    post: (e) => {
      posts.push(e.draftId);
      return plain.file.post(e);
    },
  };
  const found = await postDraft({ ...plain, logbook: counting }, d.id, "operator: test");
  assert.ok(found.status === "posted" && found.already);
  assert.deepEqual(posts, []);
  assert.equal((await lines(plain.file.path)).length, 1);
});

Deno.test("a draft left mid-post by a killed process, whose post never arrived, is sent once", async () => {
  await using tmp = await tempDir();
  const deps = setup(tmp.path);
  const d = draft({ status: "posting", attempts: 1 });
  await deps.store.save(d);
  const r = await postDraft(deps, d.id, "operator: test");
  assert.ok(r.status === "posted" && !r.already);
  assert.equal(r.draft.attempts, 2);
  assert.equal((await lines(deps.file.path)).length, 1);
});

Deno.test("two posts of one draft at once make one Olog entry", async () => {
  await using tmp = await tempDir();
  const olog = new FakeOlog([]);
  await using http = new FakeHttp((url, req) => olog.handle(url, req));
  const logbook = new OlogLogbook({
    base: `${http.origin}/Olog`,
    authorization: `Basic ${btoa(`${olog.user}:${olog.password}`)}`,
    timeoutMs: 30_000,
    maxBytes: 1 << 20,
  });
  const deps = setup(tmp.path, logbook);
  const d = draft();
  await deps.store.save(d);
  const [a, b] = await Promise.all([
    postDraft(deps, d.id, "operator: one"),
    postDraft(deps, d.id, "operator: two"),
  ]);
  assert.equal(olog.received.length, 1);
  assert.equal(olog.created.length, 1);
  assert.deepEqual([a.status, b.status], ["posted", "posted"]);
  assert.equal([a, b].filter((r) => r.status === "posted" && r.already).length, 1);
});

Deno.test("a refused post keeps the draft with the reason; the next one, once fixed, goes through once", async () => {
  await using tmp = await tempDir();
  const olog = new FakeOlog([]);
  await using http = new FakeHttp((url, req) => olog.handle(url, req));
  const logbook = new OlogLogbook({
    base: `${http.origin}/Olog`,
    authorization: `Basic ${btoa(`${olog.user}:${olog.password}`)}`,
    timeoutMs: 30_000,
    maxBytes: 1 << 20,
  });
  const deps = setup(tmp.path, logbook);
  const d = draft({ logbooks: ["Shift"] });
  await deps.store.save(d);
  const refused = await postDraft(deps, d.id, "operator: test");
  assert.equal(refused.status, "kept");
  assert.match(
    refused.status === "kept" ? refused.error : "",
    /refused the entry \(HTTP 400: .*invalid logbook.*\); check that \[elog\] logbooks and tags exist in Olog/,
  );
  assert.equal((await deps.store.load(d.id)).status, "pending");
  olog.logbooks.push("Shift");
  const ok = await postDraft(deps, d.id, "operator: test");
  assert.ok(ok.status === "posted" && !ok.already);
  assert.equal(olog.created.length, 1);
});

Deno.test("a skipped draft is recorded in the audit and posts nothing; a posted one is not skipped", async () => {
  await using tmp = await tempDir();
  const deps = setup(tmp.path);
  const a = draft(), b = draft();
  await deps.store.save(a);
  await deps.store.save(b);
  const skipped = await skipDraft(deps, a.id, "operator: test");
  assert.equal(skipped.draft.status, "skipped");
  await postDraft(deps, b.id, "operator: test");
  const kept = await skipDraft(deps, b.id, "operator: test");
  assert.equal(kept.draft.status, "posted");
  assert.ok(kept.postedAs);
  const audit = await auditEntries(tmp.path);
  assert.deepEqual(audit.map((e) => [e.decision, e.results.draft]), [
    ["elog_skipped", a.id],
    ["elog_posted", b.id],
  ]);
  assert.equal((await lines(deps.file.path)).length, 1);
});

Deno.test("an audit that cannot record the post says so; the next post records it without posting again", async () => {
  await using tmp = await tempDir();
  const deps = setup(tmp.path);
  await Deno.writeTextFile(`${tmp.path}/audit`, "not a directory");
  const d = draft();
  await deps.store.save(d);
  const r = await postDraft(deps, d.id, "operator: test");
  assert.ok(r.status === "posted" && r.auditError);
  assert.match(r.auditError ?? "", /the audit log could not record it/);
  await Deno.remove(`${tmp.path}/audit`);
  const again = await postDraft(deps, d.id, "operator: test");
  assert.ok(again.status === "posted" && again.already && !again.auditError);
  assert.equal((await lines(deps.file.path)).length, 1);
  assert.equal((await auditEntries(tmp.path)).length, 1);
});

Deno.test("a damaged, foreign or enormous draft file is named in one line and left as it is", async () => {
  await using tmp = await tempDir();
  const store = new DraftStore(`${tmp.path}/drafts`);
  const d = draft();
  await store.save(d);
  const path = store.path(d.id);
  const cases: [string, string | Uint8Array, RegExp][] = [
    ["torn", (await Deno.readTextFile(path)).slice(0, 50), /not a logbook draft \(not JSON/],
    ["foreign", JSON.stringify({ ...d, status: "sent" }), /not a logbook draft \(status: /],
    ["huge", new Uint8Array(5 * 1024 * 1024).fill(32), /larger than 4 MiB: not a logbook draft/],
  ];
  for (const [what, content, message] of cases) {
    if (typeof content === "string") await Deno.writeTextFile(path, content);
    else await Deno.writeFile(path, content);
    const before = await Deno.readFile(path);
    await assert.rejects(() => store.load(d.id), (e: Error) => {
      assert.ok(e instanceof DraftError, what);
      assert.match(e.message, message, what);
      assert.equal(e.message.split("\n").length, 1, what);
      return true;
    });
    assert.deepEqual(await Deno.readFile(path), before, `${what}: left as it was`);
  }
  await assert.rejects(() => store.resolve("zzzz"), /not a draft id/);
  await assert.rejects(() => store.resolve("0000"), /no logbook draft 0000/);
});
