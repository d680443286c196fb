/**
 * The run's files leave the sandbox here. Python's /work is Pyodide's
 * in-memory file system (the worker has no write grant on the host at all);
 * when the run ends the worker lists it ({@link readWorkTree}) and the
 * process's main thread, which Python cannot reach, checks that list again
 * and writes it to the run's host directory ({@link writeWorkTree}): plain
 * directories and files with fixed modes, names checked, within the quota,
 * or nothing at all.
 *
 * The quota counts what a disk would: every entry costs an inode and its
 * name, and a file or directory whole blocks ({@link entryCharge}).
 *
 * @module
 */
import { stagingDir } from "./protocol.ts";

/** A file system block, the unit files and directories are charged in. */
export const BLOCK_BYTES = 4096;
/** What one entry costs besides its blocks: an inode and a directory record. */
export const INODE_BYTES = 256;
/** Longest host path Linux accepts (PATH_MAX, with its terminating NUL). */
export const PATH_MAX = 4096;
/** Longest name of one path component (NAME_MAX). */
export const NAME_MAX = 255;
/**
 * Most entries copied out of a run (a million empty files must not cost a
 * million writes); the rest stay in memory and are dropped with the process.
 */
export const MAX_ENTRIES = 10_000;

const encoder = new TextEncoder();

/** Quota bytes of one entry: its blocks (a directory takes one), an inode and its name. */
export function entryCharge(name: string, size: number, isDir = false): number {
  const blocks = isDir ? 1 : Math.ceil(size / BLOCK_BYTES);
  return blocks * BLOCK_BYTES + INODE_BYTES + encoder.encode(name).length;
}

/** One entry of the work tree, relative to /work. */
export interface WorkEntry {
  path: string;
  /** Absent for a directory. */
  data?: Uint8Array;
}

/** The tree, or why it cannot leave the sandbox (`overQuota` when that is the reason). */
export type WorkTree = { entries: WorkEntry[] } | { error: string; overQuota?: boolean };

/** Why a copy-out wrote nothing: in words, and whether it is the disk quota. */
export interface CopyOutFailure {
  error: string;
  overQuota: boolean;
}

/** The buffers of a tree's files, each once, to transfer rather than copy. */
export function treeBuffers(tree: WorkTree): ArrayBuffer[] {
  if (!("entries" in tree)) return [];
  const buffers = new Set<ArrayBuffer>();
  for (const e of tree.entries) if (e.data) buffers.add(e.data.buffer as ArrayBuffer);
  return [...buffers];
}

/** The parts of Emscripten's FS the listing needs. */
export interface TreeFs {
  /** Emscripten's switch for its own permission checks (the listing reads whatever Python left). */
  ignorePermissions?: boolean;
  readdir(path: string): string[];
  lstat(path: string): { mode: number; size: number };
  isDir(mode: number): boolean;
  isFile(mode: number): boolean;
  readFile(path: string): Uint8Array;
}

/**
 * Lists `root` in Pyodide's file system breadth first, directories before
 * what they hold, stopping as soon as the quota or the entry cap is passed.
 * Symbolic links and special files are left out (never followed).
 */
export function readWorkTree(fs: TreeFs, root: string, quotaBytes: number): WorkTree {
  const entries: WorkEntry[] = [];
  let charged = 0;
  const dirs = [""];
  const checked = fs.ignorePermissions;
  fs.ignorePermissions = true; // a directory Python made unreadable is still listed
  try {
    while (dirs.length) {
      const rel = dirs.shift() as string;
      for (const name of fs.readdir(rel ? `${root}/${rel}` : root)) {
        if (name === "." || name === "..") continue;
        if (entries.length >= MAX_ENTRIES) return { entries }; // the rest is not copied
        const path = rel ? `${rel}/${name}` : name;
        const st = fs.lstat(`${root}/${path}`);
        const isDir = fs.isDir(st.mode);
        charged += entryCharge(name, isDir ? 0 : st.size, isDir);
        if (charged > quotaBytes) return { error: overQuota(quotaBytes), overQuota: true };
        if (isDir) {
          dirs.push(path);
          entries.push({ path });
        } else if (fs.isFile(st.mode)) {
          entries.push({ path, data: fs.readFile(`${root}/${path}`) });
        }
      }
    }
  } catch (e) {
    return { error: `the work directory could not be listed (${oneLine(e)})` };
  } finally {
    fs.ignorePermissions = checked;
  }
  return { entries };
}

/**
 * Writes a listed tree into `workDir` (which must be empty). Everything is
 * checked before anything is written: each file's contents a plain buffer
 * (not shared with the interpreter's thread, not resizable), copied first
 * and charged at the size of the copy, which is what is written; each name
 * a plain path component of at most {@link NAME_MAX} bytes, each host path
 * shorter than {@link PATH_MAX}; the total within the quota. The tree is
 * written into the staging directory beside `workDir` and renamed onto it
 * when whole, so a copy-out that fails or is killed half-way leaves nothing
 * in `workDir` (the staging directory is removed on failure, and by the
 * agent when the process is gone). Files get mode 0600 and directories 0700:
 * private to the operator, like everything the program writes.
 * Returns why nothing was written, or undefined when all of it was.
 */
