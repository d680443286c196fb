/**
 * Temporary directories for tests, removed with everything in them when the
 * test ends (`await using dir = await tempDir()`), or, for one a whole test
 * file shares, when the file's tests have run — passed or failed.
 *
 * @module
 */

/** A temporary directory, removed with its contents when disposed. */
export interface TempDir extends AsyncDisposable {
  readonly path: string;
}

/** A new temporary directory; `await using` removes it when the test ends. */
export async function tempDir(prefix?: string): Promise<TempDir> {
  const path = await Deno.makeTempDir(prefix ? { prefix } : {});
  return { path, [Symbol.asyncDispose]: () => removeTree(path) };
}

/**
 * Removes a directory and everything in it; gone already is fine. A child
 * process that is just ending may still add a file while it is being
 * removed, so "not empty" is tried again a few times.
 */
export async function removeTree(path: string): Promise<void> {
  for (let attempt = 1;; attempt++) {
    try {
      await Deno.remove(path, { recursive: true });
      return;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return;
      if (attempt >= 5) throw e;
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}

/**
 * A temporary directory for every test of the file that makes it (at module
 * level), removed when the file's tests have run.
 */
export function fileTempDir(prefix?: string): string {
  const path = Deno.makeTempDirSync(prefix ? { prefix } : {});
  removeAtUnload(path);
  return path;
}

/**
 * Removes `path` when this test file's tests have run, after `first` (e.g.
 * killing a process that works in it). Synchronous, as an `unload` handler
 * must be: asynchronous work started there never finishes.
 */
export function removeAtUnload(path: string, first?: () => void): void {
  globalThis.addEventListener("unload", () => {
    try {
      first?.();
    } finally {
      removeTreeSync(path);
    }
  });
}

function removeTreeSync(path: string): void {
  for (let attempt = 1;; attempt++) {
    try {
      Deno.removeSync(path, { recursive: true });
      return;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return;
      if (attempt >= 5) throw e;
    }
  }
}
