/**
 * Safety limits per device, from `configs/safety_limits.toml`: exact names
 * and `*`/`?` wildcards. The rules (README "Limits"):
 *
 * - A device with no entry cannot be written.
 * - `writable = false` on any entry that matches a device is final: no other
 *   entry, however specific, makes the device writable again. (No entry
 *   already means "not writable", so a deny exists only to close what a
 *   broader allow opens; to make an exception, narrow the allow.)
 * - Among the allowing entries that match, the most specific governs: an
 *   exact name, else the pattern with the most literal characters. Equally
 *   specific patterns are intersected (highest min, lowest max, smallest
 *   max_step and tolerance, common values), so file order never matters.
 * - An entry that makes a device writable bounds it: min, max and max_step,
 *   or values; `unbounded = true` opts out. An enum device takes only the
 *   labels its entry lists in `values` (preflight's `limits_complete`).
 * - A catch-all needs `catch_all = true`: a pattern whose wildcard spans the
 *   part of a name that tells devices apart — a wildcard in the first name
 *   segment (`*`, `*:SETPT`, `SR*`), nothing fixed after it (`SR:*`), or a
 *   `*` (or nothing but `?`) in the second, the family (`BTS:*T`, `SR:*:H01`).
 * - Names are seen as the control system writes them (`src/adapters/device_names.ts`):
 *   a name that is not canonical has no entry; an entry's name must itself
 *   be canonical. An EPICS field other than VAL (`X.DRVH`) is its own device:
 *   a deny of its record denies it too, and only an entry that names the
 *   field (`X.DRVH`, `X*.DRVH`) makes it writable.
 * - Two entries whose names differ only in ASCII letter case are a load
 *   error naming both lines, whatever the control system: one of them is a
 *   mistake, and which one was meant cannot be guessed.
 * - `readback` names the device that confirms a write to the device
 *   (exact-name entries only; never the device itself), or is false for
 *   "none"; `settle_s` is how long it may take (at most an hour). See
 *   `src/plan/readback.ts`.
 * - Names match with the control system's case sensitivity (EPICS and the
 *   simulator: exact; TANGO: ASCII letters fold). There is no Unicode case
 *   folding, and names are printable ASCII.
 *
 * @module
 */
import { parse, TomlError } from "smol-toml";
import { z } from "zod";
import { keyLines } from "./limits_lines.ts";
import { errorMessage } from "../util/errors.ts";
import { type DeviceNaming, namingFor, type NamingOptions } from "../adapters/device_names.ts";
import { isRefusal, readRegularText } from "../util/bounded_read.ts";
import { asciiUpper, codePoint, isCatchAll, isPattern, patternRegExp } from "./limits_names.ts";

export { asciiUpper, isCatchAll };

/** The longest settle time a limits entry may give: one hour, like `readback_timeout_s`. */
export const MAX_SETTLE_S = 3600;

export const LimitSchema = z.strictObject({
  min: z.number().optional().describe("lowest value that may be written"),
  max: z.number().optional().describe("highest value that may be written"),
  max_step: z.number().positive().optional().describe(
    "largest change in one write, from the live value",
  ),
  tolerance: z.number().nonnegative().optional().describe(
    "readback must be within this of the target",
  ),
  readback: z.union([z.string().min(1).max(256), z.literal(false)]).optional().describe(
    "the device that reads this one back (exact-name entries); false: it has none, do not look",
  ),
  settle_s: z.number().positive().max(MAX_SETTLE_S).optional().describe(
    "how long the readback may take to come within tolerance, in seconds",
  ),
  values: z.array(z.string()).optional().describe("allowed values of a string or enum device"),
  writable: z.boolean().optional().describe(
    "false forbids writes even when the device allows them; final, whatever else matches",
  ),
  unbounded: z.boolean().optional().describe(
    "true: the entry may make devices writable without min, max and max_step (or values)",
  ),
  catch_all: z.boolean().optional().describe(
    "true: the pattern may match everything or a whole subsystem (e.g. *, *:SETPT, SR:*)",
  ),
});
export type Limit = z.infer<typeof LimitSchema>;

const FileSchema = z.strictObject({ limits: z.record(z.string(), LimitSchema).default({}) });