export function writeWorkTree(
  workDir: string,
  tree: unknown,
  quotaBytes: number,
): CopyOutFailure | undefined {
  const stage = stagingDir(workDir);
  const entries = checkedEntries(stage, tree, quotaBytes);
  if (!Array.isArray(entries)) return entries;
  if (!entries.length) return undefined;
  // Written synchronously: an asynchronous write is a trip through a thread
  // pool each (10,000 files took seconds on a busy machine), and nothing
  // else waits for this thread (the memory watch has a thread of its own).
  try {
    Deno.mkdirSync(stage, { mode: 0o700 });
    for (const e of entries) {
      const path = `${stage}/${e.path}`;
      // The umask can only take bits away from these modes.
      if (e.data === undefined) Deno.mkdirSync(path, { mode: 0o700 });
      else Deno.writeFileSync(path, e.data, { createNew: true, mode: 0o600 });
    }
    // The work directory is empty: the whole tree takes its place in one step.
    Deno.renameSync(stage, workDir);
  } catch (e) {
    try {
      Deno.removeSync(stage, { recursive: true });
    } catch {
      // the agent removes it once the process is gone
    }
    return {
      error: `the files could not be written to the run directory (${oneLine(e)})`,
      overQuota: false,
    };
  }
  return undefined;
}

/**
 * A copy of a file's contents when they are a plain buffer: a Uint8Array
 * over an ArrayBuffer that is neither shared (another thread could change
 * or grow it after the check) nor resizable. Undefined otherwise.
 */
export function plainCopy(data: unknown): Uint8Array | undefined {
  if (!(data instanceof Uint8Array)) return undefined;
  const buffer: unknown = data.buffer;
  if (!(buffer instanceof ArrayBuffer) || buffer.resizable) return undefined;
  return data.slice();
}

/** The entries to write below `dir`, each file's contents a copy; or why none may be. */
function checkedEntries(
  dir: string,
  tree: unknown,
  quotaBytes: number,
): WorkEntry[] | CopyOutFailure {
  const fail = (error: string, overQuota = false) => ({ error, overQuota });
  const list = (tree as { entries?: unknown })?.entries;
  if (!Array.isArray(list)) {
    // The worker's own words (its write counter or its listing found the quota passed).
    const { error, overQuota } = (tree ?? {}) as { error?: unknown; overQuota?: unknown };
    return typeof error === "string"
      ? fail(error.slice(0, 500), overQuota === true)
      : fail("the work directory was not listed");
  }
  if (list.length > MAX_ENTRIES) return fail(tooMany());
  const dirs = new Set([""]);
  const seen = new Set<string>();
  const base = encoder.encode(dir).length + 1;
  let charged = 0;
  const out: WorkEntry[] = [];
  for (const item of list as unknown[]) {
    const { path, data: given } = (item ?? {}) as { path?: unknown; data?: unknown };
    if (typeof path !== "string") return fail("the work directory's listing is malformed");
    // Copied before anything is checked: the copy is what is charged and written.
    const data = given === undefined ? undefined : plainCopy(given);
    if (given !== undefined && data === undefined) {
      return fail(
        "the work directory's listing is malformed (a file's contents are not a plain buffer)",
      );
    }
    const parts = path.split("/");
    const bad = parts.find((p) =>
      p === "" || p === "." || p === ".." || p.includes("\0") || encoder.encode(p).length > NAME_MAX
    );
    if (bad !== undefined) {
      return fail(
        `the run left a name that cannot be written: ${JSON.stringify(bad.slice(0, 80))}`,
      );
    }
    if (base + encoder.encode(path).length >= PATH_MAX) {
      return fail(
        `the run left a path longer than ${PATH_MAX} bytes: ${JSON.stringify(path.slice(0, 80))}…`,
      );
    }
    const parent = parts.slice(0, -1).join("/");
    if (!dirs.has(parent) || seen.has(path)) {
      return fail("the work directory's listing is malformed");
    }
    seen.add(path);
    if (data === undefined) dirs.add(path);
    charged += entryCharge(parts.at(-1) as string, data?.length ?? 0, data === undefined);
    if (charged > quotaBytes) return fail(overQuota(quotaBytes), true);
    out.push({ path, ...(data === undefined ? {} : { data }) });
  }
  return out;
}

function overQuota(quotaBytes: number): string {
  return `the run's files take more than the disk quota of ${quotaBytes / 1024 / 1024} MB`;
}

function tooMany(): string {
  return `the run left more than ${MAX_ENTRIES} files and directories`;
}

function oneLine(e: unknown): string {
  const errno = (e as { errno?: unknown } | null)?.errno;
  const text = e instanceof Error
    ? e.message || e.name
    : typeof errno === "number"
    ? `errno ${errno}`
    : String(e);
  return (text.split("\n").find((l) => l.trim()) ?? "unknown error").trim().slice(0, 300);
}
