/**
 * The device index's memory layout: columns and one flat postings array, so
 * a 10^6-name index is a few typed arrays and string lists (cheap to keep,
 * to write to disk and to load back).
 *
 * @module
 */

/** Where in a device a term was found (bits of a posting). */
export const Field = { NAME: 1, PROP: 2, TAG: 4, DESC: 8 } as const;

/** Weight of a match in each field, best first. */
export const FIELD_WEIGHTS: readonly { bit: number; weight: number; label: string }[] = [
  { bit: Field.NAME, weight: 3, label: "name" },
  { bit: Field.PROP, weight: 2, label: "property" },
  { bit: Field.TAG, weight: 1.5, label: "tag" },
  { bit: Field.DESC, weight: 1, label: "description" },
];

/**
 * What a device's signal is, as its name, description, properties and
 * writability say: an operator's "actual" keeps readbacks, "requested"
 * setpoints; among one device's signals the setpoint comes first.
 */
export const Kind = { SETPOINT: 0, READBACK: 1, OTHER: 2, STATE: 3 } as const;

/** Bits of a posting that hold the fields; the document id is above them. */
export const FIELD_BITS = 4;

/** The most devices one index holds (document ids share 32 bits with the field bits). */
export const MAX_DOCS = 2 ** (32 - FIELD_BITS);

/** Prefix of the raw name-segment terms (upper case) that patterns use. */
export const SEGMENT = "s:";
/** Prefix of raw property terms, `p:key=VALUE`. */
export const PROPERTY = "p:";
/** Prefix of raw tag terms, `t:TAG`. */
export const TAG = "t:";

/**
 * A raw property key, value or tag as a term's text: its line breaks made
 * spaces (the cache keeps terms one a line; a service may send any text).
 */
export function rawText(text: string): string {
  return /[\n\r]/.test(text) ? text.replace(/[\n\r]/g, " ") : text;
}

/** Characters that separate the segments of a device name. */
export const SEPARATORS = /[:._/-]/;

/**
 * Everything the index holds. Documents are numbered in name order, so a
 * pattern's matches come out sorted and pages are stable.
 */
export interface IndexData {
  /** The source the index was built from. */
  sourceId: string;
  /** Digest of the synonym table the terms were made with. */
  lexiconDigest: string;
  /** When the index was built, ms since the epoch. */
  builtAt: number;
  names: TextColumn;
  descriptions: TextColumn;
  /** Distinct units; `unitsOf[doc]` points into it. */
  unitsTable: string[];
  unitsOf: Uint32Array;
  /** Bit 0: the device can be set; bits 1–2: its signal's {@link Kind}. */
  writable: Uint8Array;
  /** Term of each term id, sorted, so ids can be found by binary search. */
  terms: string[];
  /** Postings of term id t: `postings[starts[t] .. starts[t + 1])`, sorted. */
  starts: Uint32Array;
  /** `doc << FIELD_BITS | fields`. */
  postings: Uint32Array;
  /** Words of the facility's names and the concepts its own texts taught for them. */
  learned?: Record<string, string[]>;
  /** Words of the facility's names whose number is a place ("c" of `C03` → cell). */
  learnedPlaces?: Record<string, string>;
}

/**
 * A column of short texts held as one string and the end of each item: a
 * million names cost their characters, not a million string objects.
 */
export class TextColumn {
  private constructor(readonly text: string, readonly ends: Uint32Array) {}

  /** A column of `items`; an item may not hold a line break. */
  static from(items: readonly string[]): TextColumn {
    return TextColumn.parse(items.join("\n"), items.length);
  }

  /** A column from its text (items separated by line breaks); `count` items expected. */
  static parse(text: string, count: number): TextColumn {
    const ends = new Uint32Array(count);
    let at = 0;
    for (let i = 0; i < count; i++) {
      const nl = text.indexOf("\n", at);
      const end = nl < 0 ? text.length : nl;
      ends[i] = end;
      at = end + 1;
    }
    if (count > 0 && at !== text.length + 1) {
      throw new RangeError(`text column: ${count} items expected, the text holds more`);
    }
    return new TextColumn(text, ends);
  }

  get length(): number {
    return this.ends.length;
  }

  /** Item `i` ("" past the end). */
  at(i: number): string {
    if (i < 0 || i >= this.ends.length) return "";
    const start = i === 0 ? 0 : (this.ends[i - 1] ?? 0) + 1;
    return this.text.slice(start, this.ends[i]);
  }

  *[Symbol.iterator](): Iterator<string> {
    for (let i = 0; i < this.ends.length; i++) yield this.at(i);
  }
}
