/**
 * Reading the synonym table: the built-in `configs/synonyms.toml`, then a
 * facility's own file whose entries add to it.
 *
 * @module
 */
import { parse } from "smol-toml";
import type { SynonymData } from "./lexicon.ts";
import { readRegularText } from "../util/bounded_read.ts";
import { errorMessage } from "../util/errors.ts";

/** The table shipped beside the program. */
export const BUILTIN_SYNONYMS_URL = new URL("../../configs/synonyms.toml", import.meta.url);

/** The largest synonym file read. */
const MAX_BYTES = 1 << 20;

/** The tables of word lists a synonym file may hold. */
const TABLES = ["terms", "related", "places", "expand", "broader", "units", "intents"] as const;

/** An empty table, to merge files into. */
export function emptySynonyms(): SynonymData {
  return {
    terms: {},
    related: {},
    places: {},
    stopwords: [],
    expand: {},
    broader: {},
    units: {},
    intents: {},
  };
}

/** Parses one synonym file's text; throws a one-line error naming `where` when it is malformed. */
export function parseSynonyms(text: string, where: string): SynonymData {
  let raw: Record<string, unknown>;
  try {
    raw = parse(text) as Record<string, unknown>;
  } catch (e) {
    const why = errorMessage(e).split("\n")[0];
    throw new Error(`${where}: not valid TOML (${why}); fix the synonym file`);
  }
  const out = emptySynonyms();
  for (const table of TABLES) {
    const t = raw[table];
    if (t === undefined) continue;
    if (typeof t !== "object" || t === null || Array.isArray(t)) {
      throw new Error(`${where}: [${table}] must be a table of word lists`);
    }
    for (const [key, list] of Object.entries(t)) {
      if (!Array.isArray(list) || !list.every((x) => typeof x === "string")) {
        throw new Error(`${where}: ${table}.${key} must be a list of strings`);
      }
      out[table][key] = list as string[];
    }
  }
  const stop = (raw.stopwords as { words?: unknown } | undefined)?.words;
  if (stop !== undefined) {
    if (!Array.isArray(stop) || !stop.every((x) => typeof x === "string")) {
      throw new Error(`${where}: stopwords.words must be a list of strings`);
    }
    out.stopwords = stop as string[];
  }
  return out;
}

/** `extra` added to `base`: lists under an existing key are extended, new keys added. */
export function mergeSynonyms(base: SynonymData, extra: SynonymData): SynonymData {
  const out = emptySynonyms();
  for (const table of TABLES) {
    out[table] = { ...base[table] };
    for (const [k, list] of Object.entries(extra[table])) {
      out[table][k] = [...(out[table][k] ?? []), ...list];
    }
  }
  out.stopwords = [...base.stopwords, ...extra.stopwords];
  return out;
}

/** The built-in table, plus the facility's file when `sitePath` is given. */
export async function loadSynonyms(sitePath?: string): Promise<SynonymData> {
  const builtinPath = decodeURIComponent(BUILTIN_SYNONYMS_URL.pathname);
  const builtin = parseSynonyms(
    await readRegularText(builtinPath, MAX_BYTES, builtinPath),
    builtinPath,
  );
  if (sitePath === undefined || sitePath === "") return builtin;
  let text: string;
  try {
    text = await readRegularText(sitePath, MAX_BYTES, sitePath);
  } catch (e) {
    const why = errorMessage(e);
    throw new Error(
      `${sitePath}: cannot read the synonym file (${why}); check [index] synonyms_file`,
    );
  }
  return mergeSynonyms(builtin, parseSynonyms(text, sitePath));
}
