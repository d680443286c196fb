/**
 * Secrets kept in the state directory (`<state>/keys/NAME.key`, 0600 in a
 * 0700 directory, created on first use): the approval key that signs
 * approval tokens and the audit key that chains the audit log. They never
 * reach the model's context, and the configuration is refused when the
 * Python sandbox would be granted a read of them.
 *
 * @module
 */
import { errorMessage } from "../util/errors.ts";
import { readRegularText } from "../util/bounded_read.ts";

/** A key that cannot be created, read or kept private; nothing keyed may proceed without it. */
export class KeyError extends Error {
  override name = "KeyError";
}

/** The secrets used by the program. */
export type KeyName = "approval" | "audit";

/** The directory of the keys under a state directory. */
export function keysDir(stateDir: string): string {
  return `${stateDir}/keys`;
}

/**
 * The HMAC-SHA256 key NAME of a state directory, created (32 random bytes,
 * mode 0600) when absent. Two processes creating it at once agree on one key:
 * it is written aside and linked into place, which fails if it exists.
 */
export async function loadKey(stateDir: string, name: KeyName): Promise<CryptoKey> {
  const dir = keysDir(stateDir);
  const path = `${dir}/${name}.key`;
  try {
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    let text = await readIfPresent(path);
    if (text === undefined) {
      await createKey(dir, path);
      text = await readIfPresent(path);
    }
    const bytes = decodeKey(text ?? "", path);
    const mode = (await Deno.stat(path)).mode;
    if (mode !== null && (mode & 0o077) !== 0) {
      throw new KeyError(
        `${path}: the key is readable by other users (mode ${(mode & 0o777).toString(8)}); ` +
          `run chmod 600 on it`,
      );
    }
    return await crypto.subtle.importKey(
      "raw",
      bytes,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"],
    );
  } catch (e) {
    if (e instanceof KeyError) throw e;
    throw new KeyError(`${path}: cannot read or create the ${name} key (${errorMessage(e)})`);
  }
}

/** A key file is 65 bytes; anything that is not a small regular file is refused, never waited on. */
const MAX_KEY_BYTES = 4096;

async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    // A FIFO would block the open, /dev/zero never end: both are refused after a stat.
    return await readRegularText(path, MAX_KEY_BYTES);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}

async function createKey(dir: string, path: string): Promise<void> {
  const hex = Array.from(crypto.getRandomValues(new Uint8Array(32)), toHex).join("");
  const tmp = `${dir}/.${crypto.randomUUID()}.tmp`;
  await Deno.writeTextFile(tmp, `${hex}\n`, { mode: 0o600, createNew: true });
  try {
    await Deno.link(tmp, path);
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
  } finally {
    await Deno.remove(tmp);
  }
}

function decodeKey(text: string, path: string): Uint8Array<ArrayBuffer> {
  const hex = text.trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new KeyError(`${path}: not a key (64 hex digits expected); remove it to make a new one`);
  }
  return Uint8Array.from(hex.match(/../g) ?? [], (b) => parseInt(b, 16));
}

function toHex(b: number): string {
  return b.toString(16).padStart(2, "0");
}

/** HMAC-SHA256 of text, base64url without padding. */
export async function macOf(key: CryptoKey, text: string): Promise<string> {
  const sig = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(text));
  return base64url(new Uint8Array(sig));
}

/** Bytes as base64url without padding. */
export function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
}

/** Compares two strings in time independent of where they differ. */
export function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Why the sandbox could read the keys of `stateDir`, or undefined when it
 * cannot: `roots` are the directories the sandbox is granted (real paths
 * where they exist). A root that contains the keys directory, or lies inside
 * it, exposes them.
 */
export function keysExposedBy(
  stateDir: string,
  roots: { path: string; what: string }[],
): string | undefined {
  const keys = realOrSelf(keysDir(stateDir));
  for (const r of roots) {
    const root = realOrSelf(r.path);
    if (inside(keys, root) || inside(root, keys)) {
      return `${r.what} ${r.path} gives the Python sandbox a read of ${keys}, where the approval ` +
        `and audit keys are kept; choose a directory that does not contain [state] dir`;
    }
  }
  return undefined;
}

/** `path` with symbolic links resolved as far as it exists. */
function realOrSelf(path: string): string {
  const clean = path.replace(/\/+$/, "") || "/";
  try {
    return Deno.realPathSync(clean);
  } catch {
    const at = clean.lastIndexOf("/");
    if (at <= 0) return clean;
    const parent = realOrSelf(clean.slice(0, at));
    return `${parent === "/" ? "" : parent}${clean.slice(at)}`;
  }
}

function inside(path: string, dir: string): boolean {
  return dir === "/" || path === dir || path.startsWith(`${dir}/`);
}
