/**
 * The trusted half of the disk quota, on its own: the process's check of
 * what the worker listed (which Python may have forged), the host's
 * measure of a run directory (blocks, names, fail closed) and pruning by
 * the creation order in the names.
 */
import assert from "node:assert/strict";
import { entryCharge, MAX_ENTRIES, writeWorkTree } from "../../src/sandbox/work_out.ts";
import { diskUse, pruneRuns, runPrefix, runStamp } from "../../src/sandbox/work_dirs.ts";

async function tempDir(): Promise<string> {
  return await Deno.makeTempDir({ prefix: "accel-agent-workout-" });
}

const bytes = (n: number) => new Uint8Array(n);

Deno.test("a listing whose names climb out of the run directory writes nothing", async () => {
  const root = await tempDir();
  try {
    await Deno.mkdir(`${root}/work`);
    for (const path of ["../escape", "a/../../b", "/etc/x", "a//b", ".", "x\0y"]) {
      const error = (writeWorkTree(
        `${root}/work`,
        { entries: [{ path, data: bytes(1) }] },
        1e9,
      ))?.error;
      assert.ok(error, `${JSON.stringify(path)} was accepted`);
    }
    assert.deepEqual([...Deno.readDirSync(`${root}/work`)], []);
    assert.deepEqual([...Deno.readDirSync(root)].map((e) => e.name), ["work"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a listing over the quota, too long or malformed writes nothing, with a reason", async () => {
  const root = await tempDir();
  try {
    const cases: [unknown, RegExp][] = [
      [{ entries: [{ path: "big", data: bytes(3 * 4096) }] }, /disk quota/],
      [{ entries: [{ path: "n".repeat(256), data: bytes(1) }] }, /cannot be written/],
      [{ entries: [{ path: "a/b", data: bytes(1) }] }, /malformed/], // no parent listed
      [{ entries: [{ path: "x", data: "text" }] }, /malformed/],
      [{ entries: [{ path: "x" }, { path: "x" }] }, /malformed/],
      [
        { entries: Array.from({ length: MAX_ENTRIES + 1 }, (_, i) => ({ path: `f${i}` })) },
        /more than/,
      ],
      [{ error: "listed badly" }, /listed badly/],
      [42, /not listed/],
    ];
    for (const [tree, reason] of cases) {
      assert.match(writeWorkTree(root, tree, 2 * 4096 + 1000)?.error ?? "", reason);
      assert.deepEqual([...Deno.readDirSync(root)], []);
    }
    const deep = Array.from({ length: 20 }, (_, i) => String(i).padStart(250, "d"));
    const entries = deep.map((_, i) => ({ path: deep.slice(0, i + 1).join("/") }));
    assert.match(
      writeWorkTree(root, { entries }, 1e9)?.error ?? "",
      /longer than 4096 bytes/,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("files come out with mode 0600 and directories 0700, charged by blocks and names", async () => {
  const root = await tempDir();
  try {
    const tree = { entries: [{ path: "d" }, { path: "d/f", data: bytes(5000) }] };
    const quota = entryCharge("d", 0, true) + entryCharge("f", 5000);
    assert.equal(entryCharge("f", 5000), 2 * 4096 + 256 + 1);
    assert.match(writeWorkTree(root, tree, quota - 1)?.error ?? "", /disk quota/);
    assert.equal(writeWorkTree(root, tree, quota), undefined);
    assert.equal(Deno.statSync(`${root}/d`).mode! & 0o7777, 0o700);
    assert.equal(Deno.statSync(`${root}/d/f`).mode! & 0o7777, 0o600);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a run directory is measured by its blocks, and one it cannot read ends the measure", async () => {
  const root = await tempDir();
  try {
    const f = await Deno.open(`${root}/sparse`, { write: true, create: true });
    await f.truncate(1 << 30); // a gigabyte long, no block written
    f.close();
    const sparse = await diskUse(root);
    assert.ok("bytes" in sparse && sparse.bytes < 1 << 20, JSON.stringify(sparse));
    await Deno.writeFile(`${root}/dense`, bytes(1 << 20));
    const dense = await diskUse(root);
    assert.ok("bytes" in dense && dense.bytes >= 1 << 20, JSON.stringify(dense));
    // A path too long to name fails closed (made by renaming a parent, as an attacker would).
    let at = `${root}/a`;
    await Deno.mkdir(at);
    while (at.length < 4_000) {
      at = `${at}/${"b".repeat(Math.min(250, 4_000 - at.length))}`;
      await Deno.mkdir(at);
    }
    await Deno.rename(`${root}/a`, `${root}/${"a".repeat(250)}`);
    const long = await diskUse(root);
    assert.ok("error" in long && /longer than 4096/.test(long.error), JSON.stringify(long));
  } finally {
    await new Deno.Command("rm", { args: ["-rf", root] }).output();
  }
});

Deno.test("pruning keeps the newest by the names' creation order, not by a future mtime", async () => {
  const root = await tempDir();
  try {
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const dir = await Deno.makeTempDir({ dir: root, prefix: runPrefix(Date.now() + i) });
      made.push(dir);
    }
    // The oldest dated in 2100 and a name from a clock far ahead: neither is kept for ever.
    await Deno.utime(made[0]!, new Date("2100-01-01"), new Date("2100-01-01"));
    const ahead = `${root}/run-${String(Date.now() + 10 * 86_400_000).padStart(15, "0")}-000001-x`;
    await Deno.mkdir(ahead);
    assert.equal(runStamp(ahead.slice(root.length + 1)), 0);
    await pruneRuns(root, 2, [made[2]!]);
    const left = [...Deno.readDirSync(root)].map((e) => `${root}/${e.name}`).sort();
    assert.deepEqual(left, [made[1], made[2]].sort());
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("contents in a shared or resizable buffer are refused before anything is written", async () => {
  const root = await tempDir();
  try {
    const growable = new SharedArrayBuffer(0, { maxByteLength: 1 << 20 });
    const resizable = new ArrayBuffer(0, { maxByteLength: 1 << 20 });
    for (const data of [new Uint8Array(growable), new Uint8Array(resizable)]) {
      const tree = { entries: [{ path: "ok", data: bytes(10) }, { path: "grows", data }] };
      const failed = writeWorkTree(root, tree, 1e9);
      assert.match(failed?.error ?? "", /not a plain buffer/);
      assert.equal(failed?.overQuota, false);
      // Grown after the check, as another thread would: still nothing.
      if (data.buffer instanceof SharedArrayBuffer) data.buffer.grow(1 << 20);
      assert.deepEqual([...Deno.readDirSync(root)], []);
    }
    // A plain buffer is written as it was when handed over, and charged at that size.
    const plain = bytes(4096);
    const quota = entryCharge("f", 4096);
    assert.equal(
      writeWorkTree(root, { entries: [{ path: "f", data: plain }] }, quota),
      undefined,
    );
    assert.equal(Deno.statSync(`${root}/f`).size, 4096);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a copy-out that fails half-way leaves nothing in the work directory and no staging", async () => {
  const root = await tempDir();
  try {
    const work = `${root}/work`;
    await Deno.mkdir(work);
    // Distinct names to the listing, one name on disk (a lone surrogate is written as U+FFFD):
    // the first files are written, then the second of the pair fails.
    const entries = [
      ...Array.from({ length: 100 }, (_, i) => ({ path: `f${i}`, data: bytes(100_000) })),
      { path: "a\ud800", data: bytes(1) },
      { path: "a\udc00", data: bytes(1) },
    ];
    const failed = writeWorkTree(work, { entries }, 1e9);
    assert.match(failed?.error ?? "", /could not be written to the run directory/);
    assert.equal(failed?.overQuota, false);
    assert.deepEqual([...Deno.readDirSync(work)], []);
    assert.deepEqual([...Deno.readDirSync(root)].map((e) => e.name), ["work"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
