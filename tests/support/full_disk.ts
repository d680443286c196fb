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

/** Whether a tmpfs can be mounted here (root in a sandbox that allows it). */
export async function canMount(): Promise<boolean> {
  const dir = await Deno.makeTempDir();
  try {
    const m = await new Deno.Command("mount", {
      args: ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir],
      stderr: "null",
      stdout: "null",
    }).output().catch(() => ({ success: false }));
    if (!m.success) return false;
    await new Deno.Command("umount", { args: [dir] }).output();
    return true;
  } finally {
    await Deno.remove(dir).catch(() => {});
  }
}

/** Writes into `dir` until the file system refuses: what is left is no space. */
export async function fill(dir: string): Promise<void> {
  using f = await Deno.open(`${dir}/filler`, { create: true, write: true });
  const block = new Uint8Array(4096);
  try {
    for (;;) await f.write(block);
  } catch {
    // full
  }
  // Small writes for the last partial block.
  try {
    for (;;) await f.write(new Uint8Array(1));
  } catch {
    // full
  }
}

/** Mounts a tmpfs of `size` at `dir` (created, mode 0700); returns what unmounts it. */
export async function mountTmpfs(dir: string, size: string): Promise<() => Promise<void>> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const m = await new Deno.Command("mount", {
    args: ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir],
  }).output();
  if (!m.success) {
    throw new Error(`cannot mount a tmpfs at ${dir}: ${new TextDecoder().decode(m.stderr)}`);
  }
  return async () => {
    await new Deno.Command("umount", { args: [dir] }).output();
  };
}
