/**
 * The passes of a ranked search over the postings: devices holding a term of
 * every clause (the rarest clause's devices sought in the others', galloping),
 * devices holding the most clauses (for near misses), and the best k of many.
 *
 * @module
 */
import type { DeviceIndex } from "./device_index.ts";
import { FIELD_BITS, FIELD_WEIGHTS } from "./data.ts";
import type { Alternative, Clause } from "./query_parse.ts";

/** Weight of each combination of field bits: the best field's. */
const FIELD_WEIGHT = Array.from({ length: 1 << FIELD_BITS }, (_, bits) => {
  for (const f of FIELD_WEIGHTS) if (bits & f.bit) return f.weight;
  return 0;
});

/** The filter of a search without filters: every device passes (and none is asked). */
export const KEEP_ALL = (_doc: number): boolean => true;

/** Per-index working arrays, reused by every query (reset after each). */
export interface Scratch {
  score: Float32Array;
  best: Float32Array;
  stamp: Int32Array;
  coord: Uint8Array;
  touched: Uint32Array;
}
const scratch = new WeakMap<DeviceIndex, Scratch>();

export function scratchOf(index: DeviceIndex): Scratch {
  let s = scratch.get(index);
  if (s === undefined) {
    const n = index.size;
    s = {
      score: new Float32Array(n),
      best: new Float32Array(n),
      stamp: new Int32Array(n).fill(-1),
      coord: new Uint8Array(n),
      touched: new Uint32Array(n),
    };
    scratch.set(index, s);
  }
  return s;
}

/**
 * Every device that holds a term of every clause, with its score: found by
 * walking the rarest clause's devices and seeking each in the other clauses'
 * postings (galloping), so broad terms cost little. Undefined when no device
 * (that passes the filters) holds them all.
 */
export function conjunctive(
  index: DeviceIndex,
  clauses: Clause[],
  keep: (doc: number) => boolean,
): Found | undefined {
  if (clauses.length === 0 || clauses.some((c) => c.alts.length === 0)) return undefined;
  const n = index.size;
  const mask = (1 << FIELD_BITS) - 1;
  const size = (c: Clause) => c.alts.reduce((t, a) => t + index.count(a.id), 0);
  const order = clauses.map((c) => ({ c, size: size(c) })).sort((a, b) => a.size - b.size);
  const idf = (alt: Alternative) => Math.log(1 + n / Math.max(1, index.count(alt.id))) * alt.weight;
  // The rarest clause's devices, each with its best weight: one alternative's postings are
  // its devices already; several are merged (sorted pairs), never an array per device.
  const rarest = order[0]?.c.alts ?? [];
  let docs: Uint32Array;
  let scores: Float32Array;
  if (rarest.length === 1) {
    const alt = rarest[0] as Alternative;
    const p = index.postings(alt.id);
    const f = idf(alt);
    docs = new Uint32Array(p.length);
    scores = new Float32Array(p.length);
    for (let i = 0; i < p.length; i++) {
      const v = p[i] as number;
      docs[i] = v >>> FIELD_BITS;
      scores[i] = (FIELD_WEIGHT[v & mask] as number) * f;
    }
  } else {
    const pairs: [doc: number, weight: number][] = [];
    for (const alt of rarest) {
      const p = index.postings(alt.id);
      const f = idf(alt);
      for (let i = 0; i < p.length; i++) {
        const v = p[i] as number;
        pairs.push([v >>> FIELD_BITS, (FIELD_WEIGHT[v & mask] as number) * f]);
      }
    }
    pairs.sort((x, y) => x[0] - y[0] || y[1] - x[1]);
    const d: number[] = [], w: number[] = [];
    for (const [doc, weight] of pairs) {
      if (d[d.length - 1] === doc) continue;
      d.push(doc);
      w.push(weight);
    }
    docs = Uint32Array.from(d);
    scores = Float32Array.from(w);
  }
  for (const { c } of order.slice(1)) {
    const add = new Float32Array(docs.length);
    // Only where the devices left are: a long list is read (from a cache file) only there.
    const lo = docs[0] ?? 0, hi = docs[docs.length - 1] ?? 0;
    for (const alt of c.alts) {
      const p = index.postingsRange(alt.id, lo, hi);
      const f = idf(alt);
      let j = 0;
      for (let i = 0; i < docs.length && j < p.length; i++) {
        const target = docs[i] as number;
        j = seek(p, j, target);
        const v = p[j];
        if (v !== undefined && v >>> FIELD_BITS === target) {
          const w = (FIELD_WEIGHT[v & mask] as number) * f;
          if (w > (add[i] as number)) add[i] = w;
        }
      }
    }
    let k = 0;
    for (let i = 0; i < docs.length; i++) {
      if ((add[i] as number) > 0) {
        docs[k] = docs[i] as number;
        scores[k] = (scores[i] as number) + (add[i] as number);
        k++;
      }
    }
    if (k === 0) return undefined;
    docs = docs.subarray(0, k);
    scores = scores.subarray(0, k);
  }
  let passing: number[], out: number[];
  if (keep === KEEP_ALL) {
    passing = Array.from(docs);
    out = Array.from(scores);
  } else {
    passing = [];
    out = [];
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i] as number;
      if (keep(d)) {
        passing.push(d);
        out.push(scores[i] as number);
      }
    }
  }
  return passing.length ? { passing, scores: out } : undefined;
}

