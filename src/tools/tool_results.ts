/**
 * Where the loop keeps the whole text of a tool result it cut for the model:
 * `<session dir>/tool-results/<call id>.txt` (mode 0600), beside the
 * session's file, so the operator can open it while the session lasts.
 *
 * @module
 */

/**
 * A writer for `TurnOptions.keepFullResult`: saves `text` under
 * `<sessionDir>/tool-results/` and resolves to its path. `sessionDir` is
 * read at each call (the operator may resume another session).
 */
export function sessionResultWriter(
  sessionDir: () => string,
): (callId: string, text: string) => Promise<string> {
  return async (callId, text) => {
    const dir = `${sessionDir()}/tool-results`;
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    // Call ids come from the model: only a safe file name is used.
    const path = `${dir}/${callId.replace(/[^\w-]/g, "_").slice(0, 100) || "call"}.txt`;
    await Deno.writeTextFile(path, text, { mode: 0o600 });
    return path;
  };
}
