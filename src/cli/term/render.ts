/**
 * Renders agent events in a terminal: the answer as Markdown on stdout, tool
 * calls, retries and errors as compact lines on stderr, a spinner between.
 * Every text that comes from the model, a tool or a service is shown through
 * {@link untrusted} before it is styled.
 *
 * A model that stalls is seen: the spinner counts the seconds waited, and
 * when a streaming answer stops for {@link STALL_MS} the unfinished line
 * gives way to "waiting for the model… N s" until text comes again. With
 * `holdText` (plain `ask`), a message's text is printed only once the model
 * has finished it: a message discarded by a retry never reaches stdout.
 *
 * @module
 */
import { type AgentEvent, assertNever } from "../../agent/events.ts";
import type { PreflightedPlan } from "../../plan_model/preflighted.ts";
import type { Io } from "../../app/io.ts";
import { MarkdownStream } from "./markdown.ts";
import { Spinner } from "./spinner.ts";
import { type Style, style } from "./style.ts";
import { untrusted } from "../../util/untrusted_text.ts";
import { renderChart } from "./chart.ts";
import { readPlotData } from "../../plots/write.ts";
import { realTimers, type Timers } from "../../util/misc.ts";

/** Silence in a streaming answer after which the waiting line is shown. */
export const STALL_MS = 2_000;

export interface RendererOptions {
  showUsage: boolean;
  /**
   * How to print a proposed plan, when no terminal approver shows it
   * (passed in so the table library loads only where it is used).
   */
  showPlan?: (p: PreflightedPlan) => string;
  /** Print a message's text only when the model has finished it (plain `ask`). */
  holdText?: boolean;
  /** The spinner's and the stall watch's clock; tests pass a manual one. */
  timers?: Timers;
}

export class TerminalRenderer {
  readonly #io: Io;
  readonly #s: Style;
  readonly #md: MarkdownStream;
  readonly #spinner: Spinner;
  readonly #showUsage: boolean;
  readonly #showPlan?: (p: PreflightedPlan) => string;
  readonly #holdText: boolean;
  readonly #timers: Timers;
  /** A progress bar is on the current stderr line. */
  #progress = false;
  /** The text of the message streaming now, while it is held. */
  #held = "";
  /** The stall watch of a streaming answer, and when its last text came. */
  #stall: ReturnType<typeof setTimeout> | undefined;
  #lastText = 0;

