/**
 * Terminal Markdown for streamed answers. Text arrives in arbitrary pieces;
 * complete lines are rendered as they come, the rest when the answer ends.
 * Handles what models write: headings, emphasis, inline code, fenced code,
 * lists, quotes, rules and tables (passed through, aligned by the model).
 * The text is the model's, so it is untrusted: it goes through
 * {@link UntrustedStream} (multi-line) before any styling, however it is split,
 * and the approval table's glyphs are escaped (the model's words are drawn
 * right above the approval screen of the plan it proposes; they must not draw
 * a table of their own). Only the program's own marks (a code block's, a
 * quote's, a rule) are drawn with them.
 *
 * @module
 */
import type { Style } from "./style.ts";
import { UntrustedStream } from "../../util/untrusted_text.ts";
import { withoutTableGlyphs } from "./screen_text.ts";

export class MarkdownStream {
  #buffer = "";
  #inFence = false;
  readonly #safe = new UntrustedStream({ multiline: true });
  /** Characters of the unfinished line already written raw (live mode). */
  #shown = 0;
  readonly #s: Style;
  readonly #out: (text: string) => void;
  readonly #columns?: () => number;

  /**
   * With `columns` (a terminal), unfinished lines are shown raw as they
   * stream and redrawn styled when complete, if they did not wrap.
   */
  constructor(s: Style, write: (text: string) => void, columns?: () => number) {
    this.#s = s;
    this.#out = write;
    this.#columns = columns;
  }

  /** Adds streamed text; renders every line completed by it. */
  push(delta: string): void {
    this.#buffer += withoutTableGlyphs(this.#safe.push(delta));
    let nl: number;
    while ((nl = this.#buffer.indexOf("\n")) >= 0) {
      this.#finishLine(this.#buffer.slice(0, nl));
      this.#buffer = this.#buffer.slice(nl + 1);
    }
    if (this.#columns && this.#buffer.length > this.#shown) {
      this.#out(this.#buffer.slice(this.#shown));
      this.#shown = this.#buffer.length;
    }
  }

  /** Renders what is left; call when the answer is complete. */
  end(): void {
    this.#buffer += withoutTableGlyphs(this.#safe.end());
    if (this.#buffer) this.#finishLine(this.#buffer);
    this.#buffer = "";
    this.#inFence = false;
  }

  /**
   * Takes the unfinished line shown raw off the screen (live mode), so a
   * status line can be drawn in its place; the next text draws it again. A
   * line that already wrapped stays, and what follows starts on a new row.
   */
  hold(): void {
    if (this.#shown === 0) return;
    if (this.#buffer.length < (this.#columns?.() ?? 0)) {
      this.#out("\r\x1b[2K");
      this.#shown = 0;
    } else {
      this.#out("\n");
    }
  }

  /** True when nothing is waiting to be rendered. */
  get empty(): boolean {
    return this.#buffer === "";
  }

  #finishLine(line: string): void {
    const rendered = this.renderLine(line);
    if (this.#shown === 0) {
      this.#out(`${rendered}\n`);
    } else if (line.length < (this.#columns?.() ?? 0)) {
      // The raw line is on one terminal row: replace it with its styled form.
      this.#out(`\r\x1b[2K${rendered}\n`);
    } else {
      this.#out(`${line.slice(this.#shown)}\n`);
    }
    this.#shown = 0;
  }

  renderLine(line: string): string {
    const s = this.#s;
    if (/^\s*(```|~~~)/.test(line)) {
      this.#inFence = !this.#inFence;
      return s.dim(
        line.trim().startsWith("```") && this.#inFence ? "┌" + "─".repeat(3) : "└" + "─".repeat(3),
      );
    }
    if (this.#inFence) return s.cyan(`│ ${line}`);
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const text = inline(heading[2] ?? "", s);
      return (heading[1] ?? "").length <= 2 ? s.bold(s.underline(text)) : s.bold(text);
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) return s.dim("─".repeat(40));
    const quote = /^>\s?(.*)$/.exec(line);
    if (quote) return s.dim("│ ") + s.italic(inline(quote[1] ?? "", s));
    const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
    if (bullet) return `${bullet[1]}  • ${inline(bullet[2] ?? "", s)}`;
    const numbered = /^(\s*)(\d+[.)])\s+(.*)$/.exec(line);
    if (numbered) return `${numbered[1]}  ${numbered[2]} ${inline(numbered[3] ?? "", s)}`;
    return inline(line, s);
  }
}

/** Inline spans: `code`, **bold**, *italic* / _italic_. Code spans are not styled further. */
export function inline(text: string, s: Style): string {
  const parts = text.split(/(`[^`]+`)/);
  return parts.map((part) => {
    if (part.length > 1 && part.startsWith("`") && part.endsWith("`")) {
      return s.cyan(part.slice(1, -1));
    }
    return part
      .replace(/\*\*([^*]+)\*\*/g, (_, t: string) => s.bold(t))
      .replace(/__([^_]+)__/g, (_, t: string) => s.bold(t))
      .replace(
        /(^|[^*\w])\*([^*\s][^*]*)\*(?!\*)/g,
        (_, pre: string, t: string) => pre + s.italic(t),
      )
      .replace(
        /(^|[^_\w])_([^_\s][^_]*)_(?!\w)/g,
        (_, pre: string, t: string) => pre + s.italic(t),
      );
  }).join("");
}
