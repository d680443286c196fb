/**
 * The progress bar of `accel-agent eval`, one line redrawn in place.
 *
 * @module
 */

/**
 * `[#####·····] 12/44  11 passed  last: read-ring-current`, cut to `columns`.
 *
 * @example
 * ```ts
 * progressLine(1, 4, 1, "read-ring-current", 80); // "[#####···…] 1/4  1 passed  last: read-ring-current"
 * ```
 */
export function progressLine(
  done: number,
  total: number,
  passed: number,
  last: string,
  columns: number,
): string {
  const width = 20;
  const filled = total > 0 ? Math.round((done / total) * width) : width;
  const line = `[${"#".repeat(filled)}${"·".repeat(width - filled)}] ${done}/${total}  ` +
    `${passed} passed  last: ${last}`;
  const max = Math.max(10, columns - 1);
  return (line.length > max ? line.slice(0, max) : line.padEnd(max));
}