/** Devices that satisfy every clause, and their scores. */
export interface Found {
  passing: number[];
  scores: number[];
}

/** The first position at or after `from` whose device is at least `target` (galloping search). */
export function seek(p: Uint32Array, from: number, target: number): number {
  let lo = from, hi = from, step = 1;
  while (hi < p.length && (p[hi] as number) >>> FIELD_BITS < target) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  if (hi > p.length) hi = p.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((p[mid] as number) >>> FIELD_BITS < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Devices ranked by how many clauses they hold: those holding the most, with their scores. */
export function accumulate(
  index: DeviceIndex,
  clauses: Clause[],
  s: Scratch,
  keep: (doc: number) => boolean,
): { passing: number[]; scores: number[] } {
  const n = index.size;
  const { score, best, stamp, coord, touched } = s;
  let nt = 0;
  const mask = (1 << FIELD_BITS) - 1;
  clauses.forEach((clause, ci) => {
    for (const alt of clause.alts) {
      const p = index.postings(alt.id);
      const idf = Math.log(1 + n / Math.max(1, p.length)) * alt.weight;
      for (let i = 0; i < p.length; i++) {
        const v = p[i] as number;
        const d = v >>> FIELD_BITS;
        const w = (FIELD_WEIGHT[v & mask] as number) * idf;
        if (stamp[d] !== ci) {
          if (coord[d] === 0) touched[nt++] = d;
          stamp[d] = ci;
          coord[d] = (coord[d] as number) + 1;
          best[d] = w;
          score[d] = (score[d] as number) + w;
        } else if (w > (best[d] as number)) {
          score[d] = (score[d] as number) + w - (best[d] as number);
          best[d] = w;
        }
      }
    }
  });
  let top = 0;
  for (let i = 0; i < nt; i++) {
    const d = touched[i] as number;
    const c = coord[d] as number;
    if (c < top) continue;
    if (c > top && keep(d)) top = c;
  }
  const passing: number[] = [];
  const scores: number[] = [];
  for (let i = 0; i < nt; i++) {
    const d = touched[i] as number;
    if (coord[d] !== top || top === 0) continue;
    if (!keep(d)) continue;
    passing.push(d);
    scores.push(score[d] as number);
  }
  for (let i = 0; i < nt; i++) {
    const d = touched[i] as number;
    score[d] = 0;
    coord[d] = 0;
    stamp[d] = -1;
    best[d] = 0;
  }
  const order = passing.map((_, i) => i).sort((a, b) =>
    (passing[a] as number) - (passing[b] as number)
  );
  return {
    passing: order.map((i) => passing[i] as number),
    scores: order.map((i) => scores[i] as number),
  };
}

/**
 * Positions of the best `k` of `docs` (score high to low, then the signal's
 * kind, then name order): a full sort for few, a bounded heap for many, the
 * same order either way.
 */
export function topOrder(docs: number[], scores: number[], pref: Uint8Array, k: number): number[] {
  // Scores compared to a thousandth, once each, as integers.
  const q = new Int32Array(docs.length);
  for (let i = 0; i < docs.length; i++) q[i] = Math.round((scores[i] as number) * 1000);
  const before = (i: number, j: number) => {
    const a = q[i] as number, b = q[j] as number;
    if (a !== b) return a > b;
    const p = pref[i] as number, r = pref[j] as number;
    if (p !== r) return p < r;
    return (docs[i] as number) < (docs[j] as number);
  };
  const all = docs.map((_, i) => i);
  if (docs.length <= 4 * k + 1000) {
    return all.sort((i, j) => (before(i, j) ? -1 : before(j, i) ? 1 : 0)).slice(0, k);
  }
  // A heap of the k best so far, worst on top.
  const heap: number[] = [];
  const worse = (i: number, j: number) => before(j, i);
  const up = (at: number) => {
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!worse(heap[at] as number, heap[parent] as number)) break;
      [heap[at], heap[parent]] = [heap[parent] as number, heap[at] as number];
      at = parent;
    }
  };
  const down = (at: number) => {
    for (;;) {
      const l = 2 * at + 1, r = l + 1;
      let m = at;
      if (l < heap.length && worse(heap[l] as number, heap[m] as number)) m = l;
      if (r < heap.length && worse(heap[r] as number, heap[m] as number)) m = r;
      if (m === at) return;
      [heap[at], heap[m]] = [heap[m] as number, heap[at] as number];
      at = m;
    }
  };
  for (const i of all) {
    if (heap.length < k) {
      heap.push(i);
      up(heap.length - 1);
    } else if (k > 0 && before(i, heap[0] as number)) {
      heap[0] = i;
      down(0);
    }
  }
  return heap.sort((i, j) => (before(i, j) ? -1 : before(j, i) ? 1 : 0));
}
