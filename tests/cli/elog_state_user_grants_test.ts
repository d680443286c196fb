/**
 * Posting a logbook draft when a process was killed at a step of an earlier
 * post, or the state directory was damaged, as an operator's scripts run
 * the program (through the launcher, with the config's grants) on the fake
 * EPICS facility: the entry is in Olog once, the audit records it once, and
 * each damage is said in one line.
 *
 * @module
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";
import { auditEntries } from "../support/audit_entries.ts";
import { OlogLogbook } from "../../src/adapters/epics/olog_post.ts";

const LIMITS = `[limits."SR:COR:H01:SETPT"]
min = -2
max = 2
max_step = 0.5
tolerance = 0.001
`;

const CREDENTIALS = { OLOG_USER: "olog-user", OLOG_PASSWORD: "olog-secret" };

const PLAN = {
  description: "Trim H01",
  actions: [{ type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "center the orbit" }],
};

async function setup(): Promise<UserSetup> {
  return await UserSetup.start({
    limits: LIMITS,
    epicsConfig: { username_env: "OLOG_USER", password_env: "OLOG_PASSWORD" },
  });
}

/** Runs the plan, keeping its draft (no --elog, no terminal); the draft's id and path. */
async function keptDraft(user: UserSetup): Promise<{ id: string; path: string }> {
  const file = await user.plan(PLAN);
  const token = await user.token(file);
  const ran = await user.run(["plan", "run", file, "--approved-hash", token, "--json"], {
    env: CREDENTIALS,
  });
  assert.equal(ran.code, 0, ran.stderr);
  const out = JSON.parse(ran.stdout);
  assert.equal(out.elog.status, "pending");
  return { id: out.elog.draft.id, path: out.elog.draft.path };
}

/** A client of the fake facility's Olog, as another process of the program would post. */
function ologClient(user: UserSetup): OlogLogbook {
  return new OlogLogbook({
    base: user.epics.config().match(/olog_url = "([^"]+)"/)?.[1] as string,
    authorization: `Basic ${btoa("olog-user:olog-secret")}`,
    timeoutMs: 30_000,
    maxBytes: 1 << 20,
  });
}

/** Posts draft file `path` to the fake Olog, as a process that was then killed did; the entry id. */
async function postBehind(user: UserSetup, path: string): Promise<string> {
  const draft = JSON.parse(await Deno.readTextFile(path));
  const entry = await ologClient(user).post({
    draftId: draft.id,
    title: draft.title,
    body: draft.body,
    level: draft.level,
    logbooks: draft.logbooks,
    tags: draft.tags,
    devices: draft.devices,
    author: draft.author,
    attachments: [],
  });
  return entry.id;
}

const elogRecords = async (user: UserSetup) =>
  (await auditEntries(user.stateDir)).filter((e) => String(e.decision).startsWith("elog_"));

Deno.test("killed after Olog took the entry and the draft was marked posted, before the audit: the next post records it once, sending nothing", async () => {
  await using user = await setup();
  const { id, path } = await keptDraft(user);
  // What the killed process left: the entry in Olog, the draft saved as posted, no audit record.
  const entry = { id: await postBehind(user, path) };
  const draft = JSON.parse(await Deno.readTextFile(path));
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      ...draft,
      status: "posted",
      attempts: 1,
      entry: { id: entry.id, where: ologClient(user).where, posted_at: new Date().toISOString() },
    }),
  );
  assert.deepEqual(await elogRecords(user), []);

  const after = await user.run(["elog", "post", id], { env: CREDENTIALS });
  assert.equal(after.code, 0, after.stderr);
  assert.match(after.stdout, /already in Olog at .* as entry \d+ \(nothing was sent again\)/);
  const again = await user.run(["elog", "post", id], { env: CREDENTIALS });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(user.epics.ologService.received.length, 1, "sent once, by the killed process");
  const records = await elogRecords(user);
  assert.deepEqual(records.map((e) => [e.decision, e.results.draft, e.results.entry]), [
    ["elog_posted", id, entry.id],
  ]);
});

Deno.test("killed after the audit recorded the post, before the draft said so: the next post adds no second record", async () => {
  await using user = await setup();
  const { id, path } = await keptDraft(user);
  const posted = await user.run(["elog", "post", id], { env: CREDENTIALS });
  assert.equal(posted.code, 0, posted.stderr);
  // What the killed process left: the audit record written, the draft not yet marked audited.
  const { audited: _, ...draft } = JSON.parse(await Deno.readTextFile(path));
  await Deno.writeTextFile(path, JSON.stringify(draft));
  const again = await user.run(["elog", "post", id], { env: CREDENTIALS });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /already in Olog at .* as entry \d+ \(nothing was sent again\)/);
  assert.equal((await elogRecords(user)).length, 1);
  assert.equal(JSON.parse(await Deno.readTextFile(path)).audited, true);

  // A draft skipped twice is recorded skipped once.
  const other = await keptDraft(user);
  for (let i = 0; i < 2; i++) {
    const skipped = await user.run(["elog", "skip", other.id]);
    assert.equal(skipped.code, 0, skipped.stderr);
  }
  assert.deepEqual((await elogRecords(user)).map((e) => [e.decision, e.results.draft]), [
    ["elog_posted", id],
    ["elog_skipped", other.id],
  ]);
  assert.equal(user.epics.ologService.received.length, 1);
});

