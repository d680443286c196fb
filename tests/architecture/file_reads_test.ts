/**
 * Every file the program reads goes through the one bounded reader
 * (`src/util/bounded_read.ts`): a size cap, and no FIFO, device, socket or
 * directory. A direct `Deno.readFile`/`readTextFile` (or their `Sync` forms,
 * or `node:fs`'s) anywhere else in `src/` fails here, unless the reviewed
 * list below names it with its reason.
 *
 * @module
 */
import assert from "node:assert/strict";
import { SRC, tsFiles } from "./sources.ts";

/** A direct read of a file's content. */
const DIRECT_READ =
  /\bDeno\.(readFile|readTextFile)(Sync)?\s*\(|\b(readFileSync|readTextFileSync)\s*\(|\bfs\.(promises\.)?readFile\s*\(/;

/**
 * The reviewed exceptions, `file: count` with the reason. The sandbox
 * process may load only `src/sandbox/` (its grants), so it cannot use the
 * reader; what it reads is the program's own Pyodide assets, and its
 * `fs.readFile` is Pyodide's in-memory file system, not the host's.
 */
const ALLOWED: Record<string, { count: number; why: string }> = {
  "util/bounded_read.ts": {
    count: 0,
    why: "the reader (it opens with node:fs open, not readFile)",
  },
  "sandbox/worker.ts": {
    count: 1,
    why: "the sandbox process reads its memory snapshot; it cannot load src/util",
  },
  "sandbox/packages.ts": {
    count: 2,
    why: "the sandbox process reads pyodide-lock.json and wheels; it cannot load src/util",
  },
  "sandbox/work_out.ts": { count: 1, why: "Pyodide's in-memory FS.readFile, not a host file" },
};

Deno.test("no module of src/ reads a file except through the bounded reader (and the reviewed list)", async () => {
  const found: Record<string, string[]> = {};
  for (const file of await tsFiles()) {
    const text = await Deno.readTextFile(new URL(file, SRC));
    for (const [i, line] of text.split("\n").entries()) {
      const code = line.trim();
      // Comments show reads in examples; they read nothing.
      if (code.startsWith("*") || code.startsWith("//") || code.startsWith("/*")) continue;
      if (DIRECT_READ.test(code)) (found[file] ??= []).push(`${file}:${i + 1}: ${code}`);
    }
  }
  const unexpected: string[] = [];
  for (const [file, lines] of Object.entries(found)) {
    if (lines.length !== (ALLOWED[file]?.count ?? 0)) unexpected.push(...lines);
  }
  assert.deepEqual(
    unexpected,
    [],
    "read files with readRegularText/readRegularBytes (src/util/bounded_read.ts), " +
      "or review the exception and add it to ALLOWED with its reason",
  );
  // Every exception is still needed: a stale entry hides the next direct read.
  for (const [file, { count }] of Object.entries(ALLOWED)) {
    assert.equal(found[file]?.length ?? 0, count, `${file}: ALLOWED says ${count}`);
  }
});
