/**
 * Sessions saved as they go: one JSONL file per session under
 * `<state dir>/sessions/`, appended after every event of a turn, so a killed
 * process loses at most the call in flight. `--resume [ID]` and `/resume`
 * read one back: the conversation, its cost, and the sub-agents' final results.
 *
 * Records (one JSON object a line):
 * - `{"t":"meta","id","started_at","version":1}` first;
 * - `{"t":"message","m":ChatMessage}` appended as the conversation grows;
 * - `{"t":"reset","messages":[…]}` when compaction or /clear rewrote it;
 * - `{"t":"usage","usage":Usage,"by_model":{NAME:Usage}}` the session's running
 *   total and its part by configured model name (files saved before `by_model`
 *   was kept still load: their total stays unattributed);
 * - `{"t":"agent","run":RunInfo}` a sub-agent that ended.
 *
 * Each append writes its records whole or not at all (a failure, such as a
 * full disk, cuts the file back to what it was), and what could not be
 * written stays pending: the next save writes it again. A torn last line (a
 * process killed mid-append) is cut off into `<id>.jsonl.torn` before the
 * file is read or appended to, and reported, never fused into. Reading
 * checks every line against `SessionRecord` and stops at the first that is
 * not one, naming the file and line and leaving the file as it is.
 *
 * @module
 */
import { Session } from "../agent/session.ts";
import type { RunInfo } from "../agent/subagents/manager.ts";
import type { ChatMessage } from "../llm/types.ts";
import { type SessionRecord, SessionRecordSchema } from "../agent/session_records.ts";
import { CorruptFileError, parseJsonFile } from "../util/json_file.ts";
import { CliError, Exit } from "./exit.ts";
import { type AppendFs, appendWhole, cutTornTail, realAppendFs } from "../util/whole_append.ts";
import { errorMessage } from "../util/errors.ts";
import { isRefusal, readRegularText } from "../util/bounded_read.ts";
import { makePrivateDir } from "../util/private_files.ts";

/** The largest session file read back (a long session with its tool results). */
const MAX_SESSION_BYTES = 256 << 20;

/** A saved session, read back. */
export interface SavedSession {
  session: Session;
  /** Sub-agents that ended, last state of each. */
  runs: RunInfo[];
}

export class SessionStore {
  /** What of the current session is on disk: the array written from, and how much of it. */
  #saved: { id: string; array: ChatMessage[]; count: number; tokens: number } | undefined;

  /** Sessions whose file was checked for a torn tail in this process. */
  #checked = new Set<string>();
  /** Why the last save failed, while records are pending; undefined once saved. */
  unsaved: string | undefined;

  constructor(
    readonly dir: string,
    readonly opts: { fs?: AppendFs; onRecovered?: (message: string) => void } = {},
  ) {}

  path(id: string): string {
    return `${this.dir}/${id}.jsonl`;
  }

  /**
   * Appends what is new in the session since the last successful save (the
   * whole of it when it was rewritten). Messages count as saved only once
   * written; on failure they stay pending, {@link unsaved} says why, and a
   * {@link SessionSaveError} is thrown.
   */
  async save(session: Session): Promise<void> {
    const records: SessionRecord[] = [];
    let saved = this.#saved;
    if (!saved || saved.id !== session.id) {
      await makePrivateDir(this.dir);
      const exists = await Deno.stat(this.path(session.id)).then((i) => i.size > 0, () => false);
      if (!exists) {
        records.push({ t: "meta", id: session.id, started_at: session.startedAt, version: 1 });
      }
      saved = {
        id: session.id,
        array: session.messages,
        count: exists ? -1 : 0,
        tokens: exists ? -1 : 0,
      };
    }
    if (saved.array !== session.messages || saved.count < 0) {
      records.push({ t: "reset", messages: session.messages });
    } else {
      for (const m of session.messages.slice(saved.count)) records.push({ t: "message", m });
    }
    if (session.usage.totalTokens !== saved.tokens) {
      records.push({
        t: "usage",
        usage: session.usage,
        by_model: Object.fromEntries(session.usageByModel),
      });
    }
    const now = {
      id: session.id,
      array: session.messages,
      count: session.messages.length,
      tokens: session.usage.totalTokens,
    };
    await this.#append(session.id, records);
    this.#saved = now;
  }

