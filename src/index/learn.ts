/**
 * A facility's own vocabulary, learned from what its services say: a word of
 * its names that the synonym table does not know ("qh", "cxh", "ivu") is
 * given the concepts its devices' descriptions, properties, tags and units
 * nearly always state ("quadrupole", "horizontal corrector", "undulator").
 * Nothing about a naming convention is assumed: only that a facility
 * describes most devices of a kind alike.
 *
 * @module
 */
import type { Lexicon } from "./lexicon.ts";

/** Devices a name word must be seen on before anything is learned of it. */
const MIN_SEEN = 5;
/** Share of those devices whose texts must state the concept. */
const MIN_SHARE = 0.95;
/** Devices of one word observed in full; past them, one in {@link STRIDE}. */
const FULL = 200;
const STRIDE = 64;
/** Devices observed in full before sampling one in {@link STRIDE}. */
const SAMPLE = 20_000;

/** What was learned: name words' concepts, and name words whose number is a place. */
export interface Learned {
  /** Name word → concepts ("qh" → quad). */
  words: Record<string, string[]>;
  /** Name word → place concept whose number it carries ("c" of `C03` → cell). */
  places: Record<string, string>;
}

/** Counts which told concepts accompany which unknown name words. */
export class Learner {
  #devices = 0;
  /** How many observed devices were told each concept (to leave out what all are told). */
  readonly #toldCount = new Map<string, number>();
  /** `word place` → [devices seen with both, devices where the numbers agree]. */
  readonly #placeAgree = new Map<string, [number, number]>();
  readonly #seen = new Map<string, number>();
  readonly #sampled = new Map<string, number>();
  readonly #pairs = new Map<string, Map<string, number>>();
  /** How often a name word is also said of its device (then it is a word, not an abbreviation). */
  readonly #self = new Map<string, number>();

  /**
   * Whether the next device is observed (counts it): a sample is enough to
   * learn from, the first devices then one in {@link STRIDE}.
   */
  wants(): boolean {
    this.#devices++;
    return this.#devices <= SAMPLE || this.#devices % STRIDE === 0;
  }

  /**
   * One device that {@link wants} said is observed: the fixed terms of its name, and those of everything else
   * said about it (description, properties, tags, units).
   */
  observe(
    nameTerms: readonly string[],
    told: readonly string[],
    nameNumbers: readonly string[] = [],
    places: readonly string[] = [],
  ): void {
    for (const c of new Set(told)) this.#toldCount.set(c, (this.#toldCount.get(c) ?? 0) + 1);
    this.#observePlaces(nameNumbers, places);
    let toldSet: Set<string> | undefined;
    for (const t of nameTerms) {
      if (t.length < 2 || !/^[a-z]+$/.test(t)) continue;
      const seen = (this.#seen.get(t) ?? 0) + 1;
      this.#seen.set(t, seen);
      if (seen > FULL && seen % STRIDE !== 0) continue;
      this.#sampled.set(t, (this.#sampled.get(t) ?? 0) + 1);
      toldSet ??= new Set(told);
      if (toldSet.has(t)) this.#self.set(t, (this.#self.get(t) ?? 0) + 1);
      let pairs = this.#pairs.get(t);
      if (pairs === undefined) this.#pairs.set(t, pairs = new Map());
      for (const c of toldSet) {
        if (c !== t && /^[a-z]/.test(c) && !c.includes("#")) pairs.set(c, (pairs.get(c) ?? 0) + 1);
      }
    }
  }

  /** Each `word#N` of the name against each `place=M` said of the device. */
  #observePlaces(nameNumbers: readonly string[], places: readonly string[]): void {
    for (const p of places) {
      const eq = p.indexOf("=");
      if (eq <= 0) continue;
      const place = p.slice(0, eq), m = p.slice(eq + 1);
      for (const b of nameNumbers) {
        const hash = b.indexOf("#");
        if (hash <= 0) continue;
        const key = `${b.slice(0, hash)} ${place}`;
        const seen = this.#placeAgree.get(key) ?? [0, 0];
        seen[0]++;
        if (b.slice(hash + 1) === m) seen[1]++;
        this.#placeAgree.set(key, seen);
      }
    }
  }

  /** What was learned (only of words the synonym table does not know as concepts). */
  learned(lexicon: Lexicon): Learned {
    const places: Record<string, string> = {};
    for (const [key, [seen, agree]] of this.#placeAgree) {
      const [word = "", place = ""] = key.split(" ");
      const known = lexicon.place(word) !== undefined || lexicon.concepts.has(word);
      if (seen >= MIN_SEEN && agree / seen >= MIN_SHARE && !known) {
        places[word] = place;
      }
    }
    const sampledAll = Math.min(this.#devices, SAMPLE) +
      Math.max(0, Math.floor((this.#devices - SAMPLE) / STRIDE));
    const everywhere = (c: string) => (this.#toldCount.get(c) ?? 0) > 0.5 * sampledAll;
    const words: Record<string, string[]> = {};
    for (const [t, pairs] of this.#pairs) {
      if (lexicon.concepts.has(t) || lexicon.knows(t) || lexicon.isStopword(t)) continue;
      const sampled = this.#sampled.get(t) ?? 0;
      if (sampled < MIN_SEEN || (this.#self.get(t) ?? 0) > sampled / 2) continue;
      const cs = [...pairs].filter(([c, k]) => k / sampled >= MIN_SHARE && !everywhere(c))
        .map(([c]) => c).sort();
      if (cs.length > 0 && cs.length <= 6) words[t] = cs;
    }
    return { words, places };
  }
}
