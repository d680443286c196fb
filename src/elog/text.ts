/**
 * Text that goes into a logbook entry from outside the program — plan text,
 * the operator's question, facility values, the model's summary — made so it
 * cannot pass for anything else: control and invisible characters become
 * visible escapes (as the terminal shows them), inline text has every
 * Markdown character escaped (a model cannot add a table row, a heading or
 * a link), and the model's summary sits in a code fence longer than any
 * run of backticks in it. Everything is capped.
 *
 * @module
 */
import { untrusted } from "../util/untrusted_text.ts";

/**
 * ASCII punctuation that can start Markdown structure inside a line (or, `&`,
 * an entity that would decode to any character). Inline text never starts a
 * line here, so list and quote markers need no escape.
 */
const MARKDOWN = /[\\`*_[\]<>#|~!&]/g;

/** `text` cut to `max` characters, saying how much was left out. */
export function capped(text: string, max: number): string {
  if (text.length <= max) return text;
  // Never split a surrogate pair.
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}… (${text.length - end} more characters left out)`;
}

/**
 * One line of outside text inside Markdown: escapes visible, line breaks as
 * `\n`, every Markdown character escaped, at most `max` characters (before
 * escaping).
 */
export function inline(text: string, max = 300): string {
  return untrusted(capped(text, max)).replace(MARKDOWN, (c) => `\\${c}`);
}

/**
 * A code span (a device name, a value): shown as written, escapes visible,
 * delimited by more backticks than it holds; `|` escaped, as a table cell
 * needs.
 */
export function code(text: string, max = 300): string {
  const body = untrusted(capped(text, max));
  const longest = Math.max(0, ...[...body.matchAll(/`+/g)].map((m) => m[0].length));
  const tick = "`".repeat(longest + 1);
  const pad = body.startsWith("`") || body.endsWith("`") ? " " : "";
  return `${tick}${pad}${body.replaceAll("|", "\\|")}${pad}${tick}`;
}

/** A value read from the machine, for a table cell. */
export function valueCell(v: unknown): string {
  if (v === null || v === undefined) return "–";
  if (Array.isArray(v)) return `[${v.length} values]`;
  if (typeof v === "number") return String(v);
  return code(String(v), 80);
}

/**
 * Outside text of several lines, shown verbatim: escapes visible, in a code
 * fence no line of it can close. At most `max` characters.
 */
export function fenced(text: string, max: number): string {
  const body = untrusted(capped(text.trim(), max), { multiline: true });
  const longest = Math.max(0, ...[...body.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}text\n${body}\n${fence}`;
}

/** A title: one line, escapes visible, at most `max` characters. */
export function titleText(text: string, max = 200): string {
  return untrusted(capped(text.replace(/\s+/g, " ").trim(), max));
}
