/**
 * A lock file is a regular file or nothing: a FIFO or a symbolic link in
 * its place is refused in one line before it is opened (the open of a FIFO
 * would wait for ever; a link would create a file elsewhere).
 *
 * @module
 */
import assert from "node:assert/strict";
import { withLockFile } from "../../src/util/lock_file.ts";
import { tempDir } from "../support/temp.ts";

Deno.test("a FIFO or a symbolic link in a lock file's place is refused, and nothing is created elsewhere", async () => {
  await using tmp = await tempDir();
  new Deno.Command("mkfifo", { args: [`${tmp.path}/fifo.lock`] }).outputSync();
  await Deno.symlink(`${tmp.path}/elsewhere`, `${tmp.path}/link.lock`);
  for (
    const [name, kind] of [["fifo.lock", "a FIFO \\(named pipe\\)"], [
      "link.lock",
      "a symbolic link",
    ]]
  ) {
    await assert.rejects(
      () => withLockFile(`${tmp.path}/${name}`, () => Promise.resolve()),
      new RegExp(
        `${name}: is ${kind}, not a regular file; remove it \\(the program makes a new lock file\\)$`,
      ),
    );
  }
  await assert.rejects(() => Deno.lstat(`${tmp.path}/elsewhere`), Deno.errors.NotFound);
});
