/**
 * The displays catalogue: finding a display by name or keyword, checking the
 * macros a request gives against the catalogue, and building the exact argv
 * of its launcher. Nothing here runs anything; {@link ./launch.ts} does.
 *
 * A value reaches the launcher as one argv element (or a part of one), never
 * through a shell, and only after it passed the catalogue's check.
 *
 * @module
 */
import type { Config } from "../config/schema.ts";
import {
  type DisplayEntry,
  type DisplayKind,
  kindOfFile,
  type Launcher,
  type MacroSpec,
} from "../config/displays_schema.ts";
import { resolveConfigPath } from "../config/paths.ts";

/** A request the catalogue refuses: one line saying what and what to do. */
export class DisplayError extends Error {
  override name = "DisplayError";
}

/** A display of the catalogue, its kind and target settled. */
export interface Display {
  name: string;
  kind: DisplayKind;
  /** The file (absolute) or URL handed to the launcher. */
  target: string;
  description: string;
  keywords: string[];
  macros: Record<string, MacroSpec>;
}

/** What will be launched for a request. */
export interface LaunchSpec {
  display: Display;
  /** Every macro with its value: the request's, else the default. */
  macros: Record<string, string>;
  /** Program first; exactly what is spawned. */
  argv: string[];
}

/** Used when a macro has neither `values` nor `pattern`: names, numbers, PV-like text. */
export const DEFAULT_MACRO_PATTERN = "[A-Za-z0-9_.:+-]{0,128}";

/** C0, DEL and C1 controls: never in a macro value, whatever its pattern allows. */
// deno-lint-ignore no-control-regex -- control characters are exactly what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;

/** The catalogue of a configuration: files resolved against the config's directory. */
export class DisplayCatalogue {
  readonly displays: Display[];

  constructor(
    entries: readonly DisplayEntry[],
    readonly launchers: Config["launchers"],
    /** A file setting made absolute (relative to the config file, `~` the home directory). */
    resolve: (path: string) => string,
  ) {
    this.displays = entries.map((e) => {
      const kind = e.kind ?? (e.url !== undefined ? "web" : kindOfFile(e.file ?? ""));
      if (!kind) {
        throw new DisplayError(
          `display "${e.name}": cannot tell its kind from ${e.file}; set kind = "phoebus", "edm", "caqtdm" or "web"`,
        );
      }
      return {
        name: e.name,
        kind,
        target: e.url ?? resolve(e.file ?? ""),
        description: e.description,
        keywords: e.keywords,
        macros: e.macros,
      };
    });
  }

  /** The catalogue of a loaded configuration. */
  static of(config: Config, baseDir: string, home: string): DisplayCatalogue {
    return new DisplayCatalogue(
      config.displays,
      config.launchers,
      (p) => resolveConfigPath(p, baseDir, home),
    );
  }

  /** The kinds the catalogue uses (whose launchers may be run). */
  kinds(): DisplayKind[] {
    return [...new Set(this.displays.map((d) => d.kind))];
  }

  /**
   * The display named `query`, else the one display whose name, keywords or
   * description hold every word of it; several → an error listing them.
   */
  find(query: string): Display {
    const q = query.trim().toLowerCase();
    if (!this.displays.length) {
      throw new DisplayError("no displays are configured; add [[displays]] to the config file");
    }
    const exact = this.displays.find((d) => d.name.toLowerCase() === q);
    if (exact) return exact;
    const words = q.split(/[\s,]+/).filter((w) => w !== "");
    const matches = this.displays.filter((d) => {
      const hay = [d.name, ...d.keywords, d.description].join(" ").toLowerCase();
      return words.length > 0 && words.every((w) => hay.includes(w));
    });
    if (matches.length === 1) return matches[0] as Display;
    const names = (matches.length ? matches : this.displays).map((d) => d.name).join(", ");
    throw new DisplayError(
      matches.length
        ? `"${query}" matches ${matches.length} displays: ${names}; give one name`
        : `no display matches "${query}"; displays: ${names}`,
    );
  }

