/**
 * The REPL's history file: private (0600 in a 0700 directory), and a file
 * that cannot be used — a FIFO, a device, one too large, a directory that
 * cannot be written — costs one line and the history of this session, never
 * the session itself (and never a wait on the FIFO).
 */
import assert from "node:assert/strict";
import { History } from "../../../src/cli/repl/history.ts";
import { tempDir } from "../../support/temp.ts";
import { canMount, fill, mountTmpfs } from "../../support/full_disk.ts";

Deno.test("history is written 0600 in a directory made 0700, and read back newest first", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/state/history`;
  const h = new History(path, 10);
  assert.equal(await h.load(), undefined);
  assert.equal(await h.add("first"), undefined);
  assert.equal(await h.add("second"), undefined);
  assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
  assert.equal((await Deno.stat(`${dir.path}/state`)).mode! & 0o777, 0o700);
  const again = new History(path, 10);
  assert.equal(await again.load(), undefined);
  assert.deepEqual(again.entries, ["second", "first"]);
});

Deno.test("a FIFO, /dev/zero or an oversized file as the history is one line, and nothing is written to it", async () => {
  await using dir = await tempDir();
  const fifo = `${dir.path}/fifo`;
  assert.ok((await new Deno.Command("mkfifo", { args: [fifo] }).output()).success);
  const zero = `${dir.path}/zero`;
  await Deno.symlink("/dev/zero", zero);
  const big = `${dir.path}/big`;
  using f = await Deno.open(big, { create: true, write: true });
  await f.truncate(1 << 30);
  for (
    const [path, what] of [
      [fifo, "is a FIFO \\(named pipe\\)"],
      [zero, "is a character device"],
      [big, "larger than 16 MiB"],
    ]
  ) {
    const h = new History(path as string, 10);
    const said = await h.load();
    assert.match(
      said ?? "",
      new RegExp(`^\\S+: ${what}.*; move it aside; this session's history is not saved$`),
    );
    // An append to the FIFO would wait for a reader for ever: nothing is appended.
    assert.equal(await h.add("a question"), undefined);
    assert.deepEqual(h.entries, ["a question"]);
  }
  assert.equal((await Deno.stat(big)).size, 1 << 30);
});

Deno.test({
  name:
    "a history that cannot be written (a full disk) says so once and keeps the entries in memory",
  ignore: !(await canMount()),
  fn: async () => {
    await using dir = await tempDir();
    const disk = `${dir.path}/disk`;
    const unmount = await mountTmpfs(disk, "64k");
    try {
      await fill(disk);
      const h = new History(`${disk}/history`, 10);
      assert.equal(await h.load(), undefined);
      assert.match(
        await h.add("one") ?? "",
        /history could not be written \(No space left on device.*kept in memory for this session$/,
      );
      assert.equal(await h.add("two"), undefined, "said once");
      assert.deepEqual(h.entries, ["two", "one"]);
    } finally {
      await unmount();
    }
  },
});