Deno.test("an Olog whose search answers with an entry id that is no id (escapes, a megabyte): the draft stays whole and is not marked posted", async () => {
  await using user = await setup();
  const { id, path } = await keptDraft(user);
  // A post whose reply was lost: the next post asks Olog first.
  const draft = JSON.parse(await Deno.readTextFile(path));
  await Deno.writeTextFile(path, JSON.stringify({ ...draft, status: "posting", attempts: 1 }));
  const hit = (entryId: string) => ({
    id: entryId,
    properties: [{ name: "AccelAgent", attributes: [{ name: "draft", value: id }] }],
  });
  for (const bad of ["7\x1b]0;owned\x07", `8${"9".repeat(1_000_000)}x`, "-3"]) {
    user.epics.olog.faults.respond = (url) =>
      url.pathname === "/Olog/logs/search"
        ? Response.json({ hitCount: 1, logs: [hit(bad)] })
        : undefined;
    const post = await user.run(["elog", "post", id], { env: CREDENTIALS });
    assert.equal(post.code, 1, post.stderr);
    assert.equal(post.stdout.trim().split("\n").length, 1, post.stdout);
    assert.match(
      post.stdout,
      /not posted: cannot check whether an earlier post reached Olog at .*: .*an entry id that is not a number/,
    );
    assert.ok(!post.stdout.includes("\x1b"), "no raw escape reaches the terminal");
    const listed = await user.run(["elog", "list", "--json"]);
    const [kept] = JSON.parse(listed.stdout).drafts;
    assert.equal(kept.status, "posting", `${JSON.stringify(bad).slice(0, 20)}: ${listed.stdout}`);
    assert.equal(kept.entry, null);
  }
  assert.equal(user.epics.ologService.received.length, 0, "nothing sent while Olog may hold it");
  delete user.epics.olog.faults.respond;
});

Deno.test("a draft whose post may have reached Olog is not skipped while Olog cannot be asked; once it answers, the skip says it is posted", async () => {
  await using user = await setup();
  const { id, path } = await keptDraft(user);
  // A post whose reply was lost: Olog holds the entry, the draft says a post was started.
  const entryId = await postBehind(user, path);
  const draft = JSON.parse(await Deno.readTextFile(path));
  await Deno.writeTextFile(path, JSON.stringify({ ...draft, status: "posting", attempts: 1 }));
  user.epics.olog.faults.respond = (url) =>
    url.pathname === "/Olog/logs/search" ? new Response("busy", { status: 503 }) : undefined;
  const skip = await user.run(["elog", "skip", id]);
  assert.equal(skip.code, 1, skip.stdout);
  assert.equal(skip.stderr.trim().split("\n").length, 1, skip.stderr);
  assert.match(
    skip.stderr,
    /cannot check whether an earlier post of draft [0-9a-f-]{36} reached Olog at .* \(.*HTTP 503.*\); it is left as it is/,
  );
  assert.deepEqual(await elogRecords(user), [], "not recorded as skipped");
  assert.equal(JSON.parse(await Deno.readTextFile(path)).status, "posting");

  delete user.epics.olog.faults.respond;
  const again = await user.run(["elog", "skip", id]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(
    again.stdout,
    new RegExp(`is in the logbook already as entry ${entryId}; it was not skipped`),
  );
  assert.deepEqual((await elogRecords(user)).map((e) => [e.decision, e.results.entry]), [
    ["elog_posted", entryId],
  ]);
  assert.equal(user.epics.ologService.received.length, 1);
});

Deno.test("a lock file swapped for a FIFO (the draft's, the local logbook's) is named in one line; nothing waits on it", async () => {
  await using user = await setup();
  const { id } = await keptDraft(user);
  const lock = `${user.stateDir}/elog/drafts/${id}.lock`;
  await Deno.remove(lock).catch(() => {});
  new Deno.Command("mkfifo", { args: [lock] }).outputSync();
  const post = await user.run(["elog", "post", id], { env: CREDENTIALS, ceilingMs: 90_000 });
  assert.notEqual(post.code, 0);
  assert.equal(post.stderr.trim().split("\n").length, 1, post.stderr);
  assert.match(post.stderr, /\.lock: is a FIFO \(named pipe\), not a regular file; remove it/);
  assert.equal(user.epics.ologService.received.length, 0);

  // A facility without Olog posts to a local logbook file, locked the same way.
  await using local = await UserSetup.start({ limits: LIMITS, epicsConfig: { olog_url: "" } });
  const kept = await keptDraft(local);
  await Deno.mkdir(`${local.stateDir}/elog`, { recursive: true });
  new Deno.Command("mkfifo", { args: [`${local.stateDir}/elog/logbook.jsonl.lock`] }).outputSync();
  const refused = await local.run(["elog", "post", kept.id], { ceilingMs: 90_000 });
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(
    refused.stdout,
    /not posted: cannot write the local logbook .*logbook\.jsonl: .*\.lock: is a FIFO \(named pipe\), not a regular file; remove it.*; the draft is kept/,
  );
  assert.equal(JSON.parse(await Deno.readTextFile(kept.path)).status, "pending");
});

Deno.test("a draft edited to say it was posted is not believed: Olog is asked, nothing is recorded in the audit, nothing is sent", async () => {
  await using user = await setup();
  const { id, path } = await keptDraft(user);
  const draft = JSON.parse(await Deno.readTextFile(path));
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      ...draft,
      status: "posted",
      entry: { id: "999", where: ologClient(user).where, posted_at: new Date().toISOString() },
    }),
  );
  const post = await user.run(["elog", "post", id], { env: CREDENTIALS });
  assert.equal(post.code, 1, post.stdout);
  assert.equal(post.stdout.trim().split("\n").length, 1, post.stdout);
  assert.match(
    post.stdout,
    /not posted: the draft says it was posted to Olog at .* as entry 999, but Olog at .* holds no entry of it; nothing was sent/,
  );
  assert.deepEqual(await elogRecords(user), []);
  assert.equal(user.epics.ologService.received.length, 0);

  // Olog down: the draft's record is said as the draft's, not as Olog's.
  const real = await keptDraft(user);
  const posted = await user.run(["elog", "post", real.id], { env: CREDENTIALS });
  assert.equal(posted.code, 0, posted.stdout);
  user.epics.olog.faults.fail500 = true;
  const down = await user.run(["elog", "post", real.id], { env: CREDENTIALS });
  assert.equal(down.code, 0, down.stdout);
  assert.match(
    down.stdout,
    /posted to Olog at .* as entry \d+, as the draft records it \(the logbook could not be asked: .*HTTP 500.*\); nothing was sent again/,
  );
  user.epics.olog.faults.fail500 = false;
  assert.equal(user.epics.ologService.received.length, 1);
});