export interface LimitEntry extends Limit {
  /** The name or pattern in the file that matched (patterns joined by "and" for a tie). */
  pattern: string;
}

/** A bad limits file; the CLI exits 2 on it. */
export class LimitsError extends Error {
  override name = "LimitsError";
}

/** How device names compare on a control system. */
export interface NameMatching {
  /** false: ASCII letters match either case (TANGO). Default true. */
  caseSensitive?: boolean;
  /**
   * The control system's naming: what is canonical, what a field is. With
   * it, a name that is not canonical has no entry, and entries must be
   * canonical names; without it (tests of the table alone), names are taken as given.
   */
  naming?: DeviceNaming;
}

/** The name matching of a control system, by its `kind`: only TANGO ignores case. */
export function nameMatchingFor(kind: string, opts: NamingOptions = {}): NameMatching {
  const naming = namingFor(kind, opts);
  return { caseSensitive: naming.caseSensitive, naming };
}

interface PatternRule {
  re: RegExp;
  literal: number;
  entry: LimitEntry;
}

export class LimitsTable {
  readonly #exact = new Map<string, LimitEntry>();
  readonly #patterns: PatternRule[] = [];
  readonly #fold: (s: string) => string;
  /** The control system's naming, when the table was built for one. */
  readonly naming?: DeviceNaming;

  /** Entries as parsed; `parseLimits` checks them first (bounds, collisions, names). */
  constructor(entries: Record<string, Limit>, matching: NameMatching = {}) {
    this.#fold = matching.caseSensitive === false ? asciiUpper : (s) => s;
    this.naming = matching.naming;
    for (const [pattern, limit] of Object.entries(entries)) {
      const entry = { ...limit, pattern };
      const key = this.#fold(pattern);
      if (isPattern(pattern)) {
        this.#patterns.push({
          re: patternRegExp(key),
          literal: pattern.replace(/[*?]/g, "").length,
          entry,
        });
      } else {
        const other = this.#exact.get(key);
        if (other) {
          throw new LimitsError(
            `limits."${other.pattern}" and limits."${pattern}" name one device`,
          );
        }
        this.#exact.set(key, entry);
      }
    }
  }

  /**
   * The entry that governs `device`, or undefined when it may not be
   * written. With a naming, the name is looked up as the control system
   * writes it (`X.VAL` as `X`, TANGO in lower case), and a name it refuses
   * (`pva://X`, `sys/tg_test/%31/ampli`) has no entry: an alias always gets
   * what its canonical name gets.
   */
  lookup(input: string): LimitEntry | undefined {
    const naming = this.naming;
    const c = naming?.canonical(input);
    if (c && !c.ok) return undefined;
    const device = c?.ok ? c.name : input;
    const field = naming?.fieldOf(device);
    const deny = this.#matching(device).filter((e) => e.writable === false);
    // A field's record denied is the field denied: DRVH, PROC or DISV of a closed device stay closed.
    if (field) deny.push(...this.#matching(field.record).filter((e) => e.writable === false));
    if (deny.length > 0) return combine([...new Set(deny)]);
    const name = this.#fold(device);
    // Only an entry that names the field opens it: `*` does not reach X.DRVH.
    const opens = (e: LimitEntry) => !field || naming?.fieldOf(e.pattern)?.field === field.field;
    const exact = this.#exact.get(name);
    if (exact && opens(exact)) return exact;
    const matched = this.#patterns.filter((p) => p.re.test(name) && opens(p.entry));
    if (matched.length === 0) return undefined;
    const top = Math.max(...matched.map((p) => p.literal));
    return combine(matched.filter((p) => p.literal === top).map((p) => p.entry));
  }

  /** Every entry whose name or pattern matches `device`. */
  #matching(device: string): LimitEntry[] {
    const name = this.#fold(device);
    const exact = this.#exact.get(name);
    const matched = this.#patterns.filter((p) => p.re.test(name)).map((p) => p.entry);
    return exact ? [exact, ...matched] : matched;
  }

  get size(): number {
    return this.#exact.size + this.#patterns.length;
  }
}

