/**
 * Python packages beyond the standard library, from a local directory only:
 * a Pyodide distribution (`pyodide-lock.json` beside its wheels) and/or loose
 * pure-Python wheels. Packages load on demand, when the code imports them;
 * nothing is ever fetched from the network.
 *
 * @module
 */
import type { PyodideAPI } from "pyodide";

interface Entry {
  /** Wheel file, absolute. */
  file: string;
  /** Other import names this one needs first (from the lock file). */
  depends: string[];
  /** Loaded with Pyodide's package loader (may hold shared libraries). */
  fromLock: boolean;
}

/** The lock file of a Pyodide distribution. */
const LOCK_FILE = "pyodide-lock.json";

/** The largest lock file read (a full Pyodide distribution's is under 1 MiB). */
export const MAX_LOCK_BYTES = 16 << 20;

/** One package of a lock file, as far as it is used. */
interface LockEntry {
  name?: string;
  file_name?: string;
  imports: string[];
  depends: string[];
}

/** The packages of the lock file at `path`, by key; an Error naming the file when it is none. */
function lockPackages(path: string, read: (path: string) => string): Map<string, LockEntry> {
  const text = read(path);
  let lock: unknown;
  try {
    lock = JSON.parse(text);
  } catch (e) {
    throw new Error(`${path}: not a Pyodide lock file (${(e as Error).message.split("\n")[0]})`);
  }
  const table = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);
  const packages = table(lock) ? (lock as { packages?: unknown }).packages ?? {} : undefined;
  if (!table(packages)) {
    throw new Error(`${path}: not a Pyodide lock file (no "packages" table)`);
  }
  const strings = (v: unknown) =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
  const text1 = (v: unknown) => typeof v === "string" ? v : undefined;
  const out = new Map<string, LockEntry>();
  for (const [key, p] of Object.entries(packages as Record<string, unknown>)) {
    if (typeof p !== "object" || p === null) continue;
    const e = p as Record<string, unknown>;
    out.set(key, {
      name: text1(e.name),
      file_name: text1(e.file_name),
      imports: strings(e.imports),
      depends: strings(e.depends),
    });
  }
  return out;
}

/**
 * The sandbox process's own read of a lock file (it may load only
 * `src/sandbox/`, so not the agent's reader): a regular file within
 * {@link MAX_LOCK_BYTES}, checked before it is read.
 */
function readLockFile(path: string): string {
  const info = Deno.statSync(path);
  if (!info.isFile) throw new Error(`${path}: not a regular file`);
  if (info.size > MAX_LOCK_BYTES) throw new Error(`${path}: larger than ${MAX_LOCK_BYTES} bytes`);
  return Deno.readTextFileSync(path);
}

/** The packages a directory offers, by top-level import name. */
export class LocalPackages {
  readonly #byImport: Map<string, Entry>;
  readonly #loaded = new Set<string>();

  private constructor(byImport: Map<string, Entry>) {
    this.#byImport = byImport;
  }

  static none(): LocalPackages {
    return new LocalPackages(new Map());
  }

  /**
   * Indexes `dir`. A loose wheel's import name is its distribution name in
   * lower case (`my_tools-1.0-py3-none-any.whl` → `my_tools`). `readLock`
   * reads the lock file (at most {@link MAX_LOCK_BYTES}; the agent passes its
   * bounded reader); a lock file that cannot be read, or is not one, throws
   * an Error of one line naming it.
   */
  static scan(dir: string, readLock: (path: string) => string = readLockFile): LocalPackages {
    const byImport = new Map<string, Entry>();
    const files = new Set<string>();
    let hasLock = false;
    try {
      for (const e of Deno.readDirSync(dir)) {
        if (e.isFile) files.add(e.name);
        // Whatever it is: a FIFO or a link to a device there is refused by name, not passed over.
        if (e.name === LOCK_FILE) hasLock = true;
      }
    } catch {
      return LocalPackages.none();
    }
    if (hasLock) {
      const byName = lockPackages(`${dir}/${LOCK_FILE}`, readLock);
      for (const [key, p] of byName) {
        if (!p.file_name || !files.has(p.file_name)) continue;
        for (const name of p.imports.length ? p.imports : [p.name ?? key]) {
          byImport.set(name, {
            file: `${dir}/${p.file_name}`,
            depends: p.depends.flatMap((d) => byName.get(d)?.imports ?? [d]),
            fromLock: true,
          });
        }
      }
    }
    for (const f of files) {
      if (!f.endsWith(".whl")) continue;
      const name = f.split("-")[0]?.toLowerCase().replaceAll(".", "_");
      if (name && !byImport.has(name)) {
        byImport.set(name, { file: `${dir}/${f}`, depends: [], fromLock: false });
      }
    }
    return new LocalPackages(byImport);
  }

  names(): string[] {
    return [...this.#byImport.keys()].sort();
  }

  /** Loads what `code` imports and this directory has (with dependencies). */
  async loadFor(py: PyodideAPI, code: string): Promise<void> {
    if (this.#byImport.size === 0) return;
    let imports: string[];
    try {
      const found = py.pyimport("pyodide.code").find_imports(code);
      imports = found.toJs() as string[];
      found.destroy();
    } catch {
      return; // a syntax error: running the code reports it
    }
    const before = this.#loaded.size;
    for (const name of imports) await this.#load(py, name, new Set());
    // New files under site-packages: the import system's directory caches are stale.
    if (this.#loaded.size > before) py.runPython("import importlib; importlib.invalidate_caches()");
  }

  async #load(py: PyodideAPI, name: string, seen: Set<string>): Promise<void> {
    const entry = this.#byImport.get(name);
    if (!entry || this.#loaded.has(entry.file) || seen.has(name)) return;
    seen.add(name);
    for (const dep of entry.depends) await this.#load(py, dep, seen);
    if (entry.fromLock) {
      await py.loadPackage(entry.file, { messageCallback: () => {}, errorCallback: () => {} });
    } else {
      // Without extractDir the wheel lands in the current directory, not on sys.path.
      const site = py.runPython("import site; site.getsitepackages()[0]") as string;
      py.unpackArchive(Deno.readFileSync(entry.file), "wheel", { extractDir: site });
    }
    this.#loaded.add(entry.file);
  }

  /** One line for a failed import: what is missing and what there is. */
  missingMessage(error: string): string {
    const missing = /No module named '([^']+)'/.exec(error)?.[1] ?? "a module";
    const extra = this.names();
    return `module '${missing}' is not available in the sandbox; available: the Python standard ` +
      `library (with sqlite3)${extra.length ? ` and ${extra.join(", ")}` : ""}`;
  }
}
