/**
 * The built index on disk: a JSON header naming each section's place, then
 * the sections as raw bytes (terms, postings, names and descriptions with
 * the byte offsets of their ends, units, writability), so a search reads
 * only the pieces it needs ({@link FileStore}) and a whole load is a few
 * large reads.
 *
 * @module
 */
import type { IndexData, TextColumn } from "./data.ts";
import { FileStore, type Sections, type StoreHeader } from "./file_store.ts";

export { CacheDamage } from "./file_store.ts";
import { openPlainSync } from "../util/glance_read.ts";
import { NotRegularFileError } from "../util/bounded_read.ts";

/** Bumped whenever the layout or the way terms are made changes. */
export const CACHE_FORMAT = 3;

const MAGIC = "accel-agent device index";

const SECTIONS: readonly (keyof Sections)[] = [
  "terms",
  "starts",
  "postings",
  "nameEnds",
  "names",
  "descEnds",
  "descriptions",
  "unitsOf",
  "writable",
];

type Json = Record<string, unknown>;
const isTable = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isStrings = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((x) => typeof x === "string");

/**
 * The header as read back, or undefined when it is not of our shape (a file
 * of another shape is no cache of ours and is rebuilt). Checked by hand: the
 * command line's search opens the cache without loading the schema library.
 */
function header(text: string): StoreHeader & { magic: string; format: number } | undefined {
  let h: unknown;
  try {
    h = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isTable(h) || !isTable(h.sections) || !isTable(h.learned) || !isTable(h.learnedPlaces)) {
    return undefined;
  }
  const sections = h.sections;
  const ok = typeof h.magic === "string" && typeof h.format === "number" &&
    typeof h.sourceId === "string" && typeof h.lexiconDigest === "string" &&
    typeof h.builtAt === "number" && isCount(h.count) && isStrings(h.unitsTable) &&
    Object.values(h.learned).every(isStrings) &&
    Object.values(h.learnedPlaces).every((x) => typeof x === "string") &&
    SECTIONS.every((k) => {
      const s = sections[k];
      return isTable(s) && isCount(s.offset) && isCount(s.length);
    });
  return ok ? h as unknown as StoreHeader & { magic: string; format: number } : undefined;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The column's text as UTF-8, and the byte offset where each item ends. */
function utf8Column(column: TextColumn): { bytes: Uint8Array; ends: Uint32Array } {
  const bytes = encoder.encode(column.text);
  if (bytes.length === column.text.length) return { bytes, ends: column.ends };
  const ends = new Uint32Array(column.length);
  let at = 0;
  for (let i = 0; i < column.length; i++) {
    at += encoder.encode(column.at(i)).length;
    ends[i] = at;
    at += 1;
  }
  return { bytes, ends };
}

const raw = (a: Uint32Array | Uint8Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** A temporary file older than this is one a killed process left behind (a write takes seconds). */
const STALE_TMP_MS = 10 * 60_000;

/**
 * Writes the index to `path` (mode 0600) through a temporary file, so a
 * reader never sees half of it; a write that fails (a full disk) removes the
 * temporary file, and temporary files a killed process left are removed
 * first, so failed writes never fill the disk.
 */
export async function saveIndex(path: string, data: IndexData): Promise<void> {
  await removeStaleTemps(path);
  const names = utf8Column(data.names);
  const descriptions = utf8Column(data.descriptions);
  const parts: [keyof Sections, Uint8Array][] = [
    ["terms", encoder.encode(data.terms.join("\n"))],
    ["starts", raw(data.starts)],
    ["postings", raw(data.postings)],
    ["nameEnds", raw(names.ends)],
    ["names", names.bytes],
    ["descEnds", raw(descriptions.ends)],
    ["descriptions", descriptions.bytes],
    ["unitsOf", raw(data.unitsOf)],
    ["writable", data.writable],
  ];
  const pad = (n: number) => (4 - n % 4) % 4;
  const header = (start: number) => {
    const sections = {} as Sections;
    let at = start;
    for (const [name, bytes] of parts) {
      sections[name] = { offset: at, length: bytes.byteLength };
      at += bytes.byteLength + pad(bytes.byteLength);
    }
    return encoder.encode(JSON.stringify({
      magic: MAGIC,
      format: CACHE_FORMAT,
      sourceId: data.sourceId,
      lexiconDigest: data.lexiconDigest,
      builtAt: data.builtAt,
      count: data.names.length,
      unitsTable: data.unitsTable,
      learned: data.learned ?? {},
      learnedPlaces: data.learnedPlaces ?? {},
      sections,
    }));
  };
  // The header holds the sections' offsets, which depend on its own length: settle it.
  let head = header(0);
  for (let i = 0; i < 3; i++) head = header(8 + head.byteLength + pad(8 + head.byteLength));
  const prefix = new Uint8Array(8);
  new DataView(prefix.buffer).setUint32(0, head.byteLength, true);
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    const file = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
    try {
      await writeAll(file, prefix);
      await writeAll(file, head);
      await writeAll(file, new Uint8Array(pad(8 + head.byteLength)));
      for (const [, bytes] of parts) {
        await writeAll(file, bytes);
        await writeAll(file, new Uint8Array(pad(bytes.byteLength)));
      }
    } finally {
      file.close();
    }
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
}

/** Removes the temporary files beside `path` that no write can still be using. */
async function removeStaleTemps(path: string): Promise<void> {
  const at = path.lastIndexOf("/");
  const dir = path.slice(0, at) || "/";
  const base = path.slice(at + 1);
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.isFile || !e.name.startsWith(`${base}.`) || !e.name.endsWith(".tmp")) continue;
      const tmp = `${dir}/${e.name}`;
      const info = await Deno.lstat(tmp).catch(() => undefined);
      if (info?.mtime && Date.now() - info.mtime.getTime() > STALE_TMP_MS) {
        await Deno.remove(tmp).catch(() => {});
      }
    }
  } catch {
    // No directory yet, or not listable: nothing to clear.
  }
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.byteLength) off += await file.write(bytes.subarray(off));
}

