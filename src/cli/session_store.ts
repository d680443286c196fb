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
 * @module
 */
import { Session } from "../agent/session.ts";
import type { RunInfo } from "../agent/subagents/manager.ts";
import type { ChatMessage, Usage } from "../llm/types.ts";
import { CliError, Exit } from "./exit.ts";

type SessionRecord =
  | { t: "meta"; id: string; started_at: number; version: 1 }
  | { t: "message"; m: ChatMessage }
  | { t: "reset"; messages: ChatMessage[] }
  | { t: "usage"; usage: Usage; by_model?: Record<string, Usage> }
  | { t: "agent"; run: RunInfo };

/** A saved session, read back. */
export interface SavedSession {
  session: Session;
  /** Sub-agents that ended, last state of each. */
  runs: RunInfo[];
}

export class SessionStore {
  /** What of the current session is on disk: the array written from, and how much of it. */
  #saved: { id: string; array: ChatMessage[]; count: number; tokens: number } | undefined;

  constructor(readonly dir: string) {}

  path(id: string): string {
    return `${this.dir}/${id}.jsonl`;
  }

  /** Appends what is new in the session since the last call (the whole of it when it was rewritten). */
  async save(session: Session): Promise<void> {
    const records: SessionRecord[] = [];
    let saved = this.#saved;
    if (!saved || saved.id !== session.id) {
      await Deno.mkdir(this.dir, { recursive: true });
      const exists = await Deno.stat(this.path(session.id)).then(() => true, () => false);
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
    this.#saved = {
      id: session.id,
      array: session.messages,
      count: session.messages.length,
      tokens: session.usage.totalTokens,
    };
    await this.#append(session.id, records);
  }

  /** Records a sub-agent's end in the session's file. */
  async saveRun(sessionId: string, run: RunInfo): Promise<void> {
    await Deno.mkdir(this.dir, { recursive: true });
    await this.#append(sessionId, [{ t: "agent", run }]);
  }

  async #append(id: string, records: SessionRecord[]): Promise<void> {
    if (!records.length) return;
    const text = records.map((r) => JSON.stringify(r)).join("\n") + "\n";
    await Deno.writeTextFile(this.path(id), text, { append: true });
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
    const text = await Deno.readTextFile(this.path(chosen));
    let session: Session | undefined;
    const runs = new Map<string, RunInfo>();
    const lines = text.split("\n").filter((l) => l.trim());
    for (const [i, line] of lines.entries()) {
      let r: SessionRecord;
      try {
        r = JSON.parse(line) as SessionRecord;
      } catch {
        // A line torn by a killed process can only be the last one.
        if (i === lines.length - 1) break;
        throw new CliError(`${this.path(chosen)}:${i + 1}: not a session record`, Exit.USAGE);
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
