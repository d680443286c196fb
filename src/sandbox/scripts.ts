/**
 * The operator's script library: Python files whose module docstring is their
 * description. Listing, reading and saving happen in the agent, never in the
 * sandbox (which sees the directory read-only).
 *
 * @module
 */
import { isRefusal, readRegularText } from "../util/bounded_read.ts";

/** A script and the first line of its docstring. */
export interface ScriptInfo {
  name: string;
  description: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_\-]{0,63}$/;

/** `orbit_rms` or `orbit_rms.py` → `orbit_rms`; anything else is a RangeError. */
export function scriptName(name: string): string {
  const base = name.endsWith(".py") ? name.slice(0, -3) : name;
  if (!NAME.test(base)) {
    throw new RangeError(
      `"${name}" is not a script name: use letters, digits, _ and - (e.g. orbit_rms)`,
    );
  }
  return base;
}

/** The module docstring of Python source, or "" when it has none. */
export function docstring(source: string): string {
  const body = source.replace(/^(\s*#[^\n]*\n|\s*\n)*/, "");
  const m = /^[rRuU]?("""|''')([\s\S]*?)\1/.exec(body) ?? /^[rRuU]?(["'])(.*?)\1/.exec(body);
  return m?.[2]?.trim() ?? "";
}

/** The largest script read: code, not data. */
const MAX_SCRIPT_BYTES = 1 << 20;

/** Scripts in `dir` whose name or docstring contains every word of `keyword`. */
export async function listScripts(dir: string, keyword?: string): Promise<ScriptInfo[]> {
  const words = (keyword ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  const out: ScriptInfo[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(dir));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
  for (const e of entries) {
    if (!e.isFile || !e.name.endsWith(".py") || e.name.startsWith("_")) continue;
    let source: string;
    try {
      source = await readRegularText(`${dir}/${e.name}`, MAX_SCRIPT_BYTES);
    } catch (e) {
      if (isRefusal(e) || e instanceof Deno.errors.NotFound) continue; // not a script to offer
      throw e;
    }
    const doc = docstring(source);
    const name = e.name.slice(0, -3);
    const haystack = `${name} ${doc}`.toLowerCase();
    if (words.every((w) => haystack.includes(w))) {
      out.push({ name, description: doc.split("\n")[0] ?? "" });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** The source of a script; a RangeError naming the known ones when absent. */
export async function readScript(dir: string, name: string): Promise<string> {
  const base = scriptName(name);
  try {
    return await readRegularText(`${dir}/${base}.py`, MAX_SCRIPT_BYTES, {
      fix: "a script is a Python file in the scripts directory",
    });
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    const known = (await listScripts(dir)).map((s) => s.name).join(", ") || "none";
    throw new RangeError(`no script "${base}" in the scripts directory; scripts: ${known}`);
  }
}

/**
 * Saves code as a script with a docstring header (the description, unless
 * the code already starts with a docstring). Never overwrites a script.
 */
export async function saveScript(
  dir: string,
  name: string,
  description: string,
  code: string,
  now: Date,
): Promise<string> {
  const base = scriptName(name);
  const path = `${dir}/${base}.py`;
  const header = docstring(code)
    ? ""
    : `"""${description.replaceAll('"""', "'''").trim()}\n\nSaved by accel-agent on ${
      now.toISOString().slice(0, 10)
    }.\n"""\n\n`;
  try {
    await Deno.writeTextFile(path, `${header}${code.trimEnd()}\n`, {
      createNew: true,
      mode: 0o600,
    });
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) {
      throw new RangeError(`a script "${base}" already exists; choose another save_as name`);
    }
    throw e;
  }
  return path;
}