  /** The launch of `display` with the request's `macros`; throws DisplayError when a macro is refused. */
  plan(display: Display, macros: Record<string, string>): LaunchSpec {
    const values: Record<string, string> = {};
    for (const [name, value] of Object.entries(macros)) {
      const spec = display.macros[name];
      if (!spec) {
        const known = Object.keys(display.macros);
        throw new DisplayError(
          `display "${display.name}" has no macro ${name}; ${
            known.length ? `its macros: ${known.join(", ")}` : "it takes no macros"
          }`,
        );
      }
      checkValue(display.name, name, value, spec);
      values[name] = value;
    }
    for (const [name, spec] of Object.entries(display.macros)) {
      if (values[name] !== undefined) continue;
      if (spec.default === undefined) {
        throw new DisplayError(
          `display "${display.name}" needs macro ${name}${allowedText(spec)}; give ${name}=VALUE`,
        );
      }
      values[name] = spec.default;
    }
    const launcher = this.launchers[display.kind];
    return { display, macros: values, argv: buildArgv(launcher, display.target, values) };
  }
}

/** " (one of A, B)" or " (matching P)", for messages. */
function allowedText(spec: MacroSpec): string {
  if (spec.values) return ` (one of ${spec.values.join(", ")})`;
  return ` (matching ${spec.pattern ?? DEFAULT_MACRO_PATTERN})`;
}

function checkValue(display: string, name: string, value: string, spec: MacroSpec): void {
  if (CONTROL.test(value)) {
    throw new DisplayError(`macro ${name} of "${display}" holds a control character; refused`);
  }
  const ok = spec.values
    ? spec.values.includes(value)
    : new RegExp(`^(?:${spec.pattern ?? DEFAULT_MACRO_PATTERN})$`, "u").test(value);
  if (!ok) {
    throw new DisplayError(
      `macro ${name}=${JSON.stringify(value)} is not allowed for "${display}"${allowedText(spec)}`,
    );
  }
}

/** The macros in a launcher's form; a value that would break a comma list is refused. */
export function formatMacros(format: Launcher["macro_format"], macros: Record<string, string>) {
  const pairs = Object.entries(macros);
  if (format === "query") {
    return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
  }
  for (const [k, v] of pairs) {
    if (/[,=]/.test(v)) {
      throw new DisplayError(
        `macro ${k}=${JSON.stringify(v)} holds , or =, which EDM-style macro lists cannot carry`,
      );
    }
  }
  return pairs.map(([k, v]) => `${k}=${v}`).join(",");
}

/**
 * The launcher's argv with `{file}` and `{macros}` filled. With no macros,
 * `?{macros}` is dropped, and an argument that is only `{macros}` is dropped
 * together with the option just before it (`-m`, `-macro`).
 */
export function buildArgv(
  launcher: Launcher,
  target: string,
  macros: Record<string, string>,
): string[] {
  const text = formatMacros(launcher.macro_format, macros);
  const out: string[] = [];
  for (const arg of launcher.command) {
    if (text === "" && arg === "{macros}") {
      if (out.length > 1 && out[out.length - 1]?.startsWith("-")) out.pop();
      continue;
    }
    // One pass: a value is never read again as a placeholder.
    const template = text === "" ? arg.replaceAll("?{macros}", "") : arg;
    out.push(template.replace(/\{file\}|\{macros\}/g, (m) => m === "{file}" ? target : text));
  }
  return out;
}

/** The programs the catalogue's launchers start (for `--allow-run`); a path is resolved. */
export function launcherPrograms(config: Config, baseDir: string, home: string): string[] {
  const catalogue = DisplayCatalogue.of(config, baseDir, home);
  return catalogue.kinds().map((k) => {
    const program = config.launchers[k].command[0] as string;
    return program.includes("/") ? resolveConfigPath(program, baseDir, home) : program;
  });
}
