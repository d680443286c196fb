/**
 * Drafts on disk: `<state>/elog/drafts/<id>.json`, private (directory 0700,
 * files 0600), each replaced whole (written aside, synced, renamed) so a
 * killed process leaves the old draft or the new one, never half of one.
 * A draft that cannot be read is named in one line and left as it is. A lock
 * per draft keeps two processes from posting one draft at once.
 *
 * @module
 */
import { type Draft, DRAFT_ID, DraftSchema, MAX_DRAFT_FILE_BYTES } from "./draft.ts";
import { NotRegularFileError, readRegularText, TooLargeError } from "../util/bounded_read.ts";
import { readJson } from "../util/json_file.ts";
import { errorMessage } from "../util/errors.ts";
import { canonicalJson } from "../util/hash.ts";
import { withLockFile } from "../util/lock_file.ts";

/** A draft that is not there, or not a draft: one line saying which and what to do. */
export class DraftError extends Error {
  override name = "DraftError";
}

/** A draft that could not be saved (a full disk); `draft` is it, as it would have been saved. */
export class DraftSaveError extends Error {
  override name = "DraftSaveError";
  constructor(message: string, readonly draft?: Draft) {
    super(message);
  }
}

export class DraftStore {
  constructor(readonly dir: string) {}

  path(id: string): string {
    return `${this.dir}/${id}.json`;
  }

  /** Writes the draft whole: aside, synced, then renamed over the old one. */
  async save(d: Draft): Promise<void> {
    const tmp = `${this.path(d.id)}.${Deno.pid}.tmp`;
    try {
      await Deno.mkdir(this.dir, { recursive: true, mode: 0o700 });
      await Deno.writeTextFile(tmp, `${JSON.stringify(d, null, 2)}\n`, { mode: 0o600 });
      using f = await Deno.open(tmp, { read: true });
      await f.sync();
      await Deno.rename(tmp, this.path(d.id));
    } catch (e) {
      await Deno.remove(tmp).catch(() => {});
      throw new DraftSaveError(
        `cannot save the logbook draft ${this.path(d.id)} (${errorMessage(e)})`,
        d,
      );
    }
  }

  /** The draft `id`; a {@link DraftError} when it is missing or damaged. */
  async load(id: string): Promise<Draft> {
    return await readDraft(this.path(id));
  }

  /** Every draft file, newest first: the draft, or why it cannot be read. */
  async list(): Promise<{ id: string; path: string; draft?: Draft; error?: string }[]> {
    const out: { id: string; path: string; draft?: Draft; error?: string; mtime: number }[] = [];
    for (const id of await this.#ids()) {
      const path = this.path(id);
      const mtime = (await Deno.stat(path).catch(() => undefined))?.mtime?.getTime() ?? 0;
      try {
        out.push({ id, path, draft: await this.load(id), mtime });
      } catch (e) {
        out.push({ id, path, error: errorMessage(e), mtime });
      }
    }
    return out.sort((a, b) => b.mtime - a.mtime).map(({ mtime: _, ...x }) => x);
  }

  /**
   * The id a command line means: a draft id, its first characters (at least
   * 4, naming one draft), or the path of a draft file. A file elsewhere is
   * taken into this directory (under its own id) unless a draft of that id
   * is here already.
   */
  async resolve(ref: string): Promise<string> {
    if (ref.includes("/") || ref.endsWith(".json")) {
      const draft = await readDraft(ref);
      const here = this.path(draft.id);
      const known = await Deno.stat(here).then(() => true, () => false);
      if (!known) await this.save(draft);
      // The same draft with other content: which one is meant is the operator's to say.
      else if (ref !== here && canonicalJson(await this.load(draft.id)) !== canonicalJson(draft)) {
        throw new DraftError(
          `${ref} holds draft ${draft.id}, which is among the drafts already with other content; ` +
            `post that one by its id (accel-agent elog post ${draft.id}) or remove one of them`,
        );
      }
      return draft.id;
    }
    if (DRAFT_ID.test(ref)) return ref;
    if (!/^[0-9a-f-]{4,36}$/.test(ref)) {
      throw new DraftError(
        `"${ref}" is not a draft id; accel-agent elog list shows the drafts and their ids`,
      );
    }
    const hits = (await this.#ids()).filter((id) => id.startsWith(ref));
    if (hits.length === 1) return hits[0] as string;
    throw new DraftError(
      hits.length
        ? `"${ref}" names ${hits.length} drafts (${
          hits.slice(0, 3).join(", ")
        }…); give more of the id`
        : `no logbook draft ${ref} in ${this.dir}; accel-agent elog list shows the drafts`,
    );
  }

  /** Runs `body` holding the draft's lock (other processes wait). */
  async locked<T>(id: string, body: () => Promise<T>): Promise<T> {
    await Deno.mkdir(this.dir, { recursive: true, mode: 0o700 });
    return await withLockFile(`${this.dir}/${id}.lock`, body);
  }

  async #ids(): Promise<string[]> {
    const ids: string[] = [];
    try {
      for await (const e of Deno.readDir(this.dir)) {
        const id = e.name.replace(/\.json$/, "");
        if (e.isFile && e.name.endsWith(".json") && DRAFT_ID.test(id)) ids.push(id);
      }
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    return ids.sort();
  }
}

/** The draft in the file at `path`, or a one-line {@link DraftError}. */
export async function readDraft(path: string): Promise<Draft> {
  let text: string;
  try {
    text = await readRegularText(path, MAX_DRAFT_FILE_BYTES);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new DraftError(`no logbook draft at ${path}; accel-agent elog list shows the drafts`);
    }
    if (e instanceof NotRegularFileError || e instanceof TooLargeError) {
      throw new DraftError(`${e.message}: not a logbook draft; the file is left as it is`);
    }
    throw new DraftError(`cannot read the logbook draft ${path} (${errorMessage(e)})`);
  }
  const read = readJson(DraftSchema, text);
  if (read.ok) return read.value;
  throw new DraftError(
    `${path}: not a logbook draft (${read.why}); the file is left as it is: ` +
      "post from a draft the program wrote, or remove this one",
  );
}
