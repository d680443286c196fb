/**
 * `accel-agent config show`: the configuration in force — the file named,
 * merged onto what it extends and the shipped defaults, with the
 * environment's overrides — as TOML, each value with where it was set
 * (`file:line`, `environment NAME`, or `built in`). The output is a config
 * file itself: every path in it is absolute. `--json` gives the files and,
 * per dotted key, the value and its origin. A path it names that does not
 * exist is said after the listing, with exit 2, as every other command says
 * it at start.
 *
 * @module
 */
import { loadConfig } from "../../config/mod.ts";
import { isTable, leafKeys, type Table } from "../../config/layers.ts";
import type { Invocation } from "../args/args.ts";
import { CliError, Exit } from "../../app/exit.ts";
import type { Io } from "../../app/io.ts";
import { unreadableConfiguredPath } from "../../app/path_problems.ts";
import { terminalJson, untrusted } from "../../util/untrusted_text.ts";
import { style } from "../term/style.ts";

/** What a value not set in any file or variable is. */
export const BUILT_IN = "built in";

export async function runConfigShow(inv: Invocation, io: Io): Promise<number> {
  const loaded = await loadConfig({ path: inv.config, env: { get: io.env }, cwd: io.cwd });
  const config = loaded.config as unknown as Table;
  const origin = (key: string) => loaded.origins.get(key) ?? BUILT_IN;
  if (inv.json) {
    const values: Record<string, { value: unknown; from: string }> = {};
    for (const key of leafKeys(config)) {
      values[key] = { value: valueAt(config, key), from: origin(key) };
    }
    io.out(`${terminalJson({ files: loaded.layers.map((l) => l.path), values })}\n`);
  } else {
    const s = style(io.color);
    const files = loaded.layers.map((l) => l.shown).reverse();
    const head = files.length
      ? `# ${files.join(" extends ")}`
      : "# no config file: the built-in defaults";
    io.out(s.dim(`${untrusted(head)}\n`));
    for (const line of tomlLines(config, origin, io.columns())) {
      const [text, comment] = line;
      io.out(comment === undefined ? `${text}\n` : `${text}${s.dim(comment)}\n`);
    }
  }
  const home = io.env("HOME") ?? io.cwd;
  const problem = unreadableConfiguredPath(loaded, home);
  if (problem) throw new CliError(`config error: ${problem}`, Exit.USAGE);
  return Exit.OK;
}

function valueAt(t: Table, key: string): unknown {
  return key.split(".").reduce<unknown>((v, k) => isTable(v) ? v[k] : undefined, t);
}

/** A line and its origin comment (placed after it, or on the line before when too wide). */
type Line = [text: string, comment?: string];

/** The config as TOML lines: plain values first, then each table, lists of tables last. */
export function tomlLines(config: Table, origin: (key: string) => string, width: number): Line[] {
  const out: Line[] = [];
  const emit = (text: string, key: string) => {
    const comment = `  # ${untrusted(origin(key))}`;
    if (text.length + comment.length <= width) out.push([text, comment]);
    else out.push(["", comment.trimStart()], [text]);
  };
  const table = (t: Table, path: string[]) => {
    const scalars = Object.entries(t).filter(([, v]) =>
      v !== undefined && !isTable(v) && !isTableList(v)
    );
    const tables = Object.entries(t).filter(([, v]) => isTable(v));
    const lists = Object.entries(t).filter(([, v]) => isTableList(v));
    if (path.length && scalars.length) out.push([""], [`[${path.map(tomlKey).join(".")}]`]);
    for (const [k, v] of scalars) emit(`${tomlKey(k)} = ${tomlValue(v)}`, [...path, k].join("."));
    for (const [k, v] of tables) table(v as Table, [...path, k]);
    for (const [k, v] of lists) {
      const key = [...path, k].join(".");
      for (const entry of v as Table[]) {
        out.push([""]);
        emit(`[[${[...path, k].map(tomlKey).join(".")}]]`, key);
        for (const [ek, ev] of Object.entries(entry)) {
          if (ev !== undefined) out.push([`${tomlKey(ek)} = ${tomlValue(ev)}`]);
        }
      }
    }
  };
  table(config, []);
  return out;
}

function isTableList(v: unknown): v is Table[] {
  return Array.isArray(v) && v.length > 0 && v.every(isTable);
}

function tomlKey(k: string): string {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : tomlString(k);
}

function tomlString(s: string): string {
  // JSON's escapes are TOML's; the terminal's escaping adds \uXXXX for C1, bidi and tags.
  return terminalJson(s, 0).replaceAll("\x7f", "\\u007f");
}

/** A value as TOML writes it (inline tables for tables inside lists). */
export function tomlValue(v: unknown): string {
  if (typeof v === "string") return tomlString(v);
  if (typeof v === "number") {
    return Number.isFinite(v) ? String(v) : Number.isNaN(v) ? "nan" : v > 0 ? "inf" : "-inf";
  }
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map(tomlValue).join(", ")}]`;
  if (isTable(v)) {
    const parts = Object.entries(v).filter(([, x]) => x !== undefined)
      .map(([k, x]) => `${tomlKey(k)} = ${tomlValue(x)}`);
    return parts.length ? `{ ${parts.join(", ")} }` : "{}";
  }
  return tomlString(String(v));
}