/** The intersection of equally specific entries (order does not matter); one entry as is. */
function combine(entries: LimitEntry[]): LimitEntry {
  if (entries.length === 1) return entries[0] as LimitEntry;
  const sorted = [...entries].sort((a, b) => (a.pattern < b.pattern ? -1 : 1));
  const nums = (k: "min" | "max" | "max_step" | "tolerance" | "settle_s") =>
    sorted.map((e) => e[k]).filter((v): v is number => v !== undefined);
  const pick = (xs: number[], f: (...v: number[]) => number) => xs.length ? f(...xs) : undefined;
  const lists = sorted.map((e) => e.values).filter((v): v is string[] => v !== undefined);
  const out: LimitEntry = { pattern: sorted.map((e) => `"${e.pattern}"`).join(" and ") };
  const min = pick(nums("min"), Math.max);
  const max = pick(nums("max"), Math.min);
  const maxStep = pick(nums("max_step"), Math.min);
  const tolerance = pick(nums("tolerance"), Math.min);
  if (min !== undefined) out.min = min;
  if (max !== undefined) out.max = max;
  if (maxStep !== undefined) out.max_step = maxStep;
  if (tolerance !== undefined) out.tolerance = tolerance;
  const settle = pick(nums("settle_s"), Math.min);
  if (settle !== undefined) out.settle_s = settle;
  // Only exact names may name a readback device; on patterns it can only say "none".
  if (sorted.some((e) => e.readback === false)) out.readback = false;
  if (lists.length) out.values = lists.reduce((a, b) => a.filter((v) => b.includes(v)));
  if (sorted.some((e) => e.writable === false)) out.writable = false;
  if (sorted.every((e) => e.unbounded === true)) out.unbounded = true;
  return out;
}

/** True when an allowing entry bounds what may be written: min, max and max_step, or values. */
export function isBounded(limit: Limit): boolean {
  return limit.values !== undefined ||
    (limit.min !== undefined && limit.max !== undefined && limit.max_step !== undefined);
}

/** Parses the limits file's text; `source` names it in messages. */
export function parseLimits(
  text: string,
  source: string,
  matching: NameMatching = {},
): LimitsTable {
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
    const [table, name, ...rest] = issue?.path.map(String) ?? [];
    const line = name === undefined ? undefined : keyLines(text).get(name);
    const where = table === "limits" && name !== undefined
      ? [`limits.${JSON.stringify(name)}`, ...rest].join(".")
      : issue?.path.map(String).join(".") || "top level";
    throw new LimitsError(
      `${source}${line === undefined ? "" : `:${line}`}: ${where}: ${issue?.message ?? "invalid"}`,
    );
  }
  checkEntries(result.data.limits, text, source, matching.naming);
  const naming = matching.naming;
  const entries = naming
    ? Object.fromEntries(
      Object.entries(result.data.limits).map(([name, limit]) => [
        name,
        // Read as the control system names it (X.VAL is read as X; TANGO in lower case).
        typeof limit.readback === "string"
          ? { ...limit, readback: canonicalOf(naming, limit.readback) }
          : limit,
      ]),
    )
    : result.data.limits;
  return new LimitsTable(entries, matching);
}

/**
 * The load-time rules: printable ASCII names, canonical for the control
 * system, no case collisions, bounds, no silent catch-all.
 */
