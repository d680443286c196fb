/**
 * Fast feedback on Python code before it runs: imports that cannot work in
 * the sandbox are refused at once (so the model rewrites without a wasted
 * run), unknown imports are warned about. This is not the security boundary
 * — the sandbox process's permissions are; an aliased or dynamic import that
 * slips past here still meets a runtime without network, environment or
 * subprocesses.
 *
 * @module
 */

/** Modules refused, with the reason the model reads. */
const BLOCKED: Record<string, string> = {
  js: "the JavaScript bridge is not available to analysis code",
  pyodide_js: "the JavaScript bridge is not available to analysis code",
  "pyodide.ffi": "the JavaScript bridge is not available to analysis code",
  "pyodide.code": "the JavaScript bridge is not available to analysis code",
  "pyodide.http": "the sandbox has no network",
  socket: "the sandbox has no network",
  ssl: "the sandbox has no network",
  urllib: "the sandbox has no network",
  http: "the sandbox has no network",
  requests: "the sandbox has no network",
  httpx: "the sandbox has no network",
  subprocess: "the sandbox cannot start programs",
  multiprocessing: "the sandbox cannot start programs",
  ctypes: "native code is not available",
  epics: "control-system clients are not available: use the agent's tools to read devices",
  caproto: "control-system clients are not available: use the agent's tools to read devices",
  p4p: "control-system clients are not available: use the agent's tools to read devices",
  pvaccess: "control-system clients are not available: use the agent's tools to read devices",
  tango: "control-system clients are not available: use the agent's tools to read devices",
  PyTango: "control-system clients are not available: use the agent's tools to read devices",
};

/** Top-level standard-library modules an analysis script commonly uses. */
const STDLIB = new Set(
  ("abc argparse array ast asyncio base64 bisect builtins bz2 calendar cmath codecs collections " +
    "colorsys contextlib copy csv dataclasses datetime decimal difflib enum errno fnmatch " +
    "fractions functools gc glob gzip hashlib heapq hmac html io itertools json keyword " +
    "linecache locale logging lzma math numbers operator os pathlib pickle pprint random re " +
    "reprlib secrets shlex shutil sqlite3 statistics string struct sys tarfile tempfile " +
    "textwrap time timeit traceback types typing unicodedata uuid warnings weakref xml " +
    "zipfile zlib zoneinfo __future__ pyodide").split(" "),
);

/** A dotted Python name: identifiers of letters, digits and underscores, in any script. */
const NAME = String.raw`[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}.]*`;
const FROM_IMPORT = new RegExp(String.raw`^\s*from\s+(${NAME})\s+import\s+(.+)$`, "u");

export interface Analysis {
  /** One line each: the import and why it cannot work. */
  blocked: string[];
  warnings: string[];
}

/**
 * Imports in Python source: `import a.b, c as d` and `from a.b import c`.
 * Read as Python reads identifiers: NFKC-normalised (`import ｊｓ` is
 * `import js`), any letter, and a backslash at a line's end continuing it.
 */
export function findImports(code: string): string[] {
  const found: string[] = [];
  const source = code.normalize("NFKC").replace(/\\\r?\n/g, " ");
  // Statements, not lines: `import csv; rows = …` holds one import and one assignment.
  for (const line of source.split(/[\r\n;]/)) {
    const from = FROM_IMPORT.exec(line);
    if (from?.[1] && from[2]) {
      found.push(from[1]);
      // `from pyodide import ffi` imports pyodide.ffi.
      for (const name of from[2].replace(/[()]/g, "").split(",")) {
        const n = name.trim().split(/\s+/)[0];
        if (n && n !== "*") found.push(`${from[1]}.${n}`);
      }
      continue;
    }
    const imp = /^\s*import\s+(.+)$/u.exec(line);
    if (imp?.[1]) {
      for (const part of imp[1].split(",")) {
        const n = part.trim().split(/\s+/)[0];
        if (n) found.push(n);
      }
    }
  }
  return found;
}

/** Blocked imports and warnings; `packages` are import names a packages directory offers. */
export function analyse(code: string, packages: readonly string[] = []): Analysis {
  const blocked: string[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  for (const name of findImports(code)) {
    const top = name.split(".")[0] ?? name;
    const rule = BLOCKED[name] ?? BLOCKED[top];
    if (rule && !seen.has(name)) {
      seen.add(name);
      blocked.push(`import ${name}: ${rule}`);
    } else if (!rule && !STDLIB.has(top) && !packages.includes(top) && !seen.has(top)) {
      seen.add(top);
      if (!name.includes(".") || !seen.has(name)) {
        warnings.push(`import ${top}: not a known standard-library or local package`);
      }
    }
  }
  return { blocked, warnings };
}
