/**
 * A file system for appends that runs out of space: the real files, but
 * after `budget` bytes every write fails with ENOSPC, the way a full disk
 * fails (the bytes that fit are written first, so a torn line is real).
 *
 * @module
 */
import { type AppendFs, realAppendFs } from "../../src/util/whole_append.ts";

export class FullDisk implements AppendFs {
  /** Bytes written through it so far. */
  written = 0;
  /** Whether truncating (cutting back) fails too. */
  truncateFails = false;

  constructor(public budget: number) {}

  async open(path: string) {
    const real = await realAppendFs.open(path);
    return {
      size: () => real.size(),
      sync: () => real.sync(),
      close: () => real.close(),
      truncate: (len: number) =>
        this.truncateFails
          ? Promise.reject(new Error("Input/output error (os error 5)"))
          : real.truncate(len),
      write: async (p: Uint8Array) => {
        const room = Math.max(0, this.budget - this.written);
        if (room === 0) throw new Error("No space left on device (os error 28)");
        const n = await real.write(p.subarray(0, Math.min(room, p.length)));
        this.written += n;
        return n;
      },
    };
  }
}
