/**
 * Renders agent events in a terminal: the answer as Markdown on stdout, tool
 * calls, retries and errors as compact lines on stderr, a spinner between.
 *
 * @module
 */
import { type AgentEvent, assertNever } from "../agent/events.ts";
import type { Io } from "./io.ts";
import { MarkdownStream } from "./markdown.ts";
import { Spinner } from "./spinner.ts";
import { type Style, style } from "./style.ts";

export class TerminalRenderer {
  readonly #io: Io;
  readonly #s: Style;
  readonly #md: MarkdownStream;
  readonly #spinner: Spinner;
  readonly #showUsage: boolean;

  constructor(io: Io, opts: { showUsage: boolean }) {
    this.#io = io;
    this.#s = style(io.color);
    this.#md = new MarkdownStream(
      this.#s,
      (t) => io.out(t),
      io.stdoutIsTerminal ? () => io.columns() : undefined,
    );
    this.#spinner = new Spinner((t) => io.err(t), io.stderrIsTerminal);
    this.#showUsage = opts.showUsage;
  }

  /** Shows the spinner until the first event. */
  begin(): void {
    this.#spinner.start("thinking…");
  }

  handle(ev: AgentEvent): void {
    const s = this.#s;
    switch (ev.type) {
      case "text":
        this.#spinner.stop();
        this.#md.push(ev.delta);
        return;
      case "tool_start":
        this.#md.end();
        this.#spinner.start(`${ev.name}…`);
        return;
      case "tool_end": {
        this.#spinner.stop();
        const mark = ev.ok ? s.green("✓") : s.red("✗");
        const used = 6 + ev.name.length + formatMs(ev.ms).length;
        const summary = summarizeResult(ev.result, Math.max(30, this.#io.columns() - used - 1));
        this.#io.err(
          `  ${mark} ${s.bold(ev.name)} ${s.dim(`${formatMs(ev.ms)}`)}${
            summary ? ` ${ev.ok ? s.dim("→") : s.red("→")} ${ev.ok ? summary : s.red(summary)}` : ""
          }\n`,
        );
        this.#spinner.start("thinking…");
        return;
      }
      case "retry":
        this.#spinner.stop();
        this.#md.end();
        this.#io.err(
          s.yellow(
            `  ↻ model call failed (${ev.reason}); retry ${ev.attempt} in ${formatMs(ev.delayMs)}`,
          ) +
            (ev.discardedText ? s.dim(" — the partial answer above is void") : "") + "\n",
        );
        this.#spinner.start("retrying…");
        return;
      case "turn_complete":
        this.#spinner.stop();
        this.#md.end();
        if (this.#showUsage) {
          this.#io.err(
            s.dim(
              `  ${ev.model} · ${ev.usage.promptTokens} in · ${ev.usage.completionTokens} out\n`,
            ),
          );
        }
        return;
      case "cancelled":
        this.#spinner.stop();
        this.#md.end();
        this.#io.err(s.yellow(`  cancelled: ${ev.reason}\n`));
        return;
      case "error":
        this.#spinner.stop();
        this.#md.end();
        this.#io.err(s.red(`  error: ${ev.message}\n`));
        return;
      default:
        assertNever(ev);
    }
  }

  /** Stops the spinner and flushes the answer; safe to call twice. */
  end(): void {
    this.#spinner.stop();
    this.#md.end();
  }
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** A one-line summary of a tool result for the terminal. */
export function summarizeResult(result: unknown, width = 110): string {
  const clip = (s: string) => (s.length > width ? `${s.slice(0, width - 1)}…` : s);
  if (result === null || typeof result !== "object") return clip(String(result));
  const r = result as Record<string, unknown>;
  if (typeof r.error === "string") return clip(r.error);
  const parts: string[] = [];
  if (Array.isArray(r.readings)) {
    for (const x of r.readings.slice(0, 3) as Record<string, unknown>[]) {
      const v = typeof x.value === "object" ? "[waveform]" : String(x.value);
      const sev = x.severity && x.severity !== "NONE" ? ` ${x.severity}` : "";
      parts.push(`${x.device} = ${v} ${x.units ?? ""}${sev}`.trim());
    }
    if (r.readings.length > 3) parts.push(`+${r.readings.length - 3} more`);
    if (Array.isArray(r.errors)) parts.push(`${r.errors.length} failed`);
    return clip(parts.join(", "));
  }
  if (typeof r.total === "number" && Array.isArray(r.devices)) {
    return `${r.total} match${r.total === 1 ? "" : "es"}${
      r.devices.length < r.total ? `, ${r.devices.length} shown` : ""
    }`;
  }
  if (Array.isArray(r.entries)) {
    return `${r.entries.length} ${r.source ?? ""} entries`.replace("  ", " ");
  }
  if (Array.isArray(r.series)) return `${r.series.length} archived series`;
  if (typeof r.stdout === "string") {
    // A sandbox run: its first line of output, and how many files it wrote.
    const first = r.stdout.trim().split("\n")[0] || "no output";
    const n = Array.isArray(r.files) ? r.files.length : 0;
    return clip(`${first}${n ? ` (+${n} file${n === 1 ? "" : "s"})` : ""}`);
  }
  if (Array.isArray(r.scripts)) {
    return `${r.scripts.length} script${r.scripts.length === 1 ? "" : "s"}`;
  }
  return clip(JSON.stringify(result));
}
