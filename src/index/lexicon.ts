/**
 * The index's vocabulary: how a name, a description or an operator's words
 * become terms. Names, descriptions, properties and queries all pass through
 * the same {@link Lexicon}, so "steerer", "corrector" and the segment COR
 * meet as one term, "cell 04" in a description meets "cell 4" in a query, and
 * the number after a word is bound to it ("EVR 3" is `evr#3`, not any 3).
 *
 * @module
 */

/** The synonym table as data (see `configs/synonyms.toml`). */
export interface SynonymData {
  /** Concept → words and phrases that mean it. */
  terms: Record<string, string[]>;
  /** Query word → further concepts it accepts, more weakly. */
  related: Record<string, string[]>;
  /** Place concept → words that take a number as a place ("cell 4"). */
  places: Record<string, string[]>;
  stopwords: string[];
  /** A word that names several concepts at once ("qf" → quad, foc). */
  expand: Record<string, string[]>;
  /** Concept → the broader concepts it is a kind of ("und" → id). */
  broader: Record<string, string[]>;
  /** Concept → units that measure it ("current" → A, mA). */
  units: Record<string, string[]>;
  /** Intent (setpoint, readback, adjustable) → the query words that express it. */
  intents: Record<string, string[]>;
}

/** One term of analysed text. */
export interface Term {
  /** The indexed form: a concept, `#N` for a number, `cell=N` for a place, `c#N` a bound number. */
  term: string;
  /** The words of the text it came from, as written (lower case). */
  surface: string;
}

/** A form that is lower-case words separated by single spaces. */
const PLAIN = /^[a-z]+(?: [a-z]+)*$/;

/** Longest phrase, in words, that the table may hold. */
const MAX_PHRASE = 5;
/** Words before a number that it is bound to ("storage ring RF station 1": ring, rf, stn). */
const BIND = 3;
/** Marks a number's place in a template ("\uE0000" is the template's first number). */
export const NUMBER_MARK = "\uE000";

/**
 * Words and numbers, lower case; letters and digits split ("H01" → h, 01).
 * A compound `a-to-b` ("linac-to-booster") stays one word, so a line from the
 * linac to the booster is not a booster device.
 */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z]+(?:-to-[a-z]+(?:-[a-z]+)*)?|[0-9]+|\uE000[0-9]+/g) ?? [];
}

/** Number text as a term: leading zeros dropped ("04" → "#4"). */
export function numberTerm(digits: string): string {
  return `#${numberValue(digits)}`;
}

/** A number's canonical text ("04" → "4"); a template mark stays as it is. */
function numberValue(digits: string): string {
  return digits.startsWith(NUMBER_MARK) ? digits : String(Number.parseInt(digits, 10));
}

function isNumber(w: string): boolean {
  const c = w.charCodeAt(0);
  return (c >= 48 && c <= 57) || c === 0xe000;
}

/** The word without a plural ending, each way English makes one ("losses" → loss, "supplies" → supply). */
export function singulars(word: string): string[] {
  const out: string[] = [];
  if (word.length > 4 && word.endsWith("ies")) out.push(`${word.slice(0, -3)}y`);
  if (word.length > 4 && word.endsWith("es")) out.push(word.slice(0, -2));
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) out.push(word.slice(0, -1));
  return out;
}

/** The synonym table compiled for look-ups. */
/** Longest text whose analysis {@link Lexicon.analyseShort} remembers. */
const MEMO_CHARS = 64;

export class Lexicon {
  /** Phrase or word (space-joined) → concepts. */
  readonly #surface = new Map<string, string[]>();
  readonly #related = new Map<string, string[]>();
  /** Place word → place concept. */
  readonly #places = new Map<string, string>();
  readonly #stop: Set<string>;
  /** Concept → broader concepts. */
  readonly #broader = new Map<string, string[]>();
  /** Unit (lower case) → concept. */
  readonly #units = new Map<string, string>();
  /** Intent phrase → intent. */
  readonly #intents = new Map<string, string>();
  /** First word of a phrase → its most words. */
  readonly #phraseStarts = new Map<string, number>();
  /** Analysed text, for values that repeat (property values, tags). */
  readonly #memo = new Map<string, Term[]>();
  /** Every single word the table knows, for typo correction. */
  readonly knownWords: ReadonlySet<string>;
  /** Every concept the table defines. */
  readonly concepts: ReadonlySet<string>;

