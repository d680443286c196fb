/**
 * How `accel-agent search` prints its answer: what was understood, the
 * devices in a table, the count and the next page; when nothing is
 * everything asked for, what nothing satisfied and the nearest devices,
 * apart. The table is drawn here (a few lines) rather than by the table
 * library, whose import alone took longer than a whole cached search.
 * Names, descriptions and units come from facility services: every cell is
 * shown through {@link untrusted}.
 *
 * @module
 */
import { type Style, style } from "../term/style.ts";
import { fitWidths } from "../term/fit_widths.ts";
import { visibleWidth, widestLine, widestWord, wrapText } from "../../util/text_wrap.ts";
import { untrusted } from "../../util/untrusted_text.ts";
import type { PatternDevice, SearchDeviceResult } from "../../tools/search_words.ts";
import type { RankedDevice } from "../../index/query.ts";

/** Where the answer is written. */
export interface SearchOut {
  color: boolean;
  /** The terminal's width when output goes to one; none: lines stay whole (for grep). */
  columns?: number;
  out(text: string): void;
  err(text: string): void;
}

/** One line of a service's text, as a cell shows it. */
const one = (x: unknown): string => untrusted(String(x ?? ""));

/**
 * A box table no wider than `width` (Infinity: each column as wide as its
 * widest cell): the header row, then the rows, each cell padded by one
 * space; cells wrap between words when the columns must give way.
 */
export function boxTable(head: string[], rows: string[][], s: Style, width = Infinity): string {
  const natural = head.map((h, i) =>
    Math.max(visibleWidth(h), ...rows.map((r) => widestLine(r[i] ?? "")))
  );
  const words = head.map((h, i) =>
    Math.max(widestWord(h), ...rows.map((r) => widestWord(r[i] ?? "")))
  );
  const widths = Number.isFinite(width) ? fitWidths(natural, words, width) : natural;
  const line = (l: string, m: string, r: string) =>
    `${l}${widths.map((w) => "─".repeat(w + 2)).join(m)}${r}`;
  const row = (cells: string[], bold = false) => {
    const wrapped = cells.map((c, i) => wrapText(c, widths[i] ?? 1));
    const height = Math.max(1, ...wrapped.map((w) => w.length));
    return Array.from({ length: height }, (_, k) =>
      `│${
        wrapped.map((lines, i) => {
          const c = lines[k] ?? "";
          const pad = " ".repeat(Math.max(0, (widths[i] ?? 0) - visibleWidth(c)));
          return ` ${bold ? s.bold(c) : c}${pad} `;
        }).join("│")
      }│`).join("\n");
  };
  return [line("┌", "┬", "┐"), row(head, true), ...rows.map((r) => row(r)), line("└", "┴", "┘")]
    .join("\n");
}

/** Prints a `search_device` result for a person. */
export function renderSearch(result: SearchDeviceResult, io: SearchOut): void {
  const s = style(io.color);
  const devices: (PatternDevice & Partial<RankedDevice>)[] = result.devices;
  const ranked = result.mode === "informal";
  if (result.mode === "informal") {
    const said = [
      result.understood.join(" · "),
      ...(result.intents ?? []).map((i) => `(${i})`),
      ...(result.selection ? [`(${result.selection})`] : []),
    ].join(" ");
    io.out(s.dim(`understood: ${one(said)}\n`));
    if (result.ignored?.length) io.out(s.dim(`set aside: ${one(result.ignored.join(", "))}\n`));
  }
  const head = ["Device", "Units", "Writable", "Description", ...(ranked ? ["Score", "Why"] : [])];
  const table = (list: (PatternDevice & Partial<RankedDevice>)[]) =>
    boxTable(
      head,
      list.map((d) => [
        one(d.name),
        one(d.units),
        d.writable ? "yes" : "",
        one(d.description),
        ...(ranked ? [one(d.score), one((d.matched ?? []).join(", "))] : []),
      ]),
      s,
      io.columns ?? Infinity,
    );
  if (devices.length) io.out(`${table(devices)}\n`);
  const { offset, total } = result;
  io.out(
    s.dim(
      devices.length
        ? `${offset + 1}–${offset + devices.length} of ${total}${
          result.next_offset !== undefined ? ` (next page: --offset ${result.next_offset})` : ""
        }\n`
        : `no devices match (${total} in all)\n`,
    ),
  );
  const empty = result.mode === "informal" && total === 0;
  if (result.mode === "informal" && empty && result.note) {
    // What nothing satisfied, then the nearest devices, apart: they are not the answer.
    io.out(`${one(result.note)}\n`);
    if (result.suggestions?.length) {
      io.out("nearest (not an answer: each lacks part of the question):\n");
      io.out(`${table(result.suggestions)}\n`);
    }
  }
  const near = result.nearest_families ?? [];
  if (near.length) {
    io.out("nearest families:\n");
    for (const f of near) {
      io.out(
        `  ${one(f.pattern)}  ${s.dim(`${one(f.devices)} devices, e.g. ${one(f.example)}`)}\n`,
      );
    }
  }
  if ("note" in result && result.note !== undefined && !empty) {
    io.err(`accel-agent: ${one(result.note)}\n`);
  }
}
