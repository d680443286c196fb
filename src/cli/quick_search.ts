/**
 * `accel-agent search WORDS` answered from the cached index before the rest
 * of the program loads (the command table, the configuration schema, the
 * application): the configuration file is hashed, not validated again; the
 * index's cache file is opened and read a piece at a time; the answer is the
 * same object the `search_device` tool returns, printed the same way.
 *
 * It answers only a plain command line (the flags of `search` and
 * `-c/--config`, `--json`, `--no-color`), and only when a full search with
 * this very configuration left its ticket (`commands/search_ticket.ts`) and
 * nothing that ticket rests on changed: the program's version, the
 * configuration's bytes, the home directory, the synonym files, the
 * simulator's facility description (its digest), the cache itself (its source, synonym
 * digest and age); and no plan may be left unfinished (the full path warns
 * of it). Otherwise it steps aside and the full path runs — and leaves a
 * fresh ticket.
 *
 * @module
 */
import { configFile, defaultConfigPath } from "../config/locate.ts";
import { chainHash, isTable, mergeChain, readChain, type Table } from "../config/layers.ts";
import { resolveConfigPath } from "../config/paths.ts";
import { terminalJson } from "../util/untrusted_text.ts";
import { denoIo } from "../app/io.ts";
import { searchModeOf } from "../index/mode.ts";
import { openIndexSync } from "../index/cache.ts";
import { DeviceIndex } from "../index/device_index.ts";
import { Lexicon } from "../index/lexicon.ts";
import { rankedSearch } from "../index/query.ts";
import { informalResult } from "../tools/search_words.ts";
import { readTicket, sameFacility, stampOf } from "./commands/search_ticket.ts";
import { renderSearch } from "./commands/search_render.ts";
import { readPlainTextSync } from "../util/glance_read.ts";

/** A plain `search` command line, as the full parser would read it. */
export interface QuickArgs {
  config?: string;
  json: boolean;
  noColor: boolean;
  words: string;
  /** `--words`: words whatever the text looks like. */
  forceWords: boolean;
  subsystem?: string;
  writable?: boolean;
  limit: number;
  offset: number;
}

const FLAGS_WITH_VALUE = new Set(["--config", "-c", "--subsystem", "--limit", "--offset"]);
const SWITCHES = new Set(["--json", "--no-color", "--words", "--writable", "--read-only"]);

/**
 * The command line read as a plain search, or undefined when it is anything
 * else or anything the full parser would refuse or read otherwise (it then
 * says why).
 */
export function quickArgs(args: readonly string[]): QuickArgs | undefined {
  const values = new Map<string, string>();
  const switches = new Set<string>();
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (!a.startsWith("-") || a === "-") {
      positionals.push(a);
      continue;
    }
    const eq = a.startsWith("--") ? a.indexOf("=") : -1;
    const name = eq > 0 ? a.slice(0, eq) : a;
    if (SWITCHES.has(name) && eq < 0) {
      if (switches.has(name)) return undefined;
      switches.add(name);
    } else if (FLAGS_WITH_VALUE.has(name)) {
      const key = name === "-c" ? "--config" : name;
      const value = eq > 0 ? a.slice(eq + 1) : args[++i];
      if (value === undefined || values.has(key)) return undefined;
      values.set(key, value);
    } else return undefined;
  }
  if (positionals[0] !== "search" || positionals.length < 2) return undefined;
  if (switches.has("--writable") && switches.has("--read-only")) return undefined;
  const int = (key: string, dflt: number, min: number, max: number) => {
    const raw = values.get(key);
    if (raw === undefined) return dflt;
    const n = Number(raw);
    return Number.isInteger(n) && n >= min && n <= max ? n : undefined;
  };
  const limit = int("--limit", 50, 1, 10_000), offset = int("--offset", 0, 0, 2 ** 53 - 1);
  const words = positionals.slice(1).join(" ").trim();
  if (limit === undefined || offset === undefined || words === "") return undefined;
  return {
    ...(values.has("--config") ? { config: values.get("--config") } : {}),
    json: switches.has("--json"),
    noColor: switches.has("--no-color"),
    words,
    forceWords: switches.has("--words"),
    ...(values.has("--subsystem") ? { subsystem: values.get("--subsystem") } : {}),
    ...(switches.has("--writable")
      ? { writable: true }
      : switches.has("--read-only")
      ? { writable: false }
      : {}),
    limit,
    offset,
  };
}

