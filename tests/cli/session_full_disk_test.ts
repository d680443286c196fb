/** Session saves on a full disk, and torn last lines found on resume. */
import assert from "node:assert/strict";
import { Session } from "../../src/agent/session.ts";
import { SessionSaveError, SessionStore } from "../../src/app/session_store.ts";
import { FullDisk } from "../support/full_disk.ts";
import { tempDir } from "../support/temp.ts";

Deno.test("a save that hits a full disk leaves the session file as it was, and the unsaved messages are written by the next save", async () => {
  await using tmp = await tempDir();
  const disk = new FullDisk(Infinity);
  const store = new SessionStore(tmp.path, { fs: disk });
  const s = new Session("s1", 5);
  s.messages.push({ role: "user", content: "q1" });
  await store.save(s);
  const path = store.path("s1");
  const before = await Deno.readFile(path);
  disk.budget = disk.written + 20;
  s.messages.push({ role: "assistant", content: "a1 ".repeat(50) });
  await assert.rejects(
    () => store.save(s),
    (e: Error) =>
      e instanceof SessionSaveError && /No space left on device/.test(e.message) &&
      /saved again after the next message/.test(e.message),
  );
  assert.deepEqual(await Deno.readFile(path), before);
  assert.match(store.unsaved ?? "", /could not be saved/);
  // Space again: the next save writes the pending message with the new one.
  disk.budget = Infinity;
  s.messages.push({ role: "user", content: "q2" });
  await store.save(s);
  assert.equal(store.unsaved, undefined);
  const back = await new SessionStore(tmp.path).load("s1");
  assert.deepEqual(back.session.messages.map((m) => m.role), ["user", "assistant", "user"]);
});

Deno.test("a first save that fails leaves no file without its meta record behind", async () => {
  await using tmp = await tempDir();
  const disk = new FullDisk(0);
  const store = new SessionStore(tmp.path, { fs: disk });
  const s = new Session("s2", 5);
  s.messages.push({ role: "user", content: "q1" });
  await assert.rejects(() => store.save(s), SessionSaveError);
  disk.budget = Infinity;
  await store.save(s);
  const back = await new SessionStore(tmp.path).load("s2");
  assert.deepEqual(back.session.messages, [{ role: "user", content: "q1" }]);
});

Deno.test("a torn last line is cut off and reported on resume, and the session resumes again after more is appended", async () => {
  await using tmp = await tempDir();
  const store = new SessionStore(tmp.path);
  const s = new Session("s3", 5);
  s.messages.push({ role: "user", content: "q1" });
  await store.save(s);
  const path = store.path("s3");
  const torn = '{"t":"message","m":{"role":"assis';
  await Deno.writeTextFile(path, torn, { append: true });
  const reports: string[] = [];
  const again = new SessionStore(tmp.path, { onRecovered: (m) => reports.push(m) });
  const back = await again.load("s3");
  assert.equal(reports.length, 1);
  assert.match(
    reports[0] as string,
    /s3\.jsonl: its last line was torn .*cut off and kept in .*s3\.jsonl\.torn/,
  );
  assert.equal(await Deno.readTextFile(`${path}.torn`), `${torn}\n`);
  back.session.messages.push({ role: "assistant", content: "a1" });
  await again.save(back.session);
  // Never fused: every line is a record, and it resumes again.
  for (const line of (await Deno.readTextFile(path)).split("\n").filter(Boolean)) JSON.parse(line);
  const third = await new SessionStore(tmp.path).load("s3");
  assert.deepEqual(third.session.messages.map((m) => m.content), ["q1", "a1"]);
});

Deno.test("a torn last line is cut off before a process that did not load the session appends to it", async () => {
  await using tmp = await tempDir();
  const s = new Session("s4", 5);
  s.messages.push({ role: "user", content: "q1" });
  await new SessionStore(tmp.path).save(s);
  await Deno.writeTextFile(`${tmp.path}/s4.jsonl`, '{"t":"usa', { append: true });
  const reports: string[] = [];
  const other = new SessionStore(tmp.path, { onRecovered: (m) => reports.push(m) });
  await other.saveRun("s4", {
    id: "agent-1",
    agent: "device_search",
    parentId: "operator",
    level: 2,
    task: "t",
    background: true,
    status: "cancelled",
    model: "main",
    tools: [],
    turns: 0,
    tokens: 0,
    result: null,
    startedAt: 1,
    endedAt: 2,
  });
  assert.equal(reports.length, 1);
  const back = await new SessionStore(tmp.path).load("s4");
  assert.deepEqual(back.runs.map((r) => r.id), ["agent-1"]);
});
