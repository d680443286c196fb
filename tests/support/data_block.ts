/**
 * Tool results that carry text from outside reach the model inside a marked
 * data block (`src/agent/outside_text.ts`); tests that read what the model
 * read take the JSON out of it.
 *
 * @module
 */

/** The text inside a data block (`<data …>\n…\n</data …>`), or `content` as it is. */
export function dataBlockBody(content: string): string {
  const block = /^<data [^>\n]*>\n([\s\S]*)\n<\/data [^>\n]*>$/.exec(content);
  return block ? block[1] ?? "" : content;
}

/** A tool result the model read, parsed as JSON (from inside its data block when it has one). */
export function toolJson<T = Record<string, unknown>>(content: unknown): T {
  return JSON.parse(dataBlockBody(String(content))) as T;
}
