/**
 * The process's one device index over the configured backend: built on the
 * first search (never at start-up), loaded from the on-disk cache in the
 * state directory when the source and the synonym table are unchanged, and
 * rebuilt on demand (`accel-agent index refresh`).
 *
 * @module
 */
import { buildIndex, DeviceIndex, Lexicon, lexiconDigest } from "./mod.ts";
import { type IndexSource, refreshDue } from "./record.ts";
import type { SynonymData } from "./lexicon.ts";
import { openIndex, saveIndex } from "./cache.ts";
import { loadSynonyms } from "./synonyms.ts";
import { sha256Hex } from "../util/hash.ts";

/** Options of {@link IndexService}. */
export interface IndexServiceOptions {
  source: IndexSource;
  /** A facility's synonym file, added to the built-in table. */
  synonymsFile?: string;
  /** Where cached indexes live (`<state dir>/index`); none: never cached. */
  cacheDir?: string;
}

/** What `accel-agent index stats` shows. */
export interface IndexStats {
  source: string;
  devices: number;
  terms: number;
  postings: number;
  builtAt: string;
  /** "cache" when loaded from disk, "built" when built in this process. */
  origin: "cache" | "built";
  cacheFile?: string;
  cacheBytes?: number;
  /** Time to build or load, ms. */
  ms: number;
  /** The source's refresh interval, ms (0: only on demand). */
  refreshMs: number;
  /** The facility's synonym file, when one is configured. */
  synonymsFile?: string;
}

/** What the program asks of the device index service. */
export interface DeviceIndexService {
  /** The index, loaded or built on first use. */
  index(signal?: AbortSignal): Promise<DeviceIndex>;
  /** Rebuilds from the source and rewrites the cache. */
  refresh(signal?: AbortSignal): Promise<DeviceIndex>;
  /** Facts about the index (loading or building it first). */
  stats(signal?: AbortSignal): Promise<IndexStats>;
}

/** Lazily loads or builds the index of one source. */
export class IndexService implements DeviceIndexService {
  #index: Promise<DeviceIndex> | undefined;
  #synonyms: Promise<SynonymData> | undefined;
  #origin: "cache" | "built" = "built";
  #ms = 0;
  /** The index last built or loaded, for the refresh check. */
  #ready: DeviceIndex | undefined;
  /** When the namespace was last read (or a re-read last failed), ms since the epoch. */
  #readAt = 0;
  #refreshing = false;

  constructor(readonly options: IndexServiceOptions) {}

  /** The index, loaded or built on first use. */
  index(signal?: AbortSignal): Promise<DeviceIndex> {
    if (this.#index === undefined) {
      this.#index = this.#open(false, signal);
      // A failed or cancelled build is not remembered: the next search tries again.
      this.#index.catch(() => this.#index = undefined);
    } else if (this.#ready && refreshDue(this.options.source, this.#readAt, Date.now())) {
      this.#refreshInBackground();
    }
    return this.#index;
  }

  /**
   * A long-running process (the REPL) keeps answering from the index it has
   * while the backend's namespace is read again; the new index replaces it
   * once built. A failed re-read keeps the old one and is tried at the next
   * search after a further `refreshMs`.
   */
  #refreshInBackground(): void {
    if (this.#refreshing || this.#ready === undefined) return;
    this.#refreshing = true;
    this.#open(true).then(
      (fresh) => this.#index = Promise.resolve(fresh),
      // Keep serving the old index; the next try is a whole interval from now.
      () => this.#readAt = Date.now(),
    ).finally(() => this.#refreshing = false);
  }

  /** Rebuilds from the source and rewrites the cache. */
  refresh(signal?: AbortSignal): Promise<DeviceIndex> {
    this.#index = this.#open(true, signal);
    this.#index.catch(() => this.#index = undefined);
    return this.#index;
  }

  /** The cache file of this source, when caching is on. */
  async cacheFile(): Promise<string | undefined> {
    if (!this.options.cacheDir) return undefined;
    const key = (await sha256Hex(this.options.source.id)).slice(0, 24);
    return `${this.options.cacheDir}/${key}.idx`;
  }

  /** Facts about the index (loading or building it first). */
  async stats(signal?: AbortSignal): Promise<IndexStats> {
    const index = await this.index(signal);
    const file = await this.cacheFile();
    let cacheBytes: number | undefined;
    try {
      if (file) cacheBytes = (await Deno.stat(file)).size;
    } catch { /* not written (no cache directory, or not writable) */ }
    return {
      source: index.store.sourceId,
      devices: index.size,
      terms: index.termCount,
      postings: index.store.starts()[index.termCount] ?? 0,
      builtAt: new Date(index.store.builtAt).toISOString(),
      origin: this.#origin,
      ...(file ? { cacheFile: file } : {}),
      ...(cacheBytes !== undefined ? { cacheBytes } : {}),
      ms: Math.round(this.#ms),
      refreshMs: this.options.source.refreshMs ?? 0,
      ...(this.options.synonymsFile ? { synonymsFile: this.options.synonymsFile } : {}),
    };
  }

  async #open(rebuild: boolean, signal?: AbortSignal): Promise<DeviceIndex> {
    const t0 = performance.now();
    this.#synonyms ??= loadSynonyms(this.options.synonymsFile);
    const synonyms = await this.#synonyms;
    const digest = lexiconDigest(synonyms);
    const file = await this.cacheFile();
    if (file && !rebuild) {
      // Opened to be read a piece at a time: a search reads only what it needs.
      const store = await openIndex(file, this.options.source.id, digest);
      // A cache older than the source's refresh interval is read again from the backend.
      if (store && !refreshDue(this.options.source, store.builtAt, Date.now())) {
        this.#origin = "cache";
        const index = new DeviceIndex(store, new Lexicon(synonyms));
        this.#ms = performance.now() - t0;
        this.#ready = index;
        this.#readAt = store.builtAt;
        return index;
      }
      store?.close();
    }
    const index = await buildIndex(this.options.source, synonyms, signal);
    this.#origin = "built";
    this.#ms = performance.now() - t0;
    this.#ready = index;
    this.#readAt = index.store.builtAt;
    if (file && this.options.cacheDir) {
      try {
        await Deno.mkdir(this.options.cacheDir, { recursive: true, mode: 0o700 });
        await saveIndex(file, index.data);
      } catch (e) {
        // The index works without its cache; a read-only state directory only costs the next start.
        if (rebuild) throw e;
      }
    }
    return index;
  }
}
