/**
 * The REPL's persistent input history: one entry a line, newest last.
 *
 * @module
 */

export class History {
  readonly #path: string;
  readonly #max: number;
  /** Newest first, as node:readline wants it. */
  entries: string[] = [];

  constructor(path: string, max: number) {
    this.#path = path;
    this.#max = max;
  }

  async load(): Promise<void> {
    try {
      const lines = (await Deno.readTextFile(this.#path)).split("\n").filter((l) => l.trim());
      this.entries = lines.slice(-this.#max).reverse();
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }

  /** Records an entry in memory and appends it to the file; rewrites the file when it grows past the limit. */
  async add(entry: string): Promise<void> {
    const line = entry.replaceAll("\n", " ").trim();
    if (!line || this.#max === 0) return;
    this.entries = [line, ...this.entries.filter((e) => e !== line)].slice(0, this.#max);
    const dir = this.#path.slice(0, this.#path.lastIndexOf("/"));
    if (dir) await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(this.#path, `${line}\n`, { append: true, mode: 0o600 });
    const size = (await Deno.stat(this.#path)).size;
    if (size > this.#max * 400) await this.#rewrite();
  }

  async #rewrite(): Promise<void> {
    const text = [...this.entries].reverse().join("\n") + "\n";
    await Deno.writeTextFile(`${this.#path}.tmp`, text, { mode: 0o600 });
    await Deno.rename(`${this.#path}.tmp`, this.#path);
  }
}
