/**
 * Tool results too long for the model are cut the same way everywhere they
 * go: the model reads the head and tail (`truncateMiddle`), and events,
 * `ask --json` and `--stream-json` carry the same excerpt in a small
 * stand-in object, with the whole text saved to a file whose path the
 * stand-in names.
 *
 * @module
 */

/** Saves one result's whole text; resolves to its path, or undefined when it could not. */
export type SaveFullOutput = (tool: string, text: string) => Promise<string | undefined>;

/** What events and `--json` carry in place of a result the model saw cut. */
export interface TruncatedResult {
  /** Short top-level fields of the result (status, plan_hash, total…), kept as they were. */
  [field: string]: unknown;
  truncated: {
    /** Characters of the whole result (as JSON). */
    chars: number;
    /** Where the whole result is, or null when it could not be saved. */
    full_output: string | null;
  };
  /** The text the model read: head and tail of the JSON with a note of what was cut. */
  excerpt: string;
}

/** Top-level strings, numbers and booleans at most this long survive in the stand-in. */
const SCALAR_CHARS = 200;

/**
 * The stand-in for a result whose JSON (`json`) was cut to `excerpt` for the
 * model: short top-level scalars kept, the excerpt, and where the whole is.
 *
 * @example
 * ```ts
 * truncatedResult({ total: 3, devices: [] }, "…", "…", "/state/tool-output/x.json");
 * // { total: 3, truncated: { chars: 1, full_output: "/state/tool-output/x.json" }, excerpt: "…" }
 * ```
 */
export function truncatedResult(
  result: unknown,
  json: string,
  excerpt: string,
  fullOutput: string | undefined,
): TruncatedResult {
  const kept: Record<string, unknown> = {};
  if (result !== null && typeof result === "object" && !Array.isArray(result)) {
    for (const [k, v] of Object.entries(result)) {
      if (k === "truncated" || k === "excerpt") continue;
      if (typeof v === "number" || typeof v === "boolean") kept[k] = v;
      else if (typeof v === "string" && v.length <= SCALAR_CHARS) kept[k] = v;
    }
  }
  return {
    ...kept,
    truncated: { chars: json.length, full_output: fullOutput ?? null },
    excerpt,
  };
}

/** Files kept in the directory; older ones are removed when a new one is saved. */
const KEEP_FILES = 100;

/**
 * Saves whole results as `<dir>/<time>-<tool>-<random>.json` (mode 0600),
 * keeping the newest {@link KEEP_FILES}. A failure to save is not a failure
 * of the tool: the stand-in then says `full_output: null`.
 */
export function fileSaver(dir: string): SaveFullOutput {
  return async (tool, text) => {
    try {
      await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
      const stamp = new Date().toISOString().replace(/[:.]/g, "-");
      const name = `${stamp}-${tool.replace(/[^\w-]/g, "_")}-${
        crypto.randomUUID().slice(0, 8)
      }.json`;
      const path = `${dir}/${name}`;
      await Deno.writeTextFile(path, text, { mode: 0o600 });
      await prune(dir);
      return path;
    } catch {
      return undefined;
    }
  };
}

async function prune(dir: string): Promise<void> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (e.isFile && e.name.endsWith(".json")) names.push(e.name);
  }
  if (names.length <= KEEP_FILES) return;
  // Names start with an ISO time: sorted, the oldest come first.
  for (const n of names.sort().slice(0, names.length - KEEP_FILES)) {
    await Deno.remove(`${dir}/${n}`).catch(() => {});
  }
}