  constructor(io: Io, opts: RendererOptions) {
    this.#io = io;
    this.#s = style(io.color);
    this.#holdText = opts.holdText ?? false;
    this.#timers = opts.timers ?? realTimers;
    this.#md = new MarkdownStream(
      this.#s,
      (t) => io.out(t),
      io.stdoutIsTerminal && !this.#holdText ? () => io.columns() : undefined,
    );
    this.#spinner = new Spinner((t) => io.err(t), io.stderrIsTerminal, this.#timers);
    this.#showUsage = opts.showUsage;
    this.#showPlan = opts.showPlan;
  }

  /** Clears the screen's live parts so a prompt can be drawn. */
  pause(): void {
    this.#unwatch();
    this.#spinner.stop();
    this.#md.end();
    this.#endProgress();
  }

  /** Streamed text: shown (live), or held until its message ends; either way watched for stalls. */
  #text(delta: string): void {
    this.#unwatch();
    this.#lastText = this.#timers.now();
    if (this.#holdText) {
      this.#held += delta;
      this.#spinner.start("receiving the answer…");
    } else {
      this.#spinner.stop();
      this.#md.push(delta);
    }
    this.#stall = this.#timers.setTimeout(() => {
      this.#stall = undefined;
      if (!this.#io.stderrIsTerminal) return;
      // The unfinished line gives way to the waiting line; the next text draws it again.
      if (!this.#holdText) this.#md.hold();
      this.#spinner.start("waiting for the model…", this.#lastText);
    }, STALL_MS);
  }

  #unwatch(): void {
    if (this.#stall === undefined) return;
    this.#timers.clearTimeout(this.#stall);
    this.#stall = undefined;
  }

  #endProgress(): void {
    if (!this.#progress) return;
    this.#progress = false;
    this.#io.err("\n");
  }

  /** Shows the spinner until the first event. */
  begin(): void {
    this.#spinner.start("thinking…");
  }

  handle(ev: AgentEvent): void {
    const s = this.#s;
    if (ev.type !== "plan_progress") this.#endProgress();
    if (ev.type !== "text") this.#unwatch();
    switch (ev.type) {
      case "text":
        this.#text(ev.delta);
        return;
      case "tool_start":
        this.#md.end();
        this.#spinner.start(`${untrusted(ev.name)}…`);
        return;
      case "tool_end": {
        this.#spinner.stop();
        const mark = ev.ok ? s.green("✓") : s.red("✗");
        // "  ✓ name 12 ms → " before the summary.
        const name = untrusted(ev.name);
        const used = 9 + name.length + formatMs(ev.ms).length;
        const summary = summarizeResult(ev.result, Math.max(30, this.#io.columns() - used - 1));
        this.#io.err(
          `  ${mark} ${s.bold(name)} ${s.dim(`${formatMs(ev.ms)}`)}${
            summary ? ` ${ev.ok ? s.dim("→") : s.red("→")} ${ev.ok ? summary : s.red(summary)}` : ""
          }\n`,
        );
        if (ev.ok && ev.name === "plot") this.#chart(ev.result);
        this.#spinner.start("thinking…");
        return;
      }
      case "retry": {
        this.#spinner.stop();
        this.#md.end();
        // Held text of the failed attempt was never shown: it is dropped, with nothing to take back.
        const shown = ev.discardedText && !this.#holdText;
        if (ev.discardedText) this.#held = "";
        this.#io.err(
          s.yellow(
            `  ↻ model call failed (${untrusted(ev.reason)}); retry ${ev.attempt} in ${
              formatMs(ev.delayMs)
            }`,
          ) +
            (shown ? s.dim(" — the partial answer above is void") : "") + "\n",
        );
        this.#spinner.start("retrying…");
        return;
      }
      case "turn_complete":
        this.#spinner.stop();
        this.#md.end();
        if (this.#showUsage) {
          this.#io.err(
            s.dim(
              // The model id and the counts are the endpoint's own words: shown escaped like any
              // text from outside (a count that is not a number is shown as what it is).
              untrusted(
                `  ${ev.model} · ${ev.usage.promptTokens} in · ${ev.usage.completionTokens} out`,
              ) + "\n",
            ),
          );
        }
        return;
      case "cancelled":
        // Text of a message the model did not finish is not an answer.
        this.#held = "";
        this.#spinner.stop();
        this.#md.end();
        this.#io.err(s.yellow(`  cancelled: ${untrusted(ev.reason)}\n`));
        return;
      case "error":
        this.#held = "";
        this.#spinner.stop();
        this.#md.end();
        this.#io.err(s.red(`  error: ${untrusted(ev.message, { multiline: true })}\n`));
        return;
      case "plan_proposed":
        this.pause();
        if (this.#showPlan) this.#io.err(this.#showPlan(ev.plan));
        return;
      case "plan_decided": {
        this.pause();
        const text = {
          approved: s.green("approved"),
          partial: s.green("approved in part"),
          rejected: s.yellow("rejected"),
          deferred: s.yellow("needs approval"),
        }[ev.decision];
        this.#io.err(
          `  plan ${untrusted(ev.planHash.slice(0, 12))} ${text}${
            ev.reason ? s.dim(` — ${untrusted(ev.reason)}`) : ""
          }${
            ev.planId
              ? s.dim(
                `; saved as ${untrusted(ev.planId)} (review: accel-agent plan show ${
                  untrusted(ev.planId)
                })`,
              )
              : ev.savedPath
              ? s.dim(`; saved to ${untrusted(ev.savedPath)}`)
              : ""
          }\n`,
        );
        if (ev.decision === "approved" || ev.decision === "partial") {
          this.#spinner.start("running the plan…");
        }
        return;
      }
      case "plan_progress": {
        this.#spinner.stop();
        const line = `  ${progressBar(ev.step, ev.total, 24)} ${ev.step}/${ev.total} ${
          s.dim(untrusted(ev.detail))
        }`;
        if (this.#io.stderrIsTerminal) {
          this.#progress = true;
          this.#io.err(`\r\x1b[2K${line}`);
        } else {
          this.#io.err(`${line}\n`);
        }
        return;
      }
      case "compact":
        this.pause();
        this.#io.err(
          s.dim(`  context compacted: ~${ev.tokensBefore} → ~${ev.tokensAfter} tokens\n`),
        );
        this.#spinner.start("thinking…");
        return;
      case "subagent":
        this.pause();
        this.#io.err(s.dim(`  ${subagentLine(ev)}\n`));
        this.#spinner.start("thinking…");
        return;
      case "steer_applied":
        this.pause();
        this.#io.err(s.dim(`  ↳ given to the model: ${untrusted(ev.text)}\n`));
        this.#spinner.start("thinking…");
        return;
      case "hook":
      case "tool_calls_refused":
        this.pause();
        this.#io.err(s.yellow(`  ${untrusted(ev.message)}\n`));
        this.#spinner.start("thinking…");
        return;
      case "message_end":
        // The message is whole: held text stands now. (Streamed text was shown as it came.)
        if (this.#held) {
          this.#spinner.stop();
          this.#md.push(this.#held);
          this.#held = "";
        }
        return;
      case "turn_start":
        // The usage line comes with turn_complete.
        return;
      default:
        assertNever(ev);
    }
  }

  /** The chart of a `plot` result, from the data file the tool saved beside the SVG. */
  #chart(result: unknown): void {
    const path = (result as { data_file?: unknown } | null)?.data_file;
    const data = typeof path === "string" ? readPlotData(path) : undefined;
    if (!data) return;
    const text = renderChart(data, { columns: this.#io.columns(), color: this.#io.color });
    this.#io.err(
      `${text.replace(/^/gm, "  ")}  ${
        this.#s.dim(`svg: ${untrusted(String((result as { svg?: unknown }).svg))}`)
      }\n`,
    );
  }

  /** Stops the spinner and flushes the answer; safe to call twice. */
  end(): void {
    this.pause();
  }
}