  constructor(data: SynonymData) {
    const known = new Set<string>();
    const concepts = new Set<string>();
    const define = (form: string, cs: string[]) => {
      // Most forms are already plain lower-case words: no need to split them again.
      const key = PLAIN.test(form) ? form : words(form).join(" ");
      if (key === "") return;
      // The first definition wins, so a site file cannot silently re-point a word.
      if (!this.#surface.has(key)) this.#surface.set(key, cs);
      const ws = key.split(" ");
      if (ws.length > 1) {
        const first = ws[0] ?? "";
        this.#phraseStarts.set(first, Math.max(this.#phraseStarts.get(first) ?? 0, ws.length));
      }
      for (const w of ws) known.add(w);
    };
    // An abbreviation of several concepts first: "bts" is a transfer line as well as the BTS.
    for (const [word, cs] of Object.entries(data.expand ?? {})) {
      const list = cs.map((c) => c.toLowerCase());
      for (const c of list) concepts.add(c);
      define(word, list);
    }
    for (const [concept, forms] of Object.entries(data.terms)) {
      const c = concept.toLowerCase();
      concepts.add(c);
      for (const form of [c, ...forms]) define(form, [c]);
    }
    for (const [word, cs] of Object.entries(data.related)) {
      const key = words(word).join(" ");
      if (key !== "") this.#related.set(key, cs.map((c) => c.toLowerCase()));
      known.add(key);
    }
    for (const [place, forms] of Object.entries(data.places)) {
      for (const form of [place, ...forms]) {
        this.#places.set(form.toLowerCase(), place.toLowerCase());
        known.add(form.toLowerCase());
      }
    }
    for (const [concept, up] of Object.entries(data.broader ?? {})) {
      this.#broader.set(concept.toLowerCase(), up.map((c) => c.toLowerCase()));
    }
    for (const [concept, units] of Object.entries(data.units ?? {})) {
      for (const u of units) this.#units.set(u.toLowerCase(), concept.toLowerCase());
    }
    for (const [intent, phrases] of Object.entries(data.intents ?? {})) {
      for (const p of phrases) {
        const key = words(p).join(" ");
        if (key === "") continue;
        this.#intents.set(key, intent.toLowerCase());
        for (const w of key.split(" ")) known.add(w);
      }
    }
    this.#stop = new Set(data.stopwords.map((w) => w.toLowerCase()));
    this.knownWords = known;
    this.concepts = concepts;
  }

  /** True for a word a question uses that says nothing about the device. */
  isStopword(word: string): boolean {
    return this.#stop.has(word);
  }

  /** The concept a single word or phrase stands for, if the table has it (the first of several). */
  concept(phrase: string): string | undefined {
    return this.#surface.get(phrase)?.[0];
  }

  /** Every concept a word or phrase stands for. */
  conceptsOf(phrase: string): readonly string[] {
    return this.#surface.get(phrase) ?? [];
  }

  /** The further concepts a query word accepts. */
  related(word: string): readonly string[] {
    return this.#related.get(word) ?? [];
  }

  /** The place concept of a word ("sector" → "cell"), if it is one. */
  place(word: string): string | undefined {
    return this.#places.get(word);
  }

  /** The concept a unit measures ("mA" → current), if the table knows it. */
  unitConcept(units: string): string | undefined {
    return this.#units.get(units.trim().toLowerCase());
  }

  /** The intent a word or phrase expresses ("actual" → readback). */
  intent(phrase: string): string | undefined {
    return this.#intents.get(phrase);
  }

  /** Words of the longest intent phrase starting at `ws[i]`, and its intent. */
  intentAt(ws: readonly string[], i: number): { n: number; intent: string } | undefined {
    for (let n = Math.min(4, ws.length - i); n >= 1; n--) {
      const intent = this.#intents.get(ws.slice(i, i + n).join(" "));
      if (intent !== undefined) return { n, intent };
    }
    return undefined;
  }

  /** True when the table knows this word or phrase (as a concept, place or related word). */
  knows(word: string): boolean {
    return this.#surface.has(word) || this.#places.has(word) || this.#related.has(word);
  }

  /** A word as the table spells it, plural endings dropped when that makes it known. */
  singular(word: string): string {
    if (this.knows(word)) return word;
    for (const s of singulars(word)) if (this.knows(s)) return s;
    return word;
  }

  /** The longest phrase of the table at `ws[i]`: its word count and concepts. */
  phraseAt(ws: readonly string[], i: number): { n: number; concepts: string[] } | undefined {
    const w = ws[i] ?? "";
    const starts = Math.max(
      this.#phraseStarts.get(w) ?? 0,
      ...singulars(w).map((s) => this.#phraseStarts.get(s) ?? 0),
    );
    const longest = Math.min(starts, MAX_PHRASE, ws.length - i);
    for (let n = longest; n >= 2; n--) {
      const part = ws.slice(i, i + n);
      // "beam losses", "transfer lines": plurals inside phrases and at their end.
      const c = this.#surface.get(part.join(" ")) ??
        this.#surface.get(part.map((x) => this.singular(x)).join(" ")) ??
        this.#lastSingular(part);
      if (c !== undefined) return { n, concepts: c };
    }
    return undefined;
  }

  #lastSingular(part: string[]): string[] | undefined {
    const last = part[part.length - 1] ?? "";
    for (const s of singulars(last)) {
      const c = this.#surface.get([...part.slice(0, -1), s].join(" "));
      if (c !== undefined) return c;
    }
    return undefined;
  }

  /**
   * Terms of already split words: phrases of the table become their concepts
   * (longest first), a place word and its number become `place=N`, a number
   * becomes `#N` and is bound to the words before it (`bpm#11`), stopwords
   * are dropped, other words stay as they are.
   */
  analyseWords(ws: readonly string[], name = false): Term[] {
    const out: Term[] = [];
    let bind: string[] = [];
    const emit = (c: string, surface: string) => {
      out.push({ term: c, surface });
      bind.push(c);
      for (const b of this.#broader.get(c) ?? []) out.push({ term: b, surface });
    };
    let i = 0;
    while (i < ws.length) {
      const w = ws[i] ?? "";
      if (isNumber(w)) {
        const n = numberValue(w);
        out.push({ term: `#${n}`, surface: w });
        for (const c of bind) out.push({ term: `${c}#${n}`, surface: w });
        bind = [];
        i++;
        continue;
      }
      const place = this.#places.get(w);
      const next = ws[i + 1];
      if (place !== undefined && next !== undefined && isNumber(next)) {
        out.push({ term: `${place}=${numberValue(next)}`, surface: `${w} ${next}` });
        bind = [];
        i += 2;
        continue;
      }
      const phrase = this.phraseAt(ws, i);
      if (phrase) {
        const surface = ws.slice(i, i + phrase.n).join(" ");
        for (const c of phrase.concepts) emit(c, surface);
        if (bind.length > BIND) bind = bind.slice(-BIND);
        i += phrase.n;
        continue;
      }
      i++;
      // A name holds no articles: its "A" (arc A3) is a word of the name.
      if (this.#stop.has(w) && !name) continue;
      const single = this.singular(w);
      for (const c of this.#surface.get(single) ?? [single]) emit(c, w);
      if (bind.length > BIND) bind = bind.slice(-BIND);
    }
    return out;
  }

  /** The broader concepts of a concept ("und" → id). */
  broaderOf(concept: string): readonly string[] {
    return this.#broader.get(concept) ?? [];
  }

  /** Terms of free text (a description, a property value, a query). */
  analyse(text: string): Term[] {
    return this.analyseWords(words(text));
  }

  /**
   * {@link analyse} remembered, for short texts that repeat (property values,
   * tags). Longer ones are not kept: a namespace whose every value differs
   * (a service's hostile or merely varied properties) filled the memo with
   * 100,000 analyses of 256 characters, about 300 MB held by the index.
   */
  analyseShort(text: string): Term[] {
    if (text.length > MEMO_CHARS) return this.analyse(text);
    let terms = this.#memo.get(text);
    if (terms === undefined) {
      if (this.#memo.size > 100_000) this.#memo.clear();
      terms = this.analyse(text);
      this.#memo.set(text, terms);
    }
    return terms;
  }
}
