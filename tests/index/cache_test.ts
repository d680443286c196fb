import assert from "node:assert/strict";
import {
  buildIndex,
  DeviceIndex,
  Lexicon,
  lexiconDigest,
  rankedSearch,
} from "../../src/index/mod.ts";
import { emptySynonyms, loadSynonyms, mergeSynonyms } from "../../src/index/synonyms.ts";
import { loadIndex, openIndex, saveIndex } from "../../src/index/cache.ts";
import { IndexService } from "../../src/index/service.ts";
import { simulatorIndexSource } from "../../src/adapters/simulator/index_source.ts";
import { defaultFacility } from "../../src/facility/facility.ts";
import type { IndexSource } from "../../src/index/record.ts";
import { waitFor } from "../support/run_agent.ts";

const synonyms = await loadSynonyms();
const source = simulatorIndexSource(defaultFacility());

Deno.test("an index written to disk and read back answers exactly as the built one", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const built = await buildIndex(source, synonyms);
    await saveIndex(`${dir}/i.idx`, built.data);
    const data = await loadIndex(`${dir}/i.idx`, source.id, lexiconDigest(synonyms));
    assert.ok(data);
    const loaded = new DeviceIndex(data, new Lexicon(synonyms));
    for (const q of ["ion pump pressure cell 4", "horizontal steerers linac", "bpm 11"]) {
      assert.deepEqual(rankedSearch(loaded, q), rankedSearch(built, q));
    }
    assert.deepEqual(
      loaded.match({ pattern: "*:COR:*", limit: 500 }),
      built.match({ pattern: "*:COR:*", limit: 500 }),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a cache of another source, another synonym table or cut short is not used", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const built = await buildIndex(source, synonyms);
    const file = `${dir}/i.idx`;
    await saveIndex(file, built.data);
    const digest = lexiconDigest(synonyms);
    assert.equal(await loadIndex(file, "epics:elsewhere", digest), undefined);
    const other = mergeSynonyms(synonyms, {
      ...emptySynonyms(),
      terms: { bpm: ["button pickup"] },
    });
    assert.equal(await loadIndex(file, source.id, lexiconDigest(other)), undefined);
    const bytes = await Deno.readFile(file);
    await Deno.writeFile(file, bytes.subarray(0, bytes.length - 1000));
    assert.equal(await loadIndex(file, source.id, digest), undefined);
    assert.equal(await loadIndex(`${dir}/none.idx`, source.id, digest), undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the service builds once, then a second process start loads the cache instead", async () => {
  const dir = await Deno.makeTempDir();
  let reads = 0;
  const counted: IndexSource = {
    id: source.id,
    records: (signal) => {
      reads++;
      return source.records(signal);
    },
  };
  try {
    const first = new IndexService({ source: counted, cacheDir: `${dir}/index` });
    assert.equal((await first.stats()).origin, "built");
    const second = new IndexService({ source: counted, cacheDir: `${dir}/index` });
    const stats = await second.stats();
    assert.equal(stats.origin, "cache");
    assert.equal(stats.devices, defaultFacility().devices.length);
    assert.equal(reads, 1);
    await second.refresh();
    assert.equal(reads, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a cached index older than the source's refresh interval is read again from the backend", async () => {
  const dir = await Deno.makeTempDir();
  let reads = 0;
  const hourly: IndexSource = {
    id: source.id,
    refreshMs: 3_600_000,
    records: (signal) => {
      reads++;
      return source.records(signal);
    },
  };
  try {
    await new IndexService({ source: hourly, cacheDir: `${dir}/index` }).index();
    assert.equal(reads, 1);
    // A second start within the hour loads the cache.
    assert.equal(
      (await new IndexService({ source: hourly, cacheDir: `${dir}/index` }).stats()).origin,
      "cache",
    );
    assert.equal(reads, 1);
    // The same cache, with a source that wants a re-read every millisecond, is read again.
    const eager: IndexSource & { refreshMs: number } = { ...hourly, refreshMs: 1 };
    await new Promise((r) => setTimeout(r, 5));
    const service = new IndexService({ source: eager, cacheDir: `${dir}/index` });
    assert.equal((await service.stats()).origin, "built");
    assert.equal(reads, 2);
    // A running process keeps answering from the index it has while the re-read runs,
    // and answers from the new one once it is built.
    await new Promise((r) => setTimeout(r, 5));
    const before = await service.index();
    assert.ok(before.size > 0);
    await waitFor(() => reads === 3, 60_000, "the background re-read");
    eager.refreshMs = 0; // no further re-reads
    let after = before;
    while (after === before) {
      await new Promise((r) => setTimeout(r, 5));
      after = await service.index();
    }
    assert.equal(after.size, before.size);
    assert.equal(reads, 3);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an index opened from its cache file answers as the built one, reading a small part of it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const built = await buildIndex(source, synonyms);
    const file = `${dir}/i.idx`;
    await saveIndex(file, built.data);
    const store = await openIndex(file, source.id, lexiconDigest(synonyms));
    assert.ok(store);
    try {
      const lazy = new DeviceIndex(store, new Lexicon(synonyms));
      for (
        const q of [
          "ion pump pressure cell 4",
          "the last three linac klystrons",
          "linac sextupoles",
        ]
      ) {
        assert.deepEqual(
          rankedSearch(lazy, q, { limit: 10 }),
          rankedSearch(built, q, { limit: 10 }),
        );
      }
      const size = (await Deno.stat(file)).size;
      assert.ok(store.bytesRead < size / 5, `${store.bytesRead} of ${size} bytes read`);
      // A pattern reads what it needs too, and agrees with the built index.
      assert.deepEqual(
        lazy.match({ pattern: "RING:COR:H0*:SETPT", limit: 20 }),
        built.match({ pattern: "RING:COR:H0*:SETPT", limit: 20 }),
      );
      assert.equal(lazy.device(5).name, built.device(5).name);
    } finally {
      store.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a cache whose sections overrun the file is not opened", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const built = await buildIndex(source, synonyms);
    const file = `${dir}/i.idx`;
    await saveIndex(file, built.data);
    const bytes = await Deno.readFile(file);
    await Deno.writeFile(file, bytes.subarray(0, bytes.length - 1));
    assert.equal(await openIndex(file, source.id, lexiconDigest(synonyms)), undefined);
    await Deno.writeFile(file, new TextEncoder().encode("not an index at all"));
    assert.equal(await openIndex(file, source.id, lexiconDigest(synonyms)), undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the names come from the cache file a slice at a time, the event loop turning between", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const built = await buildIndex(source, synonyms);
    const file = `${dir}/i.idx`;
    await saveIndex(file, built.data);
    const store = await openIndex(file, source.id, lexiconDigest(synonyms));
    assert.ok(store);
    try {
      const order: string[] = [];
      setTimeout(() => order.push("timer"), 0);
      const names: string[] = [];
      for await (const chunk of store.nameChunks()) {
        order.push("chunk");
        names.push(...chunk);
      }
      assert.deepEqual(names, [...built.data.names]);
      assert.ok(order.indexOf("timer") < order.length - 1 || order.length === 2, order.join());
      assert.ok(order.indexOf("timer") >= 0);
      // The built index hands its names over the same way.
      const fromMemory: string[] = [];
      for await (const chunk of built.nameChunks()) fromMemory.push(...chunk);
      assert.deepEqual(fromMemory, names);
    } finally {
      store.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