  /** Records a sub-agent's end in the session's file. */
  async saveRun(sessionId: string, run: RunInfo): Promise<void> {
    await makePrivateDir(this.dir);
    await this.#append(sessionId, [{ t: "agent", run }]);
  }

  async #append(id: string, records: SessionRecord[]): Promise<void> {
    if (!records.length) return;
    const text = records.map((r) => JSON.stringify(r)).join("\n") + "\n";
    try {
      await this.#cutTorn(id);
      await appendWhole(
        this.opts.fs ?? realAppendFs,
        this.path(id),
        new TextEncoder().encode(text),
      );
    } catch (e) {
      this.unsaved = `the session could not be saved to ${this.path(id)} (${
        errorMessage(e)
      }); it is saved again after the next message`;
      throw new SessionSaveError(this.unsaved);
    }
    this.unsaved = undefined;
  }

  /** Cuts a torn last line off a session's file, once per session and process. */
  async #cutTorn(id: string): Promise<void> {
    if (this.#checked.has(id)) return;
    try {
      const report = await cutTornTail(this.path(id), MAX_SESSION_BYTES);
      if (report) this.opts.onRecovered?.(report);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    this.#checked.add(id);
  }

  /** Saved sessions, newest first. */
  async list(): Promise<{ id: string; modified: Date }[]> {
    const out: { id: string; modified: Date }[] = [];
    try {
      for await (const e of Deno.readDir(this.dir)) {
        if (!e.isFile || !e.name.endsWith(".jsonl")) continue;
        const info = await Deno.stat(`${this.dir}/${e.name}`);
        out.push({ id: e.name.slice(0, -6), modified: info.mtime ?? new Date(0) });
      }
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    return out.sort((a, b) => b.modified.getTime() - a.modified.getTime());
  }

  /** Reads a session back; `id` undefined means the newest. Throws CliError (exit 2) when absent. */
  async load(id?: string): Promise<SavedSession> {
    const known = await this.list();
    const chosen = id ?? known[0]?.id;
    if (!chosen || !/^[\w-]+$/.test(chosen) || !known.some((k) => k.id === chosen)) {
      const recent = known.slice(0, 5).map((k) => k.id).join(", ") || "none";
      throw new CliError(
        `${id ? `no saved session "${id}"` : "no saved session"} in ${this.dir}; recent: ${recent}`,
        Exit.USAGE,
      );
    }
    let text: string;
    try {
      await this.#cutTorn(chosen);
      text = await readRegularText(this.path(chosen), MAX_SESSION_BYTES, {
        fix: "resume another session, or move it aside",
      });
    } catch (e) {
      if (isRefusal(e)) throw new CliError(e.message, Exit.USAGE);
      throw e;
    }
    let session: Session | undefined;
    const runs = new Map<string, RunInfo>();
    const lines = text.split("\n").filter((l) => l.trim());
    for (const [i, line] of lines.entries()) {
      let r: SessionRecord;
      try {
        // Torn tails were cut off above: a complete line that is not a record was edited.
        r = parseJsonFile(SessionRecordSchema, line, {
          where: `${this.path(chosen)}:${i + 1}`,
          what: "a session record",
          fix: "the file is left as it is; resume another session, or move it aside",
        });
      } catch (e) {
        if (e instanceof CorruptFileError) throw new CliError(e.message, Exit.USAGE);
        throw e;
      }
      if (r.t === "meta") session = new Session(r.id, r.started_at);
      else if (!session) {
        throw new CliError(`${this.path(chosen)}: no meta record first`, Exit.USAGE);
      } else if (r.t === "message") session.messages.push(r.m);
      else if (r.t === "reset") session.messages = r.messages;
      else if (r.t === "usage") session.restoreUsage(r.usage, r.by_model);
      else if (r.t === "agent") runs.set(r.run.id, r.run);
    }
    if (!session) throw new CliError(`${this.path(chosen)}: empty session file`, Exit.USAGE);
    session.turns = session.userInputs().length;
    // Continue appending to the same file.
    this.#saved = {
      id: session.id,
      array: session.messages,
      count: session.messages.length,
      tokens: session.usage.totalTokens,
    };
    return { session, runs: [...runs.values()] };
  }
}

/** Records of a session could not be written; they stay pending for the next save. */
export class SessionSaveError extends Error {
  override name = "SessionSaveError";
}
