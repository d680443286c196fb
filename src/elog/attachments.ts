/**
 * Files sent with an entry come from the scans and work directories only:
 * each path is canonicalised (symlinks resolved) and must still lie inside
 * one of them, must be a regular file, and is read up to a byte cap. Its
 * SHA-256 is taken when the draft is made, and a file whose bytes differ
 * when it is posted (changed, replaced, a hard link to something else) is
 * not sent: the entry's data are the run's. A file that fails any of this
 * is left out and named, never sent.
 *
 * @module
 */
import type { LogbookAttachment } from "../adapters/logbook.ts";
import { errorMessage } from "../util/errors.ts";
import { sha256Hex } from "../util/hash.ts";

const TYPES: Record<string, string> = {
  csv: "text/csv",
  svg: "image/svg+xml",
  png: "image/png",
  json: "application/json",
  txt: "text/plain",
};

/**
 * The attachments that may go, and one line for each that may not. With
 * `sha256` (the draft's), a file must hold the bytes it held then.
 */
export async function readAttachments(
  paths: string[],
  roots: string[],
  maxBytes: number,
  sha256?: Record<string, string>,
): Promise<{ files: LogbookAttachment[]; refused: string[] }> {
  const real = await realRoots(roots);
  const files: LogbookAttachment[] = [];
  const refused: string[] = [];
  for (const path of paths) {
    try {
      const file = await readOne(path, real, maxBytes);
      if (sha256) {
        const then = sha256[path];
        if (then === undefined) throw new Error("it could not be read when the draft was made");
        if (await sha256Hex(file.bytes) !== then) {
          throw new Error("it changed after the draft was made");
        }
      }
      files.push(file);
    } catch (e) {
      refused.push(`${path}: not attached (${errorMessage(e)})`);
    }
  }
  return { files, refused };
}

/** The SHA-256 of each attachment that may go now (the others are left out, and refused when posted). */
export async function attachmentDigests(
  paths: string[],
  roots: string[],
  maxBytes: number,
): Promise<Record<string, string>> {
  const real = await realRoots(roots);
  const out: Record<string, string> = {};
  for (const path of paths) {
    try {
      out[path] = await sha256Hex((await readOne(path, real, maxBytes)).bytes);
    } catch {
      // Said when the draft is posted.
    }
  }
  return out;
}

async function realRoots(roots: string[]): Promise<string[]> {
  return (await Promise.all(roots.map((r) => Deno.realPath(r).catch(() => undefined))))
    .filter((r): r is string => r !== undefined);
}

async function readOne(path: string, roots: string[], maxBytes: number) {
  const canonical = await Deno.realPath(path);
  if (!roots.some((r) => canonical.startsWith(`${r}/`))) {
    throw new Error("it is not in the scans or work directory");
  }
  // Checked before it is opened: opening a FIFO would wait for a writer.
  if (!(await Deno.stat(canonical)).isFile) throw new Error("it is not a regular file");
  using f = await Deno.open(canonical, { read: true });
  const info = await f.stat();
  if (!info.isFile) throw new Error("it is not a regular file");
  if (info.size > maxBytes) {
    throw new Error(`${info.size} bytes, more than [elog] attachment_max_bytes (${maxBytes})`);
  }
  const bytes = new Uint8Array(info.size);
  let off = 0;
  while (off < bytes.length) {
    const n = await f.read(bytes.subarray(off));
    if (n === null) break;
    off += n;
  }
  const name = canonical.slice(canonical.lastIndexOf("/") + 1);
  const ext = name.slice(name.lastIndexOf(".") + 1).toLowerCase();
  return {
    name,
    contentType: TYPES[ext] ?? "application/octet-stream",
    bytes: bytes.subarray(0, off),
  };
}
