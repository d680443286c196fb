/**
 * Where the loop keeps the whole text of a tool result it cut for the model:
 * `<session dir>/tool-results/<call id>.txt` (mode 0600), beside the
 * session's file, so the operator can open it while the session lasts.
 *
 * Each is written aside and linked into place whole, under a name no other
 * result has (a call id used again, as models that number their calls per
 * message do, gets `-2`, `-3`…: the note an earlier call left in the
 * conversation keeps naming its own text), so a full disk leaves nothing
 * half-written. A session keeps its newest results within
 * {@link ResultLimits} (older ones are removed when a new one is saved); a
 * result too large for them is not kept, and the model's note says why.
 *
 * @module
 */
import { errorMessage } from "../util/errors.ts";

/** What a session keeps of whole results. */
export interface ResultLimits {
  /** Files kept, the newest. */
  files: number;
  /** Bytes of them all together. */
  bytes: number;
  /** Bytes of one: a larger result is not kept. */
  fileBytes: number;
}

export const RESULT_LIMITS: ResultLimits = {
  files: 100,
  bytes: 256 * 1024 * 1024,
  fileBytes: 16 * 1024 * 1024,
};

/**
 * A writer for `TurnOptions.keepFullResult`: saves `text` under
 * `<sessionDir>/tool-results/` and resolves to its path. `sessionDir` is
 * read at each call (the operator may resume another session).
 */
export function sessionResultWriter(
  sessionDir: () => string,
  limits: ResultLimits = RESULT_LIMITS,
): (callId: string, text: string) => Promise<string> {
  return async (callId, text) => {
    const bytes = new TextEncoder().encode(text);
    if (bytes.length > limits.fileBytes) {
      throw new Error(`larger than ${limits.fileBytes} bytes: not kept`);
    }
    const dir = `${sessionDir()}/tool-results`;
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    // Call ids come from the model: only a safe file name is used.
    const base = callId.replace(/[^\w-]/g, "_").slice(0, 100) || "call";
    const tmp = `${dir}/.${base}.${crypto.randomUUID().slice(0, 8)}.tmp`;
    try {
      await Deno.writeFile(tmp, bytes, { createNew: true, mode: 0o600 });
      for (let n = 1;; n++) {
        const path = `${dir}/${base}${n === 1 ? "" : `-${n}`}.txt`;
        try {
          // A link fails where a name is taken: the first free one gets the whole text.
          await Deno.link(tmp, path);
        } catch (e) {
          if (e instanceof Deno.errors.AlreadyExists && n < 10_000) continue;
          throw e;
        }
        await prune(dir, limits, path);
        return path;
      }
    } finally {
      await Deno.remove(tmp).catch(() => {});
    }
  };
}

/** Removes the oldest results past `limits`, never `kept` (the one just saved). */
async function prune(dir: string, limits: ResultLimits, kept: string): Promise<void> {
  const files: { path: string; size: number; at: number }[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.isFile || !e.name.endsWith(".txt")) continue;
      const path = `${dir}/${e.name}`;
      const st = await Deno.lstat(path).catch(() => undefined);
      if (st) files.push({ path, size: st.size, at: st.mtime?.getTime() ?? 0 });
    }
  } catch (e) {
    throw new Error(`cannot list ${dir} (${errorMessage(e)})`);
  }
  files.sort((a, b) => a.at - b.at || a.path.localeCompare(b.path));
  let total = files.reduce((n, f) => n + f.size, 0);
  let count = files.length;
  for (const f of files) {
    if (count <= limits.files && total <= limits.bytes) break;
    if (f.path === kept) continue;
    await Deno.remove(f.path).catch(() => {});
    count--;
    total -= f.size;
  }
}
