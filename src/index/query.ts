/**
 * Informal, ranked search: an operator's words ("horizontal steerers in the
 * linac", "ion pump pressure cell 4", "bpm 11 turn by turn") become clauses
 * of alternative terms through the {@link Lexicon}; devices are ranked first
 * by how many clauses they satisfy, then by a score that weighs where each
 * term was found (name, property, tag, description) by its rarity.
 *
 * @module
 */
import { DeviceIndex, firstSegment, type IndexedDevice } from "./device_index.ts";
import { FIELD_BITS, FIELD_WEIGHTS } from "./data.ts";
import { type Alternative, type Clause, parseQuery } from "./query_parse.ts";

/** One ranked result, with why it matched. */
export interface RankedDevice extends IndexedDevice {
  score: number;
  /** Each query term it satisfied and where: `"steerer (name)"`, `"cell 4 (property)"`. */
  matched: string[];
}

/** A page of ranked results. */
export interface RankedPage {
  /** Devices that satisfy as many of the query's terms as any device does. */
  total: number;
  offset: number;
  devices: RankedDevice[];
  /** The query's terms as understood ("horizontal", "steerrer≈steerer", "cell 4"). */
  terms: string[];
  /** Terms no result satisfies. */
  unmatched: string[];
}

/** Filters and paging of an informal search. */
export interface InformalOptions {
  subsystem?: string;
  writable?: boolean;
  offset?: number;
  limit?: number;
  /** Accept wider typos (used to find near families when nothing matches). */
  lenient?: boolean;
}

/** Weight of each combination of field bits: the best field's. */
const FIELD_WEIGHT = Array.from({ length: 1 << FIELD_BITS }, (_, bits) => {
  for (const f of FIELD_WEIGHTS) if (bits & f.bit) return f.weight;
  return 0;
});

/** Per-index working arrays, reused by every query (reset after each). */
interface Scratch {
  score: Float32Array;
  best: Float32Array;
  stamp: Int32Array;
  coord: Uint8Array;
  touched: Uint32Array;
}
const scratch = new WeakMap<DeviceIndex, Scratch>();

/** Ranked devices for free text. */
export function rankedSearch(
  index: DeviceIndex,
  text: string,
  opts: InformalOptions = {},
): RankedPage {
  const offset = Math.max(0, Math.floor(opts.offset ?? 0));
  const limit = Math.max(0, Math.floor(opts.limit ?? 50));
  const clauses = parseQuery(index, text, opts.lenient === true);
  const terms = clauses.map((c) => c.label);
  const n = index.size;
  let s = scratch.get(index);
  if (s === undefined) {
    s = {
      score: new Float32Array(n),
      best: new Float32Array(n),
      stamp: new Int32Array(n).fill(-1),
      coord: new Uint8Array(n),
      touched: new Uint32Array(n),
    };
    scratch.set(index, s);
  }
  const subsystem = opts.subsystem?.trim().toUpperCase();
  const keep = (d: number) =>
    (opts.writable === undefined || (index.data.writable[d] === 1) === opts.writable) &&
    (!subsystem || firstSegment(index.data.names.at(d)) === subsystem);
  const { passing, scores } = conjunctive(index, clauses, s, keep) ??
    accumulate(index, clauses, s, keep);
  const order = topOrder(passing, scores, offset + limit);
  const scoreOf = new Map<number, number>();
  order.forEach((i) => scoreOf.set(passing[i] as number, scores[i] as number));
  const ranked = order.map((i) => passing[i] as number);
  const devices = ranked.slice(offset, offset + limit).map((d): RankedDevice => ({
    ...index.device(d),
    score: Math.round((scoreOf.get(d) ?? 0) * 100) / 100,
    matched: reasons(index, clauses, d),
  }));
  const unmatched = ranked.length
    ? clauses.filter((c) => !c.alts.some((a) => index.fieldsOf(a.id, ranked[0] ?? 0))).map((c) =>
      c.label
    )
    : terms;
  return { total: passing.length, offset, devices, terms, unmatched };
}

/**
 * Every device that holds a term of every clause, with its score: found by
 * walking the rarest clause's devices and seeking each in the other clauses'
 * postings (galloping), so broad terms cost little. Undefined when no device
 * (that passes the filters) holds them all; the caller then ranks by how many
 * clauses each device holds.
 */
function conjunctive(
  index: DeviceIndex,
  clauses: Clause[],
  s: Scratch,
  keep: (doc: number) => boolean,
): { passing: number[]; scores: number[] } | undefined {
  const live = clauses.filter((c) => c.alts.length > 0);
  if (live.length === 0) return undefined;
  const n = index.size;
  const mask = (1 << FIELD_BITS) - 1;
  const size = (c: Clause) => c.alts.reduce((t, a) => t + index.postings(a.id).length, 0);
  const order = live.map((c) => ({ c, size: size(c) })).sort((a, b) => a.size - b.size);
  const idf = (alt: Alternative, p: Uint32Array) =>
    Math.log(1 + n / Math.max(1, p.length)) * alt.weight;
  // The rarest clause's devices, each with its best weight.
  const { best, touched } = s;
  let nt = 0;
  for (const alt of order[0]?.c.alts ?? []) {
    const p = index.postings(alt.id);
    const f = idf(alt, p);
    for (let i = 0; i < p.length; i++) {
      const v = p[i] as number;
      const d = v >>> FIELD_BITS;
      const w = (FIELD_WEIGHT[v & mask] as number) * f;
      if (best[d] === 0) touched[nt++] = d;
      if (w > (best[d] as number)) best[d] = w;
    }
  }
  let docs = touched.slice(0, nt);
  if ((order[0]?.c.alts.length ?? 0) > 1) docs.sort();
  let scores = new Float32Array(docs.length);
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i] as number;
    scores[i] = best[d] as number;
    best[d] = 0;
  }
  for (const { c } of order.slice(1)) {
    const add = new Float32Array(docs.length);
    for (const alt of c.alts) {
      const p = index.postings(alt.id);
      const f = idf(alt, p);
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
  const passing: number[] = [];
  const out: number[] = [];
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i] as number;
    if (keep(d)) {
      passing.push(d);
      out.push(scores[i] as number);
    }
  }
  return passing.length ? { passing, scores: out } : undefined;
}

/** The first position at or after `from` whose device is at least `target` (galloping search). */
function seek(p: Uint32Array, from: number, target: number): number {
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
function accumulate(
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
  return { passing, scores };
}

/**
 * Positions of the best `k` of `docs` (score high to low, then name order):
 * a full sort for few, a bounded heap for many, the same order either way.
 */
function topOrder(docs: number[], scores: number[], k: number): number[] {
  const before = (i: number, j: number) =>
    (scores[i] as number) > (scores[j] as number) ||
    scores[i] === scores[j] && (docs[i] as number) < (docs[j] as number);
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

function reasons(index: DeviceIndex, clauses: Clause[], doc: number): string[] {
  const out: string[] = [];
  for (const c of clauses) {
    let bestW = 0;
    let text = "";
    for (const alt of c.alts) {
      const bits = index.fieldsOf(alt.id, doc);
      const field = FIELD_WEIGHTS.find((f) => bits & f.bit);
      if (field && field.weight * alt.weight > bestW) {
        bestW = field.weight * alt.weight;
        text = `${c.label}${alt.note} (${field.label})`;
      }
    }
    if (text) out.push(text);
  }
  return out;
}
