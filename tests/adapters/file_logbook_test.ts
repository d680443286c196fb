/**
 * The file logbooks (the simulator's own, and a facility's without Olog):
 * one entry per draft, even when posted twice or from several posts at
 * once; a torn last line from a killed append is cut off and kept aside;
 * private files; attachments copied under safe names.
 *
 * @module
 */
import assert from "node:assert/strict";
import { FileLogbook } from "../../src/adapters/file_logbook.ts";
import type { LogbookEntry } from "../../src/adapters/logbook.ts";
import { tempDir } from "../support/temp.ts";

function entry(over: Partial<LogbookEntry> = {}): LogbookEntry {
  return {
    draftId: crypto.randomUUID(),
    title: "Plan completed",
    body: "text",
    level: "Info",
    logbooks: ["Operations"],
    tags: [],
    devices: ["LINAC:COR:H01:SETPT"],
    author: "tester",
    attachments: [],
    ...over,
  };
}

Deno.test("one entry per draft: a second post of a draft, and ten posts at once, each get one id", async () => {
  await using tmp = await tempDir();
  const book = new FileLogbook(`${tmp.path}/elog/logbook.jsonl`, "file");
  const e = entry();
  const first = await book.post(e);
  assert.deepEqual(await book.post(e), first);
  assert.equal(await book.find(e.draftId), first.id);
  const many = await Promise.all(Array.from({ length: 10 }, () => book.post(entry())));
  const ids = [first.id, ...many.map((m) => m.id)];
  assert.equal(new Set(ids).size, 11);
  assert.equal((await book.entries()).length, 11);
  assert.equal((await Deno.stat(book.path)).mode! & 0o777, 0o600);
  assert.equal((await Deno.stat(`${tmp.path}/elog`)).mode! & 0o777, 0o700);
});

Deno.test("a torn last line (an append cut short) is set aside, and the next entry is whole", async () => {
  await using tmp = await tempDir();
  const book = new FileLogbook(`${tmp.path}/logbook.jsonl`, "simulator");
  await book.post(entry({ title: "first" }));
  await Deno.writeTextFile(book.path, '{"id":"sim-2","dra', { append: true });
  await book.post(entry({ title: "second" }));
  assert.deepEqual((await book.entries()).map((e) => e.title), ["first", "second"]);
  assert.match(await Deno.readTextFile(`${book.path}.torn`), /\{"id":"sim-2","dra/);
  await Deno.writeTextFile(book.path, "not json\n", { append: true });
  assert.deepEqual((await book.entries()).map((e) => e.title), ["first", "second"]);
});

Deno.test("attachments are copied beside the logbook under names without a directory", async () => {
  await using tmp = await tempDir();
  const book = new FileLogbook(`${tmp.path}/elog/logbook.jsonl`, "file");
  const { id } = await book.post(entry({
    attachments: [{
      name: "../../escape.csv",
      contentType: "text/csv",
      bytes: new TextEncoder().encode("a,b\n"),
    }],
  }));
  const dir = `${tmp.path}/elog/attachments/${id}`;
  const names = [...Deno.readDirSync(dir)].map((e) => e.name);
  assert.equal(names.length, 1);
  assert.ok(!names[0]?.includes("/") && !names[0]?.startsWith("."), names[0]);
  assert.equal(await Deno.readTextFile(`${dir}/${names[0]}`), "a,b\n");
});