/** "sub-agent agent-1 (device_search) done": for live events and the REPL's notices. */
export function subagentLine(ev: Extract<AgentEvent, { type: "subagent" }>): string {
  return untrusted(`sub-agent ${ev.id} (${ev.agent}) ${ev.status}`);
}

/** `[██████░░░░]` for step of total. */
export function progressBar(step: number, total: number, width: number): string {
  const filled = total > 0 ? Math.round((step / total) * width) : width;
  return `[${"█".repeat(filled)}${"░".repeat(width - filled)}]`;
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** A one-line summary of a tool result for the terminal; its text is shown through {@link untrusted}. */
export function summarizeResult(result: unknown, width = 110): string {
  return untrusted(summary(result, width));
}

function summary(result: unknown, width: number): string {
  const clip = (s: string) => (s.length > width ? `${s.slice(0, width - 1)}…` : s);
  if (result === null || typeof result !== "object") return clip(String(result));
  const r = result as Record<string, unknown>;
  if (typeof r.error === "string") return clip(r.error);
  if (typeof r.status === "string" && typeof r.plan_hash === "string") {
    // "restored" only for a restore that was confirmed; a failed one is said as such.
    const tries: unknown[] = Array.isArray(r.restored) ? r.restored : [];
    const ok = tries.filter((x) => (x as { ok?: unknown } | null)?.ok === true).length;
    const restored = (ok ? `, ${ok} restored` : "") +
      (tries.length > ok ? `, ${tries.length - ok} not restored` : "");
    const violations = Array.isArray(r.violations) ? `: ${r.violations.length} violations` : "";
    const deviated = typeof r.deviation === "string"
      ? ": stopped by a deviation from the prediction"
      : "";
    return clip(`plan ${r.status.replaceAll("_", " ")}${violations}${deviated}${restored}`);
  }
  if (r.launched && typeof r.launched === "object") {
    const l = r.launched as Record<string, unknown>;
    const argv = Array.isArray(l.argv) ? l.argv.join(" ") : "";
    return clip(`opened ${l.display} (${l.kind}), pid ${l.pid}: ${argv}`);
  }
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
  if (typeof r.svg === "string" && Array.isArray(r.series)) {
    return clip(`chart of ${r.series.length} series, ${r.svg}`);
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
