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

interface LockFile {
  packages?: Record<string, {
    name?: string;
    file_name?: string;
    imports?: string[];
    depends?: string[];
  }>;
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
   * lower case (`my_tools-1.0-py3-none-any.whl` → `my_tools`).
   */
  static scan(dir: string): LocalPackages {
    const byImport = new Map<string, Entry>();
    const files = new Set<string>();
    try {
      for (const e of Deno.readDirSync(dir)) if (e.isFile) files.add(e.name);
    } catch {
      return LocalPackages.none();
    }
    if (files.has("pyodide-lock.json")) {
      const lock = JSON.parse(Deno.readTextFileSync(`${dir}/pyodide-lock.json`)) as LockFile;
      const byName = new Map(Object.entries(lock.packages ?? {}));
      for (const [key, p] of byName) {
        if (!p.file_name || !files.has(p.file_name)) continue;
        for (const name of p.imports?.length ? p.imports : [p.name ?? key]) {
          byImport.set(name, {
            file: `${dir}/${p.file_name}`,
            depends: (p.depends ?? []).flatMap((d) => byName.get(d)?.imports ?? [d]),
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
