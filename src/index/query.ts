/**
 * Informal, ranked search: an operator's question ("what are the last three
 * horizontal corrector current setpoints?", "ion pump pressure cell 4",
 * "actual septum current") is read into clauses, intents and a selection
 * (`query_parse.ts`). The answer is the devices that satisfy every clause —
 * or nothing, naming the clause nothing satisfied, with the nearest misses
 * apart — ranked by a score that weighs where each term was found (name,
 * property, tag, description) by its rarity; an intent keeps the devices of
 * that kind when there are any, and among one device's signals the setpoint
 * comes before its readback, then the rest.
 *
 * @module
 */
import { DeviceIndex, firstSegment, type IndexedDevice } from "./device_index.ts";
import { FIELD_WEIGHTS, Kind } from "./data.ts";
import {
  accumulate,
  conjunctive,
  type Found,
  KEEP_ALL,
  type Scratch,
  scratchOf,
  topOrder,
} from "./rank.ts";
import { type Clause, type Intent, type ParsedQuery, parseQuery } from "./query_parse.ts";
import { naturalCompare, stemOf } from "./order.ts";

export type { Intent } from "./query_parse.ts";

/** One ranked result, with why it matched. */
export interface RankedDevice extends IndexedDevice {
  score: number;
  /** Each query term it satisfied and where: `"steerer (name)"`, `"cell 4 (property)"`. */
  matched: string[];
}

/** A page of ranked results. */
export interface RankedPage {
  /** Devices that satisfy every clause of the query (after its intent and selection). */
  total: number;
  offset: number;
  devices: RankedDevice[];
  /** The query's terms as understood ("horizontal", "steerrer≈steerer", "cell 4", "evr 3"). */
  terms: string[];
  /** When nothing satisfies the query: the terms no device satisfies together with the rest. */
  unmatched: string[];
  /** What the operator wants of the devices: a setpoint, a readback, something adjustable. */
  intents: Intent[];
  /** "second", "last 3": which of the devices found were taken, in name order. */
  selection?: string;
  /** Everyday words no device is described by, set aside. */
  ignored: string[];
  /** When nothing satisfies the query: the devices nearest to it, apart from the answer. */
  suggestions: RankedDevice[];
  /** How the answer was reached when it is not the plain reading. */
  note?: string;
}

/** Filters and paging of an informal search. */
export interface InformalOptions {
  subsystem?: string;
  writable?: boolean;
  /** Property → glob its value must match (ChannelFinder properties). */
  properties?: Record<string, string>;
  /** Globs of tags a device must carry. */
  tags?: string[];
  offset?: number;
  limit?: number;
  /** Accept wider typos (used to find near families when nothing matches). */
  lenient?: boolean;
}

/** Near misses shown when nothing satisfies a query. */
const SUGGESTIONS = 5;

/** Ranked devices for free text. */
export function rankedSearch(
  index: DeviceIndex,
  text: string,
  opts: InformalOptions = {},
): RankedPage {
  const offset = Math.max(0, Math.floor(opts.offset ?? 0));
  const limit = Math.max(0, Math.floor(opts.limit ?? 50));
  const parsed = parseQuery(index, text, opts.lenient === true);
  const { clauses, intents } = parsed;
  const base = {
    offset,
    terms: clauses.map((c) => c.label),
    intents,
    ...(parsed.selection ? { selection: parsed.selection.label } : {}),
    ignored: parsed.ignored,
  };
  const keep = keeper(index, opts, intents);
  const empty = (unmatched: string[], note?: string, suggestions: RankedDevice[] = []) => ({
    ...base,
    total: 0,
    devices: [],
    unmatched,
    suggestions,
    ...(note ? { note } : {}),
  });
  if (clauses.length === 0) {
    if (intents.length === 0 && !hasFilters(opts)) {
      return empty([], "no word of the question names a device, a kind or a place");
    }
  }
  let note: string | undefined;
  let used = clauses;
  let found: Found | undefined = clauses.length
    ? conjunctive(index, clauses, keep)
    : everything(index, keep);
  if (found === undefined && clauses.some((c) => c.loose)) {
    // "cavity 3": the number is not bound to the word in any name; read them apart.
    used = clauses.map((c) => c.loose ?? c);
    found = conjunctive(index, used, keep);
    if (found) {
      const read = clauses.filter((c) => c.loose).map((c) => `"${c.label}"`).join(", ");
      note = `${read} read with the number anywhere in the name: no name numbers it so`;
    }
  }
  if (found === undefined) {
    // Only an empty answer needs the per-device working arrays (to count clauses per device).
    const near = nearMisses(index, clauses, scratchOf(index), keep);
    return empty(near.unmatched, near.note, near.suggestions);
  }
  let { passing, scores } = found;
  // An intent keeps the devices of its kind, when the answer holds any.
  let kinds = kindsOf(index, passing);
  for (const intent of intents) {
    if (intent === "adjustable") continue;
    const kept = byIntent(kinds, intent);
    if (kept === undefined) {
      note = joinNote(note, `none of these is a ${intent}; all are shown`);
      continue;
    }
    const p: number[] = [], sc: number[] = [];
    const k = new Uint8Array(kinds.length);
    for (let i = 0; i < passing.length; i++) {
      if (kinds[i] !== kept) continue;
      k[p.length] = kept;
      p.push(passing[i] as number);
      sc.push(scores[i] as number);
    }
    passing = p;
    scores = sc;
    kinds = k.subarray(0, p.length);
  }
  let order: number[];
  let total = passing.length;
  if (parsed.selection) {
    order = select(index, passing, parsed.selection);
    total = order.length;
    order = order.slice(offset, offset + limit);
    index.prefetch(order);
    const scoreOf = new Map(passing.map((d, i) => [d, scores[i] as number]));
    return {
      ...base,
      total,
      devices: order.map((d) => ranked(index, used, d, scoreOf.get(d) ?? 0)),
      unmatched: [],
      suggestions: [],
      ...(note ? { note } : {}),
    };
  }
  const top = topOrder(passing, scores, kinds, offset + limit);
  const page = top.slice(offset, offset + limit);
  index.prefetch(page.map((i) => passing[i] as number));
  const devices = page.map((i) => ranked(index, used, passing[i] as number, scores[i] as number));
  return { ...base, total, devices, unmatched: [], suggestions: [], ...(note ? { note } : {}) };
}

