/**
 * Layered configuration: a facility's config names only what it changes and
 * inherits the rest. Every config file has a parent — the one its `extends`
 * names (a site config), else the shipped `configs/default.toml` — and the
 * chain is merged from the shipped defaults up: tables key by key, any other
 * value (a list, a string) replaced whole. Each layer's relative paths are
 * resolved against its own directory before merging, so the shipped limits,
 * `AGENT.md` and scripts stay where they are whoever inherits them. Every
 * value remembers where it was set (`file:line`), for `config show` and for
 * messages about it.
 *
 * This module reads TOML only (no schema), so the early prompt's first look
 * at the config (`glance.ts`) can follow the chain too.
 *
 * @module
 */
import { parse, TomlError } from "smol-toml";
import { sha256Hex } from "../util/hash.ts";
import { normalize, resolveConfigPath } from "./paths.ts";

/** A parsed TOML table. */
export type Table = Record<string, unknown>;

/** One config file of the chain. */
export interface Layer {
  /** Absolute path. */
  path: string;
  /** The file as the operator named it (or its absolute path), for messages. */
  shown: string;
  text: string;
  /** The file's TOML as written, without `extends`. */
  raw: Table;
}

/** A problem with the chain itself (a file that is not there, a loop); one line. */
export class LayerError extends Error {
  override name = "LayerError";
}

/**
 * Reads a file's text; undefined when it does not exist (other problems
 * throw). `via` is the `extends` that names it (`file:line: extends`), for messages.
 */
export type ReadText = (path: string, shown: string, via?: string) => Promise<string | undefined>;

/** Where the chain starts: the operator's file, else the shipped defaults. */
export interface ChainStart {
  path: string;
  shown: string;
  /** Named by the operator: it must exist. */
  explicit: boolean;
}

/** Chains longer than this are refused (a site config of a site config of …). */
export const MAX_LAYERS = 8;

export const isTable = (v: unknown): v is Table =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** Parses TOML; a syntax error is one line with the file, line and column. */
export function parseToml(text: string, shown: string): Table {
  try {
    return parse(text);
  } catch (e) {
    if (e instanceof TomlError) {
      const first = e.message.split("\n")[0] ?? "";
      throw new LayerError(`${shown}:${e.line}:${e.column}: invalid TOML: ${first}`);
    }
    throw e;
  }
}

const dirOf = (path: string) => path.slice(0, path.lastIndexOf("/")) || "/";

/**
 * The chain of config files, the shipped defaults first and `start` last.
 * A file's parent is what its `extends` names (relative to the file), else
 * `defaults`; the shipped defaults have none. Without any file (none named,
 * the shipped one absent) the chain is empty and the built-in defaults apply.
 */
export async function readChain(
  start: ChainStart | undefined,
  defaults: string | undefined,
  read: ReadText,
  home: string,
): Promise<Layer[]> {
  const chain: Layer[] = [];
  let next: (ChainStart & { via?: string }) | undefined = start ??
    (defaults ? { path: defaults, shown: defaults, explicit: false } : undefined);
  while (next) {
    const path = normalize(next.path);
    const text = await read(path, next.shown, next.via);
    if (text === undefined) {
      if (next.via) {
        throw new LayerError(`${next.via}: ${path} does not exist; name an existing config file`);
      }
      if (next.explicit) {
        throw new LayerError(
          `${next.shown}: config file not found; pass an existing file to --config`,
        );
      }
      break; // the shipped defaults are not installed: the built-in ones apply
    }
    const raw = parseToml(text, next.shown);
    const parent = raw.extends;
    delete raw.extends;
    chain.unshift({ path, shown: next.shown, text, raw });
    if (defaults !== undefined && path === normalize(defaults)) break;
    const line = keyLines(text).get("extends");
    const at = `${next.shown}${line ? `:${line}` : ""}`;
    if (parent !== undefined && typeof parent !== "string") {
      throw new LayerError(`${at}: key extends: expected the path of a config file`);
    }
    if (parent !== undefined && parent.trim() !== "") {
      const target = resolveConfigPath(parent.trim(), dirOf(path), home);
      next = { path: target, shown: parent.trim(), explicit: true, via: `${at}: extends` };
    } else {
      next = defaults === undefined
        ? undefined
        : { path: defaults, shown: defaults, explicit: false };
    }
    if (next && chain.some((l) => l.path === normalize(next!.path))) {
      throw new LayerError(
        `${at}: extends ${next.shown}, which is already in the chain (${
          chain.map((l) => l.shown).join(" ← ")
        }); break the loop`,
      );
    }
    if (next && chain.length >= MAX_LAYERS) {
      throw new LayerError(`${at}: more than ${MAX_LAYERS} config files extend each other`);
    }
  }
  return chain;
}

