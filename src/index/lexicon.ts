/**
 * The index's vocabulary: how a name, a description or an operator's words
 * become terms. Names, descriptions, properties and queries all pass through
 * the same {@link Lexicon}, so "steerer", "corrector" and the segment COR
 * meet as one term, and "cell 04" in a description meets "cell 4" in a query.
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
}

/** One term of analysed text. */
export interface Term {
  /** The indexed form: a concept, `#N` for a number, `cell=N` for a place. */
  term: string;
  /** The words of the text it came from, as written (lower case). */
  surface: string;
}

/** Longest phrase, in words, that the table may hold. */
const MAX_PHRASE = 5;

/** Words and numbers, lower case; letters and digits split ("H01" → h, 01). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z]+|[0-9]+/g) ?? [];
}

/** Number text as a term: leading zeros dropped ("04" → "#4"). */
export function numberTerm(digits: string): string {
  return `#${String(Number.parseInt(digits, 10))}`;
}

/** The synonym table compiled for look-ups. */
/** Longest text whose analysis {@link Lexicon.analyseShort} remembers. */
const MEMO_CHARS = 64;

export class Lexicon {
  /** Phrase or word (space-joined) → concept. */
  readonly #surface = new Map<string, string>();
  readonly #related = new Map<string, string[]>();
  /** Place word → place concept. */
  readonly #places = new Map<string, string>();
  readonly #stop: Set<string>;
  /** First word of a phrase → its most words. */
  readonly #phraseStarts = new Map<string, number>();
  /** Analysed text, for values that repeat (property values, tags). */
  readonly #memo = new Map<string, Term[]>();
  /** Every single word the table knows, for typo correction. */
  readonly knownWords: ReadonlySet<string>;

  constructor(data: SynonymData) {
    const known = new Set<string>();
    for (const [concept, forms] of Object.entries(data.terms)) {
      const c = concept.toLowerCase();
      for (const form of [c, ...forms]) {
        const key = words(form).join(" ");
        if (key === "") continue;
        // The first definition wins, so a site file cannot silently re-point a word.
        if (!this.#surface.has(key)) this.#surface.set(key, c);
        const ws = key.split(" ");
        if (ws.length > 1) {
          const first = ws[0] ?? "";
          this.#phraseStarts.set(first, Math.max(this.#phraseStarts.get(first) ?? 0, ws.length));
        }
        for (const w of words(form)) known.add(w);
      }
    }
    for (const [word, concepts] of Object.entries(data.related)) {
      const key = words(word).join(" ");
      if (key !== "") this.#related.set(key, concepts.map((c) => c.toLowerCase()));
      known.add(key);
    }
    for (const [place, forms] of Object.entries(data.places)) {
      for (const form of [place, ...forms]) {
        this.#places.set(form.toLowerCase(), place.toLowerCase());
        known.add(form.toLowerCase());
      }
    }
    this.#stop = new Set(data.stopwords.map((w) => w.toLowerCase()));
    this.knownWords = known;
  }

  /** True for a word a question uses that says nothing about the device. */
  isStopword(word: string): boolean {
    return this.#stop.has(word);
  }

  /** The concept a single word or phrase stands for, if the table has it. */
  concept(phrase: string): string | undefined {
    return this.#surface.get(phrase);
  }

  /** The further concepts a query word accepts. */
  related(word: string): readonly string[] {
    return this.#related.get(word) ?? [];
  }

  /** The place concept of a word ("sector" → "cell"), if it is one. */
  place(word: string): string | undefined {
    return this.#places.get(word);
  }

  /** A word as the table spells it, plural endings dropped when that makes it known. */
  singular(word: string): string {
    if (this.#surface.has(word) || this.#places.has(word)) return word;
    for (const end of ["es", "s"]) {
      if (word.length > end.length + 2 && word.endsWith(end)) {
        const stem = word.slice(0, -end.length);
        if (this.#surface.has(stem) || this.#places.has(stem)) return stem;
      }
    }
    return word;
  }

  /** A word without a plural ending when the table knows the rest ("losses" → "loss"), else itself. */
  #stem(word: string): string {
    for (const end of ["es", "s"]) {
      if (word.length > end.length + 2 && word.endsWith(end)) {
        const stem = word.slice(0, -end.length);
        if (this.#surface.has(stem) || this.#places.has(stem)) return stem;
      }
    }
    return word;
  }

  /**
   * Terms of already split words: phrases of the table become their concept
   * (longest first), a place word and its number become `place=N`, numbers
   * become `#N`, stopwords are dropped, other words stay as they are.
   */
  analyseWords(ws: readonly string[]): Term[] {
    const out: Term[] = [];
    let i = 0;
    while (i < ws.length) {
      const w = ws[i] ?? "";
      if (/^[0-9]/.test(w)) {
        out.push({ term: numberTerm(w), surface: w });
        i++;
        continue;
      }
      const place = this.#places.get(w);
      const next = ws[i + 1];
      if (place !== undefined && next !== undefined && /^[0-9]/.test(next)) {
        out.push({ term: `${place}=${Number.parseInt(next, 10)}`, surface: `${w} ${next}` });
        i += 2;
        continue;
      }
      let matched = 0;
      const starts = Math.max(
        this.#phraseStarts.get(w) ?? 0,
        this.#phraseStarts.get(this.#stem(w)) ?? 0,
      );
      const longest = Math.min(starts, MAX_PHRASE, ws.length - i);
      for (let n = longest; n >= 2; n--) {
        const part = ws.slice(i, i + n);
        const phrase = part.join(" ");
        // "beam losses" is the phrase "beam loss": plurals inside phrases too.
        const c = this.#surface.get(phrase) ??
          this.#surface.get(part.map((x) => this.#stem(x)).join(" "));
        if (c !== undefined) {
          out.push({ term: c, surface: phrase });
          matched = n;
          break;
        }
      }
      if (matched) {
        i += matched;
        continue;
      }
      i++;
      if (this.#stop.has(w)) continue;
      const single = this.singular(w);
      out.push({ term: this.#surface.get(single) ?? single, surface: w });
    }
    return out;
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