function joinNote(a: string | undefined, b: string): string {
  return a ? `${a}; ${b}` : b;
}

function hasFilters(opts: InformalOptions): boolean {
  return opts.writable !== undefined || !!opts.subsystem || !!opts.tags?.length ||
    Object.keys(opts.properties ?? {}).length > 0;
}

/** Whether device `doc` passes the filters (writability, subsystem, properties, tags, "adjustable"). */
function keeper(
  index: DeviceIndex,
  opts: InformalOptions,
  intents: Intent[],
): (doc: number) => boolean {
  const subsystem = opts.subsystem?.trim().toUpperCase();
  const writable = intents.includes("adjustable") ? true : opts.writable;
  const masks = index.filterMasks(opts.properties, opts.tags);
  if (writable === undefined && !subsystem && masks.length === 0) return KEEP_ALL;
  return (d: number) =>
    (writable === undefined || index.isWritable(d) === writable) &&
    (!subsystem || firstSegment(index.nameOf(d)) === subsystem) &&
    masks.every((m) => m[d] === 1);
}

/** Every device that passes the filters (a question of intent or filters alone). */
function everything(
  index: DeviceIndex,
  keep: (doc: number) => boolean,
): Found | undefined {
  const passing: number[] = [];
  for (let d = 0; d < index.size; d++) if (keep(d)) passing.push(d);
  return passing.length ? { passing, scores: passing.map(() => 0) } : undefined;
}

/** The {@link Kind} of each device found (among one device's signals: setpoint first). */
function kindsOf(index: DeviceIndex, passing: readonly number[]): Uint8Array {
  const out = new Uint8Array(passing.length);
  for (let i = 0; i < passing.length; i++) out[i] = index.kindOf(passing[i] as number);
  return out;
}

/**
 * The kind an intent keeps among devices of these kinds: setpoints; for a
 * readback, readbacks, else anything but setpoints and states. Undefined
 * when the devices hold none of it.
 */
function byIntent(kinds: Uint8Array, intent: Intent): number | undefined {
  const want = intent === "setpoint" ? [Kind.SETPOINT] : [Kind.READBACK, Kind.OTHER];
  for (const kind of want) if (kinds.includes(kind)) return kind;
  return undefined;
}

/** The selected devices (by their stem, in natural name order): "the second", "the last 3". */
function select(
  index: DeviceIndex,
  passing: number[],
  sel: NonNullable<ParsedQuery["selection"]>,
): number[] {
  const byStem = new Map<string, number[]>();
  for (const d of passing) {
    const stem = stemOf(index.nameOf(d));
    const list = byStem.get(stem);
    if (list) list.push(d);
    else byStem.set(stem, [d]);
  }
  const stems = [...byStem.keys()].sort(naturalCompare);
  const start = sel.from === "start"
    ? sel.at - 1
    : sel.count > 1 && sel.at === 1
    ? stems.length - sel.count
    : stems.length - sel.at - sel.count + 1;
  const chosen = stems.slice(Math.max(0, start), Math.max(0, start + sel.count));
  return chosen.flatMap((s) =>
    (byStem.get(s) ?? []).sort((a, b) => naturalCompare(index.nameOf(a), index.nameOf(b)))
  );
}

function ranked(index: DeviceIndex, clauses: Clause[], d: number, score: number): RankedDevice {
  return {
    ...index.device(d),
    score: Math.round(score * 100) / 100,
    matched: reasons(index, clauses, d),
  };
}

/**
 * When nothing satisfies every clause: the devices that satisfy the most
 * (near misses), and the clauses they miss — or the clause nothing holds at all.
 */
function nearMisses(
  index: DeviceIndex,
  clauses: Clause[],
  s: Scratch,
  keep: (doc: number) => boolean,
): { unmatched: string[]; suggestions: RankedDevice[]; note: string } {
  const none = clauses.filter((c) => c.alts.length === 0).map((c) => c.label);
  const live = clauses.filter((c) => c.alts.length > 0);
  const { passing, scores } = accumulate(index, live, s, keep);
  const top = topOrder(passing, scores, kindsOf(index, passing), SUGGESTIONS);
  const suggestions = top.map((i) =>
    ranked(index, live, passing[i] as number, scores[i] as number)
  );
  const first = passing[top[0] ?? -1];
  const missed = first === undefined
    ? live.map((c) => c.label)
    : live.filter((c) => !c.alts.some((a) => index.fieldsOf(a.id, first))).map((c) => c.label);
  const unmatched = [...none, ...missed];
  const said = (c: Clause) =>
    c.kind === "bound" || c.kind === "place"
      ? `nothing is ${c.label}`
      : `no device is called "${c.label}"`;
  const note = none.length
    ? clauses.filter((c) => c.alts.length === 0).map(said).join("; ")
    : `nothing that is ${
      live.filter((c) => !missed.includes(c.label)).map((c) => c.label).join(" and ") || "asked"
    } is also ${missed.join(" and ")}`;
  return { unmatched, suggestions: first === undefined ? [] : suggestions, note };
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
