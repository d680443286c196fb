/**
 * `accel-agent display [NAME] [MACRO=VALUE…]` and the REPL's `/display`:
 * open a display of the catalogue through `launch_display` (the same checks
 * as the model's call), or list the catalogue when no name is given. It says
 * exactly what it started: the argv and the pid. `--json` prints the tool's
 * result object. Names, descriptions and paths come from the configuration
 * and are shown through {@link untrusted}.
 *
 * @module
 */
import type { App } from "../../app/app.ts";
import { CliError, Exit } from "../../app/exit.ts";
import type { Io } from "../../app/io.ts";
import { style } from "../term/style.ts";
import { terminalJson, untrusted } from "../../util/untrusted_text.ts";
import { UsageError } from "../../app/exit.ts";

type Row = Record<string, unknown>;

/** `MACRO=VALUE` words as a record; a word without `=` is a usage error. */
export function macroArgs(words: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const w of words) {
    const at = w.indexOf("=");
    if (at <= 0) {
      throw new UsageError(`"${w}" is not MACRO=VALUE, e.g. accel-agent display orbit SECTOR=03`);
    }
    out[w.slice(0, at)] = w.slice(at + 1);
  }
  return out;
}

/** Opens (or lists) and prints; returns the exit code. Throws CliError when refused. */
export async function runDisplay(
  app: App,
  name: string | undefined,
  macros: Record<string, string>,
  json: boolean,
  io: Io,
  signal: AbortSignal = new AbortController().signal,
): Promise<number> {
  const args = name === undefined ? {} : { display: name, macros };
  const outcome = await app.tools.execute("launch_display", JSON.stringify(args), signal);
  const result = (outcome.fullResult ?? outcome.result) as Row;
  if (!outcome.ok) {
    if (json) io.out(`${terminalJson(result)}\n`);
    const e = typeof result?.error === "string" ? result.error : "the display could not be opened";
    throw new CliError(
      e.replace(/^launch_display failed: /, "").split(". Schema: ")[0] as string,
      Exit.FAILURE,
    );
  }
  if (json) {
    io.out(`${terminalJson(result)}\n`);
    return Exit.OK;
  }
  io.out(displayText(result, io.color));
  return Exit.OK;
}

/** The result of `launch_display` as the terminal shows it. */
export function displayText(result: Row, color: boolean): string {
  const s = style(color);
  const one = (x: unknown) => untrusted(String(x ?? ""));
  const launched = result.launched as Row | undefined;
  if (launched) {
    const argv = (launched.argv as string[]).map(shellWord).join(" ");
    return `opened ${s.bold(one(launched.display))} (${one(launched.kind)}), pid ${
      one(launched.pid)
    }\n  ${s.dim(untrusted(argv))}\n`;
  }
  const lines: string[] = [];
  for (const d of (result.displays ?? []) as Row[]) {
    lines.push(
      `  ${s.bold(one(d.name).padEnd(14))} ${one(d.kind).padEnd(8)} ${one(d.description)}`,
    );
    const macros = Object.entries((d.macros ?? {}) as Record<string, Row>);
    if (macros.length) {
      const text = macros.map(([k, m]) => {
        const allowed = Array.isArray(m.values) ? (m.values as string[]).join("|") : "";
        return `${k}${m.default !== undefined ? `=${m.default}` : ""}${
          allowed ? ` (${allowed})` : ""
        }`;
      }).join("  ");
      lines.push(`  ${"".padEnd(14)} ${s.dim(`macros: ${untrusted(text)}`)}`);
    }
  }
  return lines.length ? `${lines.join("\n")}\n` : "no displays configured\n";
}

/** An argv element as one would type it: quoted when it holds anything a shell reads. */
function shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", "'\\''")}'`;
}