/**
 * The state directory the merged configuration names (its relative paths
 * already made absolute against the file that set them). A wrong guess only
 * finds no ticket (the ticket names the directory and the configuration's hash).
 */
function stateDirOf(raw: Table, baseDir: string, home: string): string {
  const state = raw.state;
  const dir = isTable(state) && typeof state.dir === "string" ? state.dir : undefined;
  return resolveConfigPath(dir ?? "~/.local/state/accel-agent", baseDir, home);
}

/** True when a plan run was left unfinished (or the journal cannot be read): the full path says so. */
function planLeftRunning(stateDir: string): boolean {
  try {
    for (const e of Deno.readDirSync(`${stateDir}/running`)) {
      if (e.name.endsWith(".json")) return true;
    }
    return false;
  } catch (e) {
    return !(e instanceof Deno.errors.NotFound);
  }
}

/**
 * The exit code of a search answered from the cache, or undefined when this
 * command must take the full path.
 */
export async function quickSearch(args: readonly string[]): Promise<number | undefined> {
  const q = quickArgs(args);
  if (q === undefined || !(q.forceWords || searchModeOf(q.words) === "informal")) return undefined;
  const env = (name: string) => Deno.env.get(name);
  const cwd = Deno.cwd();
  const home = env("HOME") ?? cwd;
  const file = configFile({ path: q.config, env: { get: env }, cwd });
  if (!file) return undefined;
  // The configuration as the full load reads it: the file, and the files it extends.
  let chain, raw;
  try {
    const read = (path: string) => {
      try {
        return Promise.resolve(readPlainTextSync(path, 1 << 20));
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return Promise.resolve(undefined);
        throw e;
      }
    };
    chain = await readChain(file, defaultConfigPath(), read, home);
    raw = mergeChain(chain).raw;
  } catch {
    return undefined;
  }
  const top = chain.at(-1);
  if (top === undefined) return undefined;
  const baseDir = top.path.slice(0, top.path.lastIndexOf("/")) || "/";
  const stateDir = stateDirOf(raw, baseDir, home);
  const ticket = readTicket(stateDir);
  if (ticket === undefined) return undefined;
  const configHash = await chainHash(chain.map((l) => l.text));
  if (
    ticket.config !== top.path || ticket.configHash !== configHash ||
    ticket.home !== home || ticket.stateDir !== stateDir
  ) return undefined;
  for (const [path, mtime, size] of ticket.stamps) {
    const now = stampOf(path);
    if (now === undefined || now[1] !== mtime || now[2] !== size) return undefined;
  }
  if (!await sameFacility(ticket)) return undefined;
  if (planLeftRunning(stateDir)) return undefined;
  const store = openIndexSync(ticket.cacheFile, ticket.source, ticket.lexiconDigest);
  if (store === undefined) return undefined;
  try {
    if (ticket.refreshMs > 0 && Date.now() - store.builtAt >= ticket.refreshMs) return undefined;
    const index = new DeviceIndex(store, new Lexicon(ticket.synonyms));
    const page = rankedSearch(index, q.words, {
      subsystem: q.subsystem,
      writable: q.writable,
      limit: Math.min(q.limit, 200),
      offset: q.offset,
    });
    const result = informalResult(page);
    const io = denoIo({ noColor: q.noColor, colorSetting: ticket.color });
    if (q.json) io.out(`${terminalJson(result)}\n`);
    else {
      renderSearch(result, {
        color: io.color,
        out: (text) => io.out(text),
        err: (text) => io.err(text),
        ...(io.stdoutIsTerminal ? { columns: io.columns() } : {}),
      });
    }
    return 0;
  } catch {
    // A cache found damaged while read: the full path rebuilds it.
    return undefined;
  } finally {
    store.close();
  }
}
