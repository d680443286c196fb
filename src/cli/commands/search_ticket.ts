/**
 * What a cached search from the command line needs to know without loading
 * and validating the whole configuration: written by a search that did load
 * it (the configuration file's path and hash, the state directory, the
 * index's source, cache file, refresh interval and synonym file), and
 * trusted only while everything it was made from is unchanged.
 *
 * @module
 */
import { VERSION } from "../../version.ts";
import type { SynonymData } from "../../index/lexicon.ts";
import { sha256Hex } from "../../util/hash.ts";
import { readPlainTextSync } from "../../util/glance_read.ts";

/** Where the ticket is kept, in the state directory. */
export function ticketPath(stateDir: string): string {
  return `${stateDir}/index/search-ticket.json`;
}

/** The facility description the simulator builds its namespace from, as a file. */
export const FACILITY_FILE = decodeURIComponent(
  new URL("../../../configs/devices/facility.json", import.meta.url).pathname,
);

/**
 * A digest of the facility description the simulator builds its namespace
 * from (a module of the program, embedded when compiled and not always
 * readable as a file): when it changes, so may the namespace.
 */
export async function facilityDigest(): Promise<string> {
  const json = await import("../../../configs/devices/facility.json", { with: { type: "json" } });
  return await sha256Hex(JSON.stringify(json.default));
}

/** A file's identity for the ticket: its path, modification time and size. */
export type Stamp = [path: string, mtimeMs: number, size: number];

/** What a cached search needs, as the last full search found it. */
export interface SearchTicket {
  version: string;
  /** The configuration file read (undefined: the built-in defaults). */
  config?: string;
  /** SHA-256 of its bytes. */
  configHash: string;
  home: string;
  stateDir: string;
  source: string;
  cacheFile: string;
  refreshMs: number;
  /** The synonym table the index was made with (built-in and the facility's, merged). */
  synonyms: SynonymData;
  /** Its digest, as the cache file names it. */
  lexiconDigest: string;
  color: "auto" | "always" | "never";
  /** Files whose change makes the ticket stale: the synonym files. */
  stamps: Stamp[];
  /** For the simulator: the digest of its facility description ({@link facilityDigest}). */
  facility?: string;
  /** And its file's stamp, when the file could be read (checked first: no digest needed). */
  facilityStamp?: Stamp;
}

/** The stamp of a file now, or undefined when it cannot be read. */
export function stampOf(path: string): Stamp | undefined {
  try {
    const st = Deno.statSync(path);
    return [path, st.mtime?.getTime() ?? 0, st.size];
  } catch {
    return undefined;
  }
}

/** Writes the ticket (a failure only costs the next search its shortcut). */
export async function writeTicket(t: Omit<SearchTicket, "version">): Promise<void> {
  try {
    const path = ticketPath(t.stateDir);
    const tmp = `${path}.${crypto.randomUUID()}.tmp`;
    await Deno.writeTextFile(tmp, JSON.stringify({ version: VERSION, ...t }), { mode: 0o600 });
    await Deno.rename(tmp, path);
  } catch {
    // A read-only state directory: searches take the long way.
  }
}

const str = (v: unknown): v is string => typeof v === "string";
const isStamp = (s: unknown): s is Stamp =>
  Array.isArray(s) && str(s[0]) && typeof s[1] === "number" && typeof s[2] === "number";

/**
 * Whether the simulator's facility description is the one the ticket was
 * made with: by its file's stamp when the file can be read, else by digest.
 */
export async function sameFacility(t: SearchTicket): Promise<boolean> {
  if (t.facility === undefined) return true;
  if (t.facilityStamp) {
    const now = stampOf(t.facilityStamp[0]);
    if (now && now[1] === t.facilityStamp[1] && now[2] === t.facilityStamp[2]) return true;
  }
  return t.facility === await facilityDigest();
}
const isTable = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);
const strings = (v: unknown) => Array.isArray(v) && v.every(str);
const lists = (v: unknown) => isTable(v) && Object.values(v).every(strings);

/** A synonym table as the ticket holds it: every table a map of word lists. */
function isSynonyms(v: unknown): v is SynonymData {
  return isTable(v) && strings(v.stopwords) &&
    ["terms", "related", "places", "expand", "broader", "units", "intents"].every((k) =>
      lists(v[k])
    );
}

/**
 * The ticket in `stateDir`, or undefined when there is none or it is not of
 * this program (read synchronously: the command line waits for it anyway).
 */
export function readTicket(stateDir: string): SearchTicket | undefined {
  let t: Record<string, unknown>;
  try {
    t = JSON.parse(readPlainTextSync(ticketPath(stateDir), 1 << 16));
  } catch {
    return undefined;
  }
  const stamps = t.stamps;
  const ok = t !== null && typeof t === "object" && t.version === VERSION &&
    (t.config === undefined || str(t.config)) && str(t.configHash) && str(t.home) &&
    str(t.stateDir) && str(t.source) && str(t.cacheFile) && typeof t.refreshMs === "number" &&
    isSynonyms(t.synonyms) && str(t.lexiconDigest) &&
    (t.color === "auto" || t.color === "always" || t.color === "never") &&
    (t.facility === undefined || str(t.facility)) &&
    (t.facilityStamp === undefined || isStamp(t.facilityStamp)) && Array.isArray(stamps) &&
    stamps.every(isStamp);
  return ok ? t as unknown as SearchTicket : undefined;
}
