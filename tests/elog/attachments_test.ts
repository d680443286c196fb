/**
 * Attachments come from the scans and work directories only: a path out of
 * them, a symlink leading out, a `..` walk, a FIFO, a directory or a file
 * past the cap is left out with one line saying why, and never read.
 *
 * @module
 */
import assert from "node:assert/strict";
import { readAttachments } from "../../src/elog/attachments.ts";
import { tempDir } from "../support/temp.ts";

Deno.test("only regular files inside the scans and work directories are attached", async () => {
  await using tmp = await tempDir();
  const scans = `${tmp.path}/state/scans`, work = `${tmp.path}/work`;
  await Deno.mkdir(scans, { recursive: true });
  await Deno.mkdir(`${work}/plots`, { recursive: true });
  await Deno.writeTextFile(`${scans}/scan-1.csv`, "time,x\n");
  await Deno.writeTextFile(`${work}/plots/p.svg`, "<svg/>");
  await Deno.writeTextFile(`${tmp.path}/secret.key`, "key");
  await Deno.symlink(`${tmp.path}/secret.key`, `${scans}/innocent.csv`);
  await Deno.symlink(`${scans}/scan-1.csv`, `${work}/plots/link.csv`);
  await Deno.mkdir(`${scans}/dir`);
  new Deno.Command("mkfifo", { args: [`${scans}/fifo.csv`] }).outputSync();
  await Deno.writeFile(`${scans}/big.csv`, new Uint8Array(2048));
  const { files, refused } = await readAttachments(
    [
      `${scans}/scan-1.csv`,
      `${work}/plots/p.svg`,
      `${work}/plots/link.csv`,
      `${tmp.path}/secret.key`,
      `${scans}/innocent.csv`,
      `${scans}/../secret.key`,
      `${scans}/dir`,
      `${scans}/fifo.csv`,
      `${scans}/big.csv`,
      `${scans}/missing.csv`,
    ],
    [scans, work],
    1024,
  );
  assert.deepEqual(files.map((f) => [f.name, f.contentType, new TextDecoder().decode(f.bytes)]), [
    ["scan-1.csv", "text/csv", "time,x\n"],
    ["p.svg", "image/svg+xml", "<svg/>"],
    // A link that stays inside is the file it names.
    ["scan-1.csv", "text/csv", "time,x\n"],
  ]);
  const why = refused.map((r) => r.replace(tmp.path, "T"));
  assert.deepEqual(why.map((r) => r.split(": not attached ")[0]), [
    "T/secret.key",
    "T/state/scans/innocent.csv",
    "T/state/scans/../secret.key",
    "T/state/scans/dir",
    "T/state/scans/fifo.csv",
    "T/state/scans/big.csv",
    "T/state/scans/missing.csv",
  ]);
  assert.match(why[1] ?? "", /it is not in the scans or work directory/);
  assert.match(why[4] ?? "", /it is not a regular file/);
  assert.match(why[5] ?? "", /2048 bytes, more than \[elog\] attachment_max_bytes \(1024\)/);
});
