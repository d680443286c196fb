/**
 * The index cache on disk against damaged and hostile files and a full
 * disk: a header whose counts do not fit the file is refused before anything
 * is allocated, a FIFO or a device in the cache's place is not waited on,
 * and a write that fails leaves no temporary file behind.
 */
import assert from "node:assert/strict";
import { buildIndex, lexiconDigest } from "../../src/index/mod.ts";
import { loadSynonyms } from "../../src/index/synonyms.ts";
import { loadIndex, saveIndex } from "../../src/index/cache.ts";
import { simulatorIndexSource } from "../../src/adapters/simulator/index_source.ts";
import { defaultFacility } from "../../src/facility/facility.ts";
import { canMount, fill, mountTmpfs } from "../support/full_disk.ts";
import { tempDir } from "../support/temp.ts";

const synonyms = await loadSynonyms();
const digest = lexiconDigest(synonyms);
const source = simulatorIndexSource(defaultFacility());
const built = await buildIndex(source, synonyms);

/** The cache file's header and the bytes after it. */
function split(bytes: Uint8Array): { header: Record<string, unknown>; body: Uint8Array } {
  const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
  const padded = length + (4 - (8 + length) % 4) % 4;
  return { header, body: bytes.subarray(8 + padded) };
}

/** A cache file with `header` in place of its own, laid out as saveIndex lays it out. */
function join(header: Record<string, unknown>, body: Uint8Array): Uint8Array {
  const head = new TextEncoder().encode(JSON.stringify(header));
  const pad = (4 - (8 + head.byteLength) % 4) % 4;
  const out = new Uint8Array(8 + head.byteLength + pad + body.byteLength);
  new DataView(out.buffer).setUint32(0, head.byteLength, true);
  out.set(head, 8);
  out.set(body, 8 + head.byteLength + pad);
  return out;
}

Deno.test("a cache header whose count or section lengths do not fit the file is refused before anything is allocated", async () => {
  await using dir = await tempDir();
  const file = `${dir.path}/i.idx`;
  await saveIndex(file, built.data);
  const { header, body } = split(await Deno.readFile(file));
  type Section = { offset: number; length: number };
  const sections = header.sections as Record<string, Section>;
  const edit = (name: string, change: Partial<Section>) => ({
    sections: { ...sections, [name]: { ...sections[name], ...change } },
  });
  const edits: Record<string, unknown>[] = [
    // One wrong count: a column of 1.7 billion entries (6.9 GB) if it were believed.
    { count: 1_700_000_000 },
    { count: (header.count as number) + 1 },
    // A section that claims more bytes than the file has, or lies past its end.
    edit("postings", { length: (sections.postings?.length ?? 0) + (1 << 30) }),
    edit("terms", { offset: 0xffffffff }),
    edit("names", { length: 0xffffffff }),
  ];
  const before = Deno.memoryUsage().rss;
  for (const edit of edits) {
    await Deno.writeFile(file, join({ ...header, ...edit }, body));
    assert.equal(await loadIndex(file, source.id, digest), undefined, JSON.stringify(edit));
  }
  // Nothing near the sizes claimed was held.
  assert.ok(Deno.memoryUsage().rss - before < 256 << 20, "a damaged header cost memory");
  // The untouched header still loads.
  await Deno.writeFile(file, join(header, body));
  assert.ok(await loadIndex(file, source.id, digest));
});

Deno.test("a FIFO or a device in the cache's place is passed over, not waited on", async () => {
  await using dir = await tempDir();
  const fifo = `${dir.path}/fifo.idx`;
  assert.ok((await new Deno.Command("mkfifo", { args: [fifo] }).output()).success);
  assert.equal(await loadIndex(fifo, source.id, digest), undefined);
  await Deno.symlink("/dev/zero", `${dir.path}/zero.idx`);
  assert.equal(await loadIndex(`${dir.path}/zero.idx`, source.id, digest), undefined);
});

Deno.test("temporary files a killed writer left are removed by the next save, fresh ones kept", async () => {
  await using dir = await tempDir();
  const file = `${dir.path}/i.idx`;
  const stale = `${file}.0a1b.tmp`;
  const fresh = `${file}.2c3d.tmp`;
  await Deno.writeFile(stale, new Uint8Array(1000));
  await Deno.writeFile(fresh, new Uint8Array(1000));
  const hourAgo = new Date(Date.now() - 3_600_000);
  await Deno.utime(stale, hourAgo, hourAgo);
  await saveIndex(file, built.data);
  const names = [...Deno.readDirSync(dir.path)].map((e) => e.name).sort();
  assert.deepEqual(names, ["i.idx", "i.idx.2c3d.tmp"]);
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
});

Deno.test({
  name: "a cache write that runs out of space removes its temporary file and keeps the old cache",
  ignore: !(await canMount()),
  fn: async () => {
    await using dir = await tempDir();
    const disk = `${dir.path}/disk`;
    const unmount = await mountTmpfs(disk, "256k");
    try {
      const file = `${disk}/i.idx`;
      await Deno.writeTextFile(file, "old cache");
      await fill(disk);
      // The index is larger than the room left, and larger than the whole disk.
      await assert.rejects(() => saveIndex(file, built.data), /No space left on device/);
      const names = [...Deno.readDirSync(disk)].map((e) => e.name).sort();
      assert.deepEqual(names, ["filler", "i.idx"]);
      assert.equal(await Deno.readTextFile(file), "old cache");
    } finally {
      await unmount();
    }
  },
});