/** Keys whose values are paths: `dir`, `*_dir`, `*_dirs`, `*_file`, `*_md` (as in paths.ts). */
const PATH_KEY = /^(dir|.+_dir|.+_dirs|.+_file|.+_md)$/;

/** A `~user/…` path: another user's home, which no layer may name (it would resolve elsewhere). */
class OtherHome extends Error {
  key = "";
  constructor(readonly path: string) {
    super(path);
  }
}

/** A relative path made absolute against `dir`; `~`, `~/…` and "" stay as they are. */
function absolute(p: unknown, dir: string): unknown {
  if (typeof p === "string" && /^~[^/]/.test(p)) throw new OtherHome(p);
  if (typeof p !== "string" || p.trim() === "" || p.startsWith("/") || p.startsWith("~")) return p;
  return normalize(`${dir}/${p}`);
}

/** A program path (with a slash) made absolute; a bare name is left to PATH. */
function program(command: unknown, dir: string): unknown {
  if (!Array.isArray(command) || typeof command[0] !== "string") return command;
  const [first, ...rest] = command;
  return first.includes("/") ? [absolute(first, dir), ...rest] : command;
}

/**
 * A layer's TOML with every relative path made absolute against the layer's
 * own directory: path keys in any table (and in lists of tables), each
 * display's `file`, and the programs of `[launchers]` and `[[hooks.*]]`.
 */
export function resolveLayerPaths(raw: Table, dir: string): Table {
  const walk = (t: Table, table: string[]): Table => {
    const out: Table = {};
    for (const [key, v] of Object.entries(t)) {
      const here = [...table, key];
      try {
        out[key] = value(v, here);
      } catch (e) {
        if (e instanceof OtherHome && !e.key) e.key = here.join(".");
        throw e;
      }
    }
    return out;
  };
  const value = (v: unknown, here: string[]): unknown => {
    const [table, key] = [here.slice(0, -1), here.at(-1) as string];
    if (isTable(v)) {
      return table[0] === "launchers" && table.length === 1
        ? { ...walk(v, here), ...("command" in v ? { command: program(v.command, dir) } : {}) }
        : walk(v, here);
    }
    if (Array.isArray(v) && v.some(isTable)) {
      return v.map((x) => isTable(x) ? entry(walk(x, here), here) : x);
    }
    if (PATH_KEY.test(key)) {
      return Array.isArray(v) ? v.map((p) => absolute(p, dir)) : absolute(v, dir);
    }
    return v;
  };
  const entry = (x: Table, at: string[]): Table => {
    const name = at.join(".");
    if (name === "displays" && "file" in x) return { ...x, file: absolute(x.file, dir) };
    if (name.startsWith("hooks.") && "command" in x) {
      return { ...x, command: program(x.command, dir) };
    }
    return x;
  };
  return walk(raw, []);
}

/** The merged TOML of a chain, and where each value was set (`file:line`, by dotted key). */
export interface Merged {
  raw: Table;
  origins: Map<string, string>;
}

/**
 * Merges a chain, the shipped defaults first: a table merges key by key with
 * the one below it; any other value (a list, a list of tables, a string)
 * replaces it whole.
 */
