/**
 * What a cache file's reader checks of the pieces it reads (a file damaged
 * where its header cannot tell is found out, not believed), and its names
 * read a slice at a time.
 *
 * @module
 */
import { FIELD_BITS } from "./data.ts";
import { openPlainSync } from "../util/glance_read.ts";

/** A cache file found damaged while it is read: the caller builds the index again. */
export class CacheDamage extends RangeError {
  constructor(what: string) {
    super(`device index cache: ${what}`);
    this.name = "CacheDamage";
  }
}

/** A postings list as read: devices below `count`, each once, in order; else CacheDamage. */
export function checkedPostings(p: Uint32Array, count: number): Uint32Array {
  let prev = -1;
  for (let i = 0; i < p.length; i++) {
    const doc = (p[i] as number) >>> FIELD_BITS;
    if (doc <= prev || doc >= count) throw new CacheDamage("a postings list is out of order");
    prev = doc;
  }
  return p;
}

/** Where each term's postings start: in order, the last at the postings' end; else CacheDamage. */
export function checkedStarts(starts: Uint32Array, postings: number): Uint32Array {
  let prev = 0;
  for (let i = 0; i < starts.length; i++) {
    const s = starts[i] as number;
    if (s < prev) throw new CacheDamage("the postings' starts are out of order");
    prev = s;
  }
  if (starts.length === 0 || prev !== postings) {
    throw new CacheDamage("the postings' starts do not end where the postings do");
  }
  return starts;
}

/** Bytes of the names read per slice. */
const NAME_BYTES = 1 << 19;

const decoder = new TextDecoder();

/**
 * The names column of the cache file at `path`, a slice of names at a time,
 * the event loop turning between slices.
 */
export async function* nameSlices(
  path: string,
  section: { offset: number; length: number },
): AsyncIterable<string[]> {
  const file = openPlainSync(path);
  try {
    let carry = new Uint8Array(0);
    for (let at = 0; at < section.length; at += NAME_BYTES) {
      const n = Math.min(NAME_BYTES, section.length - at);
      const buf = new Uint8Array(carry.length + n);
      buf.set(carry);
      await file.seek(section.offset + at, Deno.SeekMode.Start);
      let got = 0;
      while (got < n) {
        const r = await file.read(buf.subarray(carry.length + got));
        if (r === null || r === 0) throw new CacheDamage("the file ends early");
        got += r;
      }
      const last = at + n >= section.length;
      const cut = last ? buf.length : buf.lastIndexOf(10) + 1;
      carry = buf.slice(cut);
      const text = decoder.decode(buf.subarray(0, last ? cut : cut - 1));
      if (text !== "" || last) yield text.split("\n");
      await new Promise((r) => setTimeout(r, 0));
    }
  } finally {
    file.close();
  }
}
