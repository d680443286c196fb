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
import { isRefusal, readRegularText } from "../util/bounded_read.ts";

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
    // A directory others can write could have its key swapped: checked before the key is read.
    await checkPrivate(dir, "the keys directory", "700");
    let text = await readIfPresent(path);
    if (text === undefined) {
      await createKey(dir, path);
      text = await readIfPresent(path);
    }
    const bytes = decodeKey(text ?? "", path);
    await checkPrivate(path, "the key", "600");
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

/**
 * Refuses a key or its directory that other users can read or write, or
 * that belongs to another user: whoever can read the key can forge approvals
 * and audit entries, whoever can write it can swap it.
 */
async function checkPrivate(path: string, what: string, mode: string): Promise<void> {
  const info = await Deno.stat(path);
  const bits = (info.mode ?? 0) & 0o777;
  if (bits & 0o077) {
    const how = bits & 0o022 ? "written" : "read";
    throw new KeyError(
      `${path}: ${what} can be ${how} by other users (mode ${bits.toString(8)}); ` +
        `run chmod ${mode} ${path}`,
    );
  }
  const me = ownUid();
  if (me !== undefined && info.uid !== null && info.uid !== me) {
    throw new KeyError(
      `${path}: ${what} belongs to another user (uid ${info.uid}, not ${me}); ` +
        `use a state directory of your own ([state] dir)`,
    );
  }
}

/** This process's user id, or undefined where it cannot be asked (no `--allow-sys=uid`). */
function ownUid(): number | undefined {
  try {
    return Deno.uid() ?? undefined;
  } catch {
    return undefined;
  }
}

/** The largest key file read: 64 hex digits and a newline, with room. */
const MAX_KEY_BYTES = 4096;

async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readRegularText(path, MAX_KEY_BYTES, {
      fix: "remove it to make a new one (tokens it signed are revoked)",
    });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    if (isRefusal(e)) throw new KeyError(e.message);
    throw e;
  }
}

async function createKey(dir: string, path: string): Promise<void> {
  const hex = Array.from(crypto.getRandomValues(new Uint8Array(32)), toHex).join("");
  const tmp = `${dir}/.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.writeTextFile(tmp, `${hex}\n`, { mode: 0o600, createNew: true });
    await Deno.link(tmp, path);
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
  } finally {
    // Also after a write that failed half-way (a full disk): no partial key is left behind.
    await Deno.remove(tmp).catch(() => {});
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
