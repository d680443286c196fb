/**
 * Keeps the head and the tail of a stream of text within a character budget,
 * so a script that prints a gigabyte costs a bounded amount of memory and the
 * reader still sees how the output began and how it ended.
 *
 * @module
 */

/** Collects text up to `max` characters: 60% head, 40% tail, and a count of the rest. */
export class OutputCap {
  readonly #headMax: number;
  readonly #tailMax: number;
  #head = "";
  #tail: string[] = [];
  #tailLen = 0;
  #total = 0;

  constructor(max: number) {
    this.#headMax = Math.floor(max * 0.6);
    this.#tailMax = max - this.#headMax;
  }

  push(s: string): void {
    this.#total += s.length;
    if (this.#head.length < this.#headMax) {
      const room = this.#headMax - this.#head.length;
      this.#head += s.slice(0, room);
      s = s.slice(room);
      if (!s) return;
    }
    if (this.#tailMax === 0) return;
    if (s.length >= this.#tailMax) {
      this.#tail = [s.slice(-this.#tailMax)];
      this.#tailLen = this.#tailMax;
      return;
    }
    this.#tail.push(s);
    this.#tailLen += s.length;
    while (this.#tailLen - (this.#tail[0]?.length ?? 0) >= this.#tailMax) {
      this.#tailLen -= this.#tail.shift()?.length ?? 0;
    }
  }

  /** The kept text, with a marker saying how much was left out. */
  text(): string {
    const tail = this.#tail.join("").slice(-this.#tailMax);
    const dropped = this.#total - this.#head.length - tail.length;
    if (dropped <= 0) return this.#head + tail;
    return `${this.#head}\n… [${dropped} characters left out] …\n${tail}`;
  }
}
