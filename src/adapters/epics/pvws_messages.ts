/**
 * The pvws messages themselves, apart from the connection: how a PV's
 * updates merge into its state, how large an incoming message is (to refuse
 * one over the limit), and how outgoing subscribe and clear lists are cut to
 * fit the server's message limit.
 *
 * @module
 */

/** A PV's merged update: the first message's metadata plus every later delta. */
export type PvState = Record<string, unknown>;

/** The fields that carry a value; an update with any of them replaces all of them. */
const VALUE_FIELDS = ["value", "text", "b64dbl", "b64flt", "b64int", "b64srt", "b64byt"];

/**
 * Merges a delta over the state. A new value in one field makes the others
 * stale (a disconnect's `"NaN"` after an array, an array after a `"NaN"`),
 * so they are dropped; metadata (units, limits, labels) carries over.
 */
export function mergeUpdate(state: PvState | undefined, msg: PvState): PvState {
  const merged = { ...state };
  if (VALUE_FIELDS.some((f) => f in msg)) { for (const f of VALUE_FIELDS) delete merged[f]; }
  return { ...merged, ...msg };
}

/** Default of `PvwsOptions.maxFrameBytes`: 16 MiB. */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** The size in bytes of a WebSocket message, counting no further than needed. */
export function messageBytes(data: unknown, limit: number): number {
  if (typeof data === "string") {
    // UTF-8 takes one to three bytes per UTF-16 unit: encode only when that decides.
    if (data.length > limit || data.length * 3 <= limit) return data.length;
    return new TextEncoder().encode(data).byteLength;
  }
  if (data instanceof ArrayBuffer) return data.byteLength;
  if (data instanceof Blob) return data.size;
  return 0;
}

/** A size in MiB for messages: "16 MiB", "16.5 MiB". */
export function mib(n: number): string {
  return `${(n / (1024 * 1024)).toFixed(n % (1024 * 1024) ? 1 : 0)} MiB`;
}

/** Tomcat's default text-message limit is 8192 bytes; stay below it. */
const MAX_MESSAGE_BYTES = 8000;

/** `names` in lists whose subscribe or clear message stays under the server's limit. */
export function* chunks(names: string[]): Generator<string[]> {
  let chunk: string[] = [];
  let bytes = 40;
  for (const name of names) {
    const size = name.length + 3;
    if (chunk.length && bytes + size > MAX_MESSAGE_BYTES) {
      yield chunk;
      chunk = [];
      bytes = 40;
    }
    chunk.push(name);
    bytes += size;
  }
  if (chunk.length) yield chunk;
}
