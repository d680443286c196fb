/**
 * What was thrown, read without casts: `catch (e)` gives `unknown`, and a
 * library or a script may throw a string or a plain object as well as an
 * `Error`.
 *
 * @module
 */

/**
 * The message of anything thrown: an `Error`'s (or an error-like object's)
 * `message`, else its text.
 *
 * @example
 * ```ts
 * try {
 *   await Deno.readTextFile(path);
 * } catch (e) {
 *   throw new TypeError(`${path}: cannot read it (${errorMessage(e)})`);
 * }
 * ```
 */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (e !== null && typeof e === "object" && "message" in e && typeof e.message === "string") {
    return e.message;
  }
  return String(e);
}

/** Anything thrown as an `Error`: itself when it is one, else an `Error` with its message. */
export function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(errorMessage(e));
}