export function mergeChain(chain: readonly Layer[]): Merged {
  const origins = new Map<string, string>();
  let raw: Table = {};
  for (const layer of chain) {
    const lines = keyLines(layer.text);
    let resolved: Table;
    try {
      resolved = resolveLayerPaths(layer.raw, dirOf(layer.path));
    } catch (e) {
      if (!(e instanceof OtherHome)) throw e;
      const line = lineOf(lines, e.key);
      throw new LayerError(
        `${layer.shown}${line ? `:${line}` : ""}: key ${e.key}: ${
          JSON.stringify(e.path)
        } names another user's home, which is not supported; write the absolute path`,
      );
    }
    raw = mergeTables(raw, resolved);
    for (const key of leafKeys(layer.raw)) {
      // Forget what lower layers said below a value replaced whole.
      for (const k of [...origins.keys()]) if (k.startsWith(`${key}.`)) origins.delete(k);
      const line = lineOf(lines, key);
      origins.set(key, `${layer.shown}${line ? `:${line}` : ""}`);
    }
  }
  return { raw, origins };
}

function mergeTables(below: Table, above: Table): Table {
  const out: Table = { ...below };
  for (const [k, v] of Object.entries(above)) {
    const b = out[k];
    out[k] = isTable(b) && isTable(v) ? mergeTables(b, v) : v;
  }
  return out;
}

/** The dotted keys of every value that is not a table (lists are values). */
export function leafKeys(t: Table, prefix = ""): string[] {
  return Object.entries(t).flatMap(([k, v]) =>
    isTable(v) ? leafKeys(v, `${prefix}${k}.`) : [`${prefix}${k}`]
  );
}

/** The line of a dotted key, or of the nearest table holding it (an inline table's key). */
function lineOf(lines: Map<string, number>, key: string): number | undefined {
  const parts = key.split(".");
  for (let n = parts.length; n > 0; n--) {
    const line = lines.get(parts.slice(0, n).join("."));
    if (line) return line;
  }
  return undefined;
}

const KEY_PART = String.raw`(?:"(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)`;
const DOTTED = new RegExp(String.raw`^(${KEY_PART}(?:\s*\.\s*${KEY_PART})*)\s*=`);

function splitKey(key: string): string[] {
  return [...key.matchAll(new RegExp(KEY_PART, "g"))].map((m) => {
    const s = m[0];
    if (s.startsWith('"')) {
      try {
        return JSON.parse(s) as string;
      } catch {
        return s.slice(1, -1);
      }
    }
    return s.startsWith("'") ? s.slice(1, -1) : s;
  });
}

/**
 * The 1-based line of each key and table header in TOML text, by dotted key:
 * `[table]`, `[[list]]` (its first entry), `key =` and `a.b.c =`. A good
 * guess, not a parser: a line inside a multi-line string can fool it.
 */
export function keyLines(text: string): Map<string, number> {
  const out = new Map<string, number>();
  let table: string[] = [];
  const lists = new Map<string, number>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? "").trim();
    const list = /^\[\[\s*(.+?)\s*\]\]/.exec(line);
    const header = list ? undefined : /^\[\s*([^\]]+?)\s*\]/.exec(line);
    if (list) {
      const name = splitKey(list[1] ?? "");
      const key = name.join(".");
      const n = lists.get(key) ?? 0;
      lists.set(key, n + 1);
      if (!out.has(key)) out.set(key, i + 1);
      table = [...name, String(n)];
      continue;
    }
    if (header) {
      table = splitKey(header[1] ?? "");
      if (!out.has(table.join("."))) out.set(table.join("."), i + 1);
      continue;
    }
    const assign = DOTTED.exec(line);
    if (assign) {
      const key = [...table, ...splitKey(assign[1] ?? "")];
      // A list of tables: its entries' keys count as the list's.
      const name = key.filter((p) => !/^\d+$/.test(p)).join(".");
      if (!out.has(name)) out.set(name, i + 1);
    }
  }
  return out;
}

/** SHA-256 of the file's bytes for one file; of the files' hashes, in order, for a chain. */
export async function chainHash(texts: string[]): Promise<string> {
  if (texts.length <= 1) return await sha256Hex(texts[0] ?? "");
  const each = await Promise.all(texts.map((t) => sha256Hex(t)));
  return await sha256Hex(each.join("\n"));
}
