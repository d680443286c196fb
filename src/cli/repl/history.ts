/**
 * The REPL's persistent input history: one entry a line, newest last.
 *
 * @module
 */
import { isRefusal, readRegularText } from "../../util/bounded_read.ts";
import { makePrivateDir, writePrivateFile } from "../../util/private_files.ts";
import { errorMessage } from "../../util/errors.ts";

/** The largest history file read (it is rewritten at 400 bytes an entry). */
const MAX_HISTORY_BYTES = 16 << 20;

export class History {
  readonly #path: string;
  readonly #max: number;
  /** Off after the file could not be read or written: entries are kept in memory only. */
  #writing = true;
  /** Newest first, as node:readline wants it. */
  entries: string[] = [];

  constructor(path: string, max: number) {
    this.#path = path;
    this.#max = max;
  }

  /**
   * Reads the file. A file that cannot be used (a FIFO, a device, too
   * large, unreadable) is left alone: this session's entries are kept in
   * memory only, and the one line returned says why.
   */
  async load(): Promise<string | undefined> {
    try {
      const text = await readRegularText(this.#path, MAX_HISTORY_BYTES, {
        fix: "move it aside; this session's history is not saved",
      });
      const lines = text.split("\n").filter((l) => l.trim());
      this.entries = lines.slice(-this.#max).reverse();
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return undefined;
      this.#writing = false;
      return isRefusal(e)
        ? e.message
        : `${this.#path}: cannot read the history (${
          errorMessage(e)
        }); this session keeps no history`;
    }
    return undefined;
  }

  /**
   * Records an entry in memory and appends it to the file; rewrites the file
   * when it grows past the limit. A write that fails (a full disk) stops the
   * writing for this session; the one line returned says so.
   */
  async add(entry: string): Promise<string | undefined> {
    const line = entry.replaceAll("\n", " ").trim();
    if (!line || this.#max === 0) return undefined;
    this.entries = [line, ...this.entries.filter((e) => e !== line)].slice(0, this.#max);
    if (!this.#writing) return undefined;
    try {
      const dir = this.#path.slice(0, this.#path.lastIndexOf("/"));
      if (dir) await makePrivateDir(dir);
      await Deno.writeTextFile(this.#path, `${line}\n`, { append: true, mode: 0o600 });
      const size = (await Deno.stat(this.#path)).size;
      if (size > this.#max * 400) await this.#rewrite();
    } catch (e) {
      this.#writing = false;
      return `${this.#path}: the history could not be written (${
        errorMessage(e)
      }); it is kept in memory for this session`;
    }
    return undefined;
  }

  async #rewrite(): Promise<void> {
    const text = [...this.entries].reverse().join("\n") + "\n";
    await writePrivateFile(this.#path, text);
  }
}
