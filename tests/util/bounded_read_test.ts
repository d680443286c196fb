/**
 * The one file reader: a FIFO, a device, a socket, a directory and a file
 * past the cap are refused in one line naming the file, without waiting on
 * the FIFO and without reading the large file; a FIFO swapped in for the
 * file while it is read never hangs the reader.
 */
import assert from "node:assert/strict";
import {
  NotRegularFileError,
  openRegular,
  readRegularBytes,
  readRegularText,
  readRegularTextSync,
  TooLargeError,
} from "../../src/util/bounded_read.ts";
import { glanceRegularText } from "../../src/util/glance_read.ts";
import { tempDir } from "../support/temp.ts";
import { killAfter, ROOT } from "../support/run_agent.ts";

async function mkfifo(path: string): Promise<void> {
  assert.ok((await new Deno.Command("mkfifo", { args: [path] }).output()).success, "mkfifo");
}

/** A sparse file of `bytes` (no blocks written): a 1 GB file costs nothing to make. */
async function sparse(path: string, bytes: number): Promise<void> {
  using f = await Deno.open(path, { create: true, write: true });
  await f.truncate(bytes);
}

const oneLine = (e: unknown) => e instanceof Error && !e.message.includes("\n");

Deno.test("a FIFO, /dev/zero, a directory and a socket are refused in one line naming the file and the fix", async () => {
  await using dir = await tempDir();
  const fifo = `${dir.path}/fifo.toml`;
  await mkfifo(fifo);
  const socketPath = `${dir.path}/s.sock`;
  const listener = Deno.listen({ transport: "unix", path: socketPath });
  try {
    const cases: [string, RegExp][] = [
      [fifo, /fifo\.toml: is a FIFO \(named pipe\), not a regular file; fix it$/],
      ["/dev/zero", /^\/dev\/zero: is a character device, not a regular file; fix it$/],
      [dir.path, /: is a directory, not a regular file; fix it$/],
      [socketPath, /s\.sock: is a socket, not a regular file; fix it$/],
    ];
    for (const [path, re] of cases) {
      for (
        const read of [
          () => readRegularText(path, 1 << 20, { fix: "fix it" }),
          () => Promise.resolve().then(() => readRegularTextSync(path, 1 << 20, { fix: "fix it" })),
          () => glanceRegularText(path, 1 << 20, { fix: "fix it" }),
        ]
      ) {
        await assert.rejects(
          read,
          (e) => e instanceof NotRegularFileError && oneLine(e) && re.test(e.message),
        );
      }
    }
  } finally {
    listener.close();
  }
});

Deno.test("a 1 GB sparse file is refused by its size before a byte is read, holding no memory", async () => {
  await using dir = await tempDir();
  const big = `${dir.path}/big.toml`;
  await sparse(big, 1 << 30);
  const before = Deno.memoryUsage().rss;
  for (
    const read of [
      () => readRegularBytes(big, 1 << 20, { shown: "big.toml", fix: "check the path" }),
      () => Promise.resolve().then(() => readRegularTextSync(big, 1 << 20, { shown: "big.toml" })),
      () => glanceRegularText(big, 1 << 20, { shown: "big.toml" }),
    ]
  ) {
    await assert.rejects(
      read,
      (e) =>
        e instanceof TooLargeError && oneLine(e) && /^big\.toml: larger than 1 MiB/.test(e.message),
    );
  }
  // Nothing of the gigabyte was held (the cap is a mebibyte).
  assert.ok(Deno.memoryUsage().rss - before < 64 << 20, "the reader held memory for the file");
});

Deno.test("a file within the cap is read whole; one byte past it is refused; a missing one is NotFound", async () => {
  await using dir = await tempDir();
  const f = `${dir.path}/a.txt`;
  await Deno.writeTextFile(f, "héllo\n");
  assert.equal(await readRegularText(f, 7), "héllo\n");
  assert.equal(readRegularTextSync(f, 7), "héllo\n");
  assert.equal(await glanceRegularText(f, 7), "héllo\n");
  await assert.rejects(() => readRegularText(f, 6), TooLargeError);
  await assert.rejects(() => readRegularText(`${dir.path}/none`, 6), Deno.errors.NotFound);
  assert.throws(() => readRegularTextSync(`${dir.path}/none`, 6), Deno.errors.NotFound);
  await assert.rejects(() => glanceRegularText(`${dir.path}/none`, 6), Deno.errors.NotFound);
  // An empty file is empty text.
  await Deno.writeTextFile(f, "");
  assert.equal(await readRegularText(f, 7), "");
});

Deno.test("openRegular gives the size of what it opened and refuses what is no regular file", async () => {
  await using dir = await tempDir();
  const f = `${dir.path}/a.bin`;
  await Deno.writeFile(f, new Uint8Array(10));
  const file = await openRegular(f);
  try {
    assert.equal(file.size, 10);
    const buf = new Uint8Array(16);
    assert.equal(await file.read(buf), 10);
    assert.equal(await file.read(buf), 0);
  } finally {
    await file.close();
  }
  await assert.rejects(() => openRegular("/dev/zero"), NotRegularFileError);
});

/**
 * Runs `reads` reads of `path` with `reader` in a child process while the
 * parent swaps a FIFO and a regular file at `path` as fast as it can; the
 * child reports how many read the file and how many were refused. A read
 * that waits on the FIFO hangs the child: the ceiling kills it and the test
 * fails on its exit code.
 */
async function raceSwaps(reader: "readRegularText" | "glanceRegularText") {
  const module = reader === "readRegularText" ? "bounded_read" : "glance_read";
  await using dir = await tempDir();
  const path = `${dir.path}/config.toml`;
  const regular = `${dir.path}/regular`;
  const fifo = `${dir.path}/fifo`;
  await Deno.writeTextFile(path, "x = 1\n");
  const script = `
    import { ${reader} as read } from "${ROOT}/src/util/${module}.ts";
    let ok = 0, refused = 0, missing = 0;
    for (let i = 0; i < 400; i++) {
      try {
        const t = await read(${JSON.stringify(path)}, 1 << 20);
        if (t !== "x = 1\\n") throw new Error("read other text: " + JSON.stringify(t));
        ok++;
      } catch (e) {
        if (e.name === "NotRegularFileError") refused++;
        else if (e instanceof Deno.errors.NotFound) missing++;
        else throw e;
      }
    }
    console.log(JSON.stringify({ ok, refused, missing }));
    Deno.exit(0);
  `;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", script],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const ceiling = killAfter(child, 120_000);
  let stop = false;
  const swapping = (async () => {
    let i = 0;
    while (!stop) {
      // Alternate a FIFO and the regular file at the path, each renamed into place.
      if (i++ % 2) {
        await Deno.writeTextFile(regular, "x = 1\n");
        await Deno.rename(regular, path);
      } else {
        await mkfifo(fifo);
        await Deno.rename(fifo, path);
      }
    }
  })();
  const out = await child.output();
  stop = true;
  await swapping;
  ceiling.disarm();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr) + ceiling.note());
  const tally = JSON.parse(new TextDecoder().decode(out.stdout));
  // Both the file and the FIFO were met: the swap raced the reads.
  assert.ok(tally.ok > 0 && tally.refused > 0, JSON.stringify(tally));
  // Release an open still waiting on the FIFO, if the reader left one (it must not have hung).
  return tally;
}

Deno.test("a FIFO swapped in for the file while it is read again and again is refused, never waited on", async () => {
  await raceSwaps("readRegularText");
});

Deno.test("the early prompt's glance read refuses a FIFO swapped in during its open, never waiting on it", async () => {
  await raceSwaps("glanceRegularText");
});