Deno.test("a local logbook with a damaged line gives the next entry an id of its own, not one an entry holds", async () => {
  await using user = await UserSetup.start({ limits: LIMITS, epicsConfig: { olog_url: "" } });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const { id } = await keptDraft(user);
    const post = await user.run(["elog", "post", id]);
    assert.equal(post.code, 0, post.stdout);
    ids.push(/as entry (\S+)/.exec(post.stdout)?.[1] ?? "");
  }
  assert.deepEqual(ids, ["local-1", "local-2", "local-3"]);
  const book = `${user.stateDir}/elog/logbook.jsonl`;
  const lines = (await Deno.readTextFile(book)).split("\n");
  lines[1] = `${lines[1]?.slice(0, 40)}…`; // an edit that broke the middle line
  await Deno.writeTextFile(book, lines.join("\n"));
  const { id } = await keptDraft(user);
  const post = await user.run(["elog", "post", id]);
  assert.equal(post.code, 0, post.stdout);
  const fourth = /as entry (\S+)/.exec(post.stdout)?.[1];
  assert.ok(fourth && !ids.includes(fourth), `${fourth} is an id the logbook holds`);
});

Deno.test("a draft file whose id is already among the drafts, with other content, is refused in one line; the copy as it is posts", async () => {
  await using user = await setup();
  const { id, path } = await keptDraft(user);
  const copy = `${user.dir}/copy.json`;
  const draft = JSON.parse(await Deno.readTextFile(path));
  await Deno.writeTextFile(
    copy,
    JSON.stringify({ ...draft, title: "Plan completed: Trim H01 (mine)" }),
  );
  const post = await user.run(["elog", "post", copy], { env: CREDENTIALS });
  assert.equal(post.code, 2, post.stdout);
  assert.equal(post.stderr.trim().split("\n").length, 1, post.stderr);
  assert.match(
    post.stderr,
    new RegExp(
      `copy\\.json holds draft ${id}, which is among the drafts already with other content; post that one by its id \\(accel-agent elog post ${id}\\) or remove one of them`,
    ),
  );
  assert.equal(user.epics.ologService.received.length, 0);
  await Deno.writeTextFile(copy, await Deno.readTextFile(path));
  const same = await user.run(["elog", "post", copy], { env: CREDENTIALS });
  assert.equal(same.code, 0, same.stdout);
  assert.equal(user.epics.ologService.received.length, 1);
});
