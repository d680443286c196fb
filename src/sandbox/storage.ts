/**
 * Deno's persistent web storage — the Cache API and localStorage — writes
 * below `$DENO_DIR/location_data`, whatever the write grant says, and a later
 * process reads it back. The sandbox process and its worker remove these
 * globals before any Python runs.
 *
 * @module
 */

const PERSISTENT = [
  "caches",
  "CacheStorage",
  "Cache",
  "localStorage",
  "sessionStorage",
  "Storage",
] as const;

/** Deletes the persistent storage globals (they are configurable accessors). */
export function dropPersistentStorage(): void {
  for (const name of PERSISTENT) {
    Reflect.deleteProperty(globalThis, name);
  }
}

/** Names of persistent storage globals still present. */
export function persistentStorageLeft(): string[] {
  return PERSISTENT.filter((name) => name in globalThis);
}
