/**
 * Seeded, hash-based randomness. Every random number in the simulator is a
 * pure function of (seed, key, time), so two reads at the same clock time
 * agree and any time range can be regenerated without storing anything.
 *
 * @module
 */

/** FNV-1a hash of a string, as an unsigned 32-bit integer. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Murmur3's finaliser: spreads every input bit over the whole word. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Hashes any number of numbers (integers up to 2^53, negative allowed) into
 * one unsigned 32-bit integer.
 */
export function hashNumbers(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    // Split into 32-bit halves: epoch milliseconds exceed 2^32.
    const lo = part >>> 0;
    const hi = Math.floor(part / 4294967296) >>> 0;
    h = fmix(h ^ lo) + 0x632be5ab;
    h = fmix(h ^ hi);
  }
  return h >>> 0;
}

/** Uniform in [0, 1) from the given parts. */
export function uniform(...parts: number[]): number {
  return hashNumbers(...parts) / 4294967296;
}

/** Standard normal deviate (Box–Muller) from the given parts. */
export function gauss(seed: number, key: number, t: number): number {
  const u1 = (hashNumbers(seed, key, t, 1) + 1) / 4294967297;
  const u2 = hashNumbers(seed, key, t, 2) / 4294967296;
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/**
 * Smooth random drift in [-1, 1]: cosine-interpolated random knots every
 * `periodMs`, plus a finer octave, so archived values wander like real
 * signals instead of jumping between samples.
 */
export function smooth(seed: number, key: number, t: number, periodMs: number): number {
  return 0.75 * knots(seed, key, t, periodMs) +
    0.25 * knots(seed, key ^ 0x5bd1e995, t, periodMs / 5);
}

function knots(seed: number, key: number, t: number, periodMs: number): number {
  const x = t / periodMs;
  const k = Math.floor(x);
  const f = x - k;
  const a = uniform(seed, key, k, 7) * 2 - 1;
  const b = uniform(seed, key, k + 1, 7) * 2 - 1;
  const w = (1 - Math.cos(Math.PI * f)) / 2;
  return a + (b - a) * w;
}

/** A small sequential PRNG (mulberry32) for generating one bucket's plan. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform in [min, max). */
  range(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** Integer in [min, max], inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new RangeError("Cannot pick from an empty list");
    return item;
  }
}