/** Reads exactly `n` bytes, or fewer at the end of the file. */
function readExactly(file: Deno.FsFile, n: number): Uint8Array {
  const buf = new Uint8Array(n);
  let at = 0;
  while (at < n) {
    const got = file.readSync(buf.subarray(at));
    if (got === null || got === 0) break;
    at += got;
  }
  return at === n ? buf : buf.subarray(0, at);
}

/**
 * The index stored at `path`, opened to be read a piece at a time, or
 * undefined when there is none, it is of another format, another source or
 * another synonym table, or it is damaged (its sections overrun the file).
 */
export function openIndex(
  path: string,
  sourceId: string,
  lexiconDigest: string,
): Promise<FileStore | undefined> {
  return Promise.resolve(openIndexSync(path, sourceId, lexiconDigest));
}

/** {@link openIndex}, synchronously (the command line's search waits for it anyway). */
export function openIndexSync(
  path: string,
  sourceId: string,
  lexiconDigest: string,
): FileStore | undefined {
  let file: Deno.FsFile;
  try {
    file = openPlainSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof NotRegularFileError) return undefined;
    throw e;
  }
  try {
    const size = file.statSync().size;
    const prefix = readExactly(file, 8);
    if (prefix.byteLength !== 8) throw new RangeError("short");
    const headLength = new DataView(prefix.buffer).getUint32(0, true);
    if (headLength > 1 << 26 || 8 + headLength > size) throw new RangeError("short");
    const h = header(decoder.decode(readExactly(file, headLength)));
    if (
      h === undefined ||
      h.magic !== MAGIC || h.format !== CACHE_FORMAT || h.sourceId !== sourceId ||
      h.lexiconDigest !== lexiconDigest
    ) throw new RangeError("another index");
    const s = h.sections;
    // Each section after the header and the one before it, and inside the file; and the file
    // ends where the last one (padded) does: a cut or grown file is not the one this header
    // describes.
    const padded = (n: number) => n + (4 - n % 4) % 4;
    let end = 8 + headLength;
    const ordered = SECTIONS.every((k) => {
      const x = s[k];
      const ok = x.offset >= end && x.offset + x.length <= size;
      end = x.offset + x.length;
      return ok;
    });
    const last = Math.max(...Object.values(s).map((x) => x.offset + padded(x.length)));
    const fits = ordered && last === size;
    const n = h.count;
    if (
      !fits || s.nameEnds.length !== 4 * n || s.descEnds.length !== 4 * n ||
      s.unitsOf.length !== 4 * n || s.writable.length !== n || s.starts.length % 4 !== 0 ||
      s.postings.length % 4 !== 0
    ) throw new RangeError("damaged");
    return new FileStore(file, h, path);
  } catch {
    file.close();
    return undefined;
  }
}

/** The whole index stored at `path` (see {@link openIndex}), read into memory. */
export async function loadIndex(
  path: string,
  sourceId: string,
  lexiconDigest: string,
): Promise<IndexData | undefined> {
  const store = await openIndex(path, sourceId, lexiconDigest);
  if (store === undefined) return undefined;
  try {
    const data = store.full();
    if (data.terms.length + 1 !== data.starts.length) return undefined;
    return data;
  } catch {
    return undefined;
  } finally {
    store.close();
  }
}