function checkEntries(
  entries: Record<string, Limit>,
  text: string,
  source: string,
  naming?: DeviceNaming,
): void {
  const lines = keyLines(text);
  const at = (name: string) => {
    const line = lines.get(name);
    return line === undefined ? `${source}: ` : `${source}:${line}: `;
  };
  const seen = new Map<string, string>();
  for (const [name, limit] of Object.entries(entries)) {
    const q = `limits.${JSON.stringify(name)}`;
    const bad = [...name].find((c) => c < "!" || c > "~");
    if (name === "" || bad !== undefined) {
      const what = bad === undefined ? "is empty" : `holds ${codePoint(bad)}`;
      throw new LimitsError(`${at(name)}${q}: the name ${what}; device names are printable ASCII`);
    }
    const folded = asciiUpper(name);
    const other = seen.get(folded);
    if (other !== undefined) {
      throw new LimitsError(
        `${source}: limits.${JSON.stringify(other)} (line ${lines.get(other) ?? "?"}) and ${q} ` +
          `(line ${lines.get(name) ?? "?"}) differ only in letter case; keep one entry`,
      );
    }
    seen.set(folded, name);
    const named = naming?.entryProblem(name);
    if (named) throw new LimitsError(`${at(name)}${q}: ${named}`);
    const rb = readbackProblem(name, limit.readback, naming);
    if (rb) throw new LimitsError(`${at(name)}${q}.readback: ${rb}`);
    if (limit.min !== undefined && limit.max !== undefined && limit.min > limit.max) {
      throw new LimitsError(`${at(name)}${q}: min ${limit.min} is above max ${limit.max}`);
    }
    if (limit.writable === false) continue;
    if (!isBounded(limit) && limit.unbounded !== true) {
      const missing = (["min", "max", "max_step"] as const).filter((k) => limit[k] === undefined);
      throw new LimitsError(
        `${at(name)}${q} makes devices writable without ${missing.join(", ")}; ` +
          "give min, max and max_step (or values), or set unbounded = true on purpose",
      );
    }
    if (isPattern(name) && isCatchAll(name) && limit.catch_all !== true) {
      throw new LimitsError(
        `${at(name)}${q} makes every device it matches writable across the facility or a whole ` +
          "subsystem; fix more of the name, or set catch_all = true on purpose",
      );
    }
  }
}

/** Why an entry's `readback` cannot stand, if it cannot. */
function readbackProblem(
  name: string,
  readback: string | false | undefined,
  naming?: DeviceNaming,
): string | undefined {
  if (typeof readback !== "string") return undefined;
  const bad = [...readback].find((c) => c < "!" || c > "~");
  if (bad !== undefined) return `holds ${codePoint(bad)}; device names are printable ASCII`;
  if (isPattern(name)) {
    return `names one device, but the entry is a pattern matching many; give readback on ` +
      "exact-name entries (or false: no readback device)";
  }
  if (isPattern(readback)) return `"${readback}" is a pattern; name one device`;
  // The readback is read as the control system names it: an alias of the device is the device.
  const c = naming?.canonical(readback);
  if (c && !c.ok) return c.error;
  const canon = (n: string) => (naming ? canonicalOf(naming, n) : n);
  if (asciiUpper(canon(readback)) === asciiUpper(canon(name))) {
    return "a device cannot be its own readback (reading a setpoint back confirms nothing); " +
      "name its readback device, or false";
  }
  return undefined;
}

function canonicalOf(naming: DeviceNaming, name: string): string {
  const c = naming.canonical(name);
  return c.ok ? c.name : name;
}

/** The largest limits file read (ten thousand devices' limits are about 1 MiB). */
export const MAX_LIMITS_BYTES = 8 << 20;
/** What to do about a limits file that is no file or too large. */
export const LIMITS_FIX = "point [safety] limits_file at the limits file";

/**
 * Why the limits file at `path` bounds nothing, or undefined: any user of
 * the machine may write it (a copy left in /tmp, a `chmod 666`), so any of
 * them could widen what a plan may do. A group that may write it is the
 * facility's choice, and is allowed.
 */
export async function openToAll(path: string): Promise<string | undefined> {
  const mode = (await Deno.stat(path).catch(() => undefined))?.mode;
  if (mode === undefined || mode === null || (mode & 0o002) === 0) return undefined;
  return `${path}: any user may write it (mode ${(mode & 0o777).toString(8)}), so it bounds ` +
    "nothing; make it writable by its owner only (chmod o-w)";
}

/** Reads the limits file. A missing file means no device may be written. */
export async function loadLimits(path: string, matching: NameMatching = {}): Promise<LimitsTable> {
  let text: string;
  try {
    text = await readRegularText(path, MAX_LIMITS_BYTES, { fix: LIMITS_FIX });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return new LimitsTable({}, matching);
    if (isRefusal(e)) throw new LimitsError(e.message);
    throw new LimitsError(`${path}: cannot read the limits file (${errorMessage(e)})`);
  }
  const open = await openToAll(path);
  if (open) throw new LimitsError(open);
  return parseLimits(text, path, matching);
}
