/**
 * Safety limits per device, from `configs/safety_limits.toml`: exact names
 * and `*`/`?` wildcards. A device with no entry cannot be written. The most
 * specific entry wins: an exact name, else the pattern with the most literal
 * characters.
 *
 * @module
 */
import { parse, TomlError } from "smol-toml";
import { z } from "zod";
import { wildcardToRegExp } from "../adapters/adapter.ts";

export const LimitSchema = z.strictObject({
  min: z.number().optional().describe("lowest value that may be written"),
  max: z.number().optional().describe("highest value that may be written"),
  max_step: z.number().positive().optional().describe(
    "largest change in one write, from the live value",
  ),
  tolerance: z.number().nonnegative().optional().describe(
    "readback must be within this of the target",
  ),
  values: z.array(z.string()).optional().describe("allowed values of a string or enum device"),
  writable: z.boolean().optional().describe(
    "false forbids writes even when the device allows them",
  ),
});
export type Limit = z.infer<typeof LimitSchema>;

const FileSchema = z.strictObject({ limits: z.record(z.string(), LimitSchema).default({}) });

export interface LimitEntry extends Limit {
  /** The name or pattern in the file that matched. */
  pattern: string;
}

/** A bad limits file; the CLI exits 2 on it. */
export class LimitsError extends Error {
  override name = "LimitsError";
}

export class LimitsTable {
  readonly #exact = new Map<string, LimitEntry>();
  readonly #patterns: { re: RegExp; literal: number; entry: LimitEntry }[] = [];

  constructor(entries: Record<string, Limit>) {
    for (const [pattern, limit] of Object.entries(entries)) {
      const entry = { ...limit, pattern };
      if (/[*?]/.test(pattern)) {
        this.#patterns.push({
          re: wildcardToRegExp(pattern),
          literal: pattern.replace(/[*?]/g, "").length,
          entry,
        });
      } else {
        this.#exact.set(pattern.toUpperCase(), entry);
      }
    }
    this.#patterns.sort((a, b) => b.literal - a.literal);
  }

  /** The entry that governs `device`, or undefined when it may not be written. */
  lookup(device: string): LimitEntry | undefined {
    return this.#exact.get(device.toUpperCase()) ??
      this.#patterns.find((p) => p.re.test(device))?.entry;
  }

  get size(): number {
    return this.#exact.size + this.#patterns.length;
  }
}

/** Parses the limits file's text; `source` names it in messages. */
export function parseLimits(text: string, source: string): LimitsTable {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (e) {
    if (e instanceof TomlError) {
      throw new LimitsError(
        `${source}:${e.line}:${e.column}: invalid TOML: ${e.message.split("\n")[0]}`,
      );
    }
    throw e;
  }
  const result = FileSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue?.path.map(String).join(".") || "top level";
    throw new LimitsError(`${source}: ${where}: ${issue?.message ?? "invalid"}`);
  }
  for (const [pattern, limit] of Object.entries(result.data.limits)) {
    if (limit.min !== undefined && limit.max !== undefined && limit.min > limit.max) {
      throw new LimitsError(
        `${source}: limits."${pattern}": min ${limit.min} is above max ${limit.max}`,
      );
    }
  }
  return new LimitsTable(result.data.limits);
}

/** Reads the limits file. A missing file means no device may be written. */
export async function loadLimits(path: string): Promise<LimitsTable> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return new LimitsTable({});
    throw new LimitsError(`${path}: cannot read the limits file (${(e as Error).message})`);
  }
  return parseLimits(text, path);
}
