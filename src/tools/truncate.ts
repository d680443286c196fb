/**
 * Keeps tool output inside the model's budget: the head and the tail survive,
 * the middle is replaced by a note saying how much was cut.
 *
 * @module
 */

/**
 * Truncates `text` to about `max` characters, keeping 60% from the head and
 * the rest from the tail.
 *
 * @example
 * ```ts
 * truncateMiddle("x".repeat(50_000), 20_000).length; // about 20,000
 * ```
 */
export function truncateMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const noteRoom = 80;
  const keep = Math.max(0, max - noteRoom);
  const head = Math.ceil(keep * 0.6);
  const tail = keep - head;
  const cut = text.length - head - tail;
  return `${text.slice(0, head)}\n…[${cut} of ${text.length} characters cut; ask for less]…\n${
    tail > 0 ? text.slice(-tail) : ""
  }`;
}
