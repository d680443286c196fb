/**
 * The originals of a run as the keyed audit holds them: its `write_ahead`
 * record, taken only after its hash and, with the audit key, its MAC check
 * out. This, not the run's marker, is what a recovery restores to: a marker
 * is a file anyone with the account can edit, an entry of the keyed audit
 * cannot be edited without the edit being seen.
 *
 * @module
 */
import { z } from "zod";
import type { Value } from "../adapters/adapter.ts";
import { type AuditEntry, type AuditLog, entryHash, entryMac } from "../safety/audit.ts";
import { readAuditFile } from "../safety/audit_chain.ts";
import { sameText } from "../safety/keys.ts";
import { errorMessage } from "../util/errors.ts";

/** A run's write-ahead record, checked. */
export interface WriteAhead {
  run: string;
  planHash: string;
  /** When it was recorded. */
  time: string;
  /** Each device the plan could write, with its value just before the plan (null: unreadable). */
  originals: Record<string, Value | null>;
}

export type FoundWriteAhead = { ok: true; record: WriteAhead } | { ok: false; why: string };

const ValueSchema = z.union([z.number(), z.string(), z.boolean(), z.array(z.number())]);

const EntrySchema = z.looseObject({
  run: z.string(),
  status: z.literal("write_ahead"),
  planHash: z.string(),
  time: z.string(),
  hash: z.string(),
  mac: z.string().optional(),
  originals: z.record(z.string(), ValueSchema.nullable()),
});

/**
 * Finds the write-ahead record of `run` in the audit, newest day first, and
 * checks it. Not found, not an entry, a hash that does not match or a MAC
 * that does not (or none in a log with a key) are each one reason.
 */
export async function findWriteAhead(audit: AuditLog, run: string): Promise<FoundWriteAhead> {
  const needle = `"run":${JSON.stringify(run)}`;
  let files: string[];
  try {
    files = await audit.files();
  } catch (e) {
    return { ok: false, why: `the audit in ${audit.dir} cannot be read (${errorMessage(e)})` };
  }
  for (const file of [...files].reverse()) {
    let text: string;
    try {
      text = await readAuditFile(file);
    } catch (e) {
      return { ok: false, why: `${file} cannot be read (${errorMessage(e)})` };
    }
    const lines = text.split("\n");
    for (let i = lines.length - 1; i >= 0; i--) {
      const line = lines[i] as string;
      if (!line.includes(needle) || !line.includes('"write_ahead"')) continue;
      const found = await checkEntry(audit, line, `${file}:${i + 1}`, run);
      if (found) return found;
    }
  }
  return { ok: false, why: `the audit in ${audit.dir} holds no write-ahead record of run ${run}` };
}

/** The checked record when `line` is the write-ahead entry of `run`; undefined when it is another line. */
async function checkEntry(
  audit: AuditLog,
  line: string,
  where: string,
  run: string,
): Promise<FoundWriteAhead | undefined> {
  const bad = (why: string): FoundWriteAhead => ({
    ok: false,
    why: `the write-ahead record of run ${run} (${where}) ${why}`,
  });
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined; // not an entry at all: the chain's check (audit verify) says so
  }
  const kind = z.looseObject({ run: z.literal(run), status: z.literal("write_ahead") });
  if (!kind.safeParse(raw).success) return undefined;
  const parsed = EntrySchema.safeParse(raw);
  if (!parsed.success) return bad("is not a whole write-ahead entry");
  const broken = await integrityProblem(audit, raw as AuditEntry);
  if (broken) return bad(broken);
  const e = parsed.data;
  return {
    ok: true,
    record: { run, planHash: e.planHash, time: e.time, originals: e.originals },
  };
}

/** Why an entry of the audit cannot be trusted (its hash, or its MAC in a keyed audit); undefined when it can. */
async function integrityProblem(audit: AuditLog, entry: AuditEntry): Promise<string | undefined> {
  const { hash, mac, ...body } = entry;
  if (await entryHash(body) !== hash) return "does not match its hash: it was edited";
  let key: CryptoKey | undefined;
  try {
    key = await audit.opts.key?.();
  } catch (e) {
    return `cannot be checked: the audit key cannot be read (${errorMessage(e)})`;
  }
  if (!key) return undefined;
  if (mac === undefined) return "carries no MAC in a keyed audit";
  if (!sameText(await entryMac(key, hash), mac)) {
    return "carries a MAC the audit key did not make: it was rewritten";
  }
  return undefined;
}

/** How a run ended, as an intact entry of the audit records it. */
export interface RunEnd {
  /** `completed`, `failed`, `aborted`, `refused`, `recovered`, `dismissed`… */
  status: string;
  time: string;
}

const EndSchema = z.looseObject({
  run: z.string(),
  time: z.string(),
  decision: z.string(),
  status: z.string().optional(),
  restores: z.array(z.looseObject({ ok: z.boolean() })).optional(),
});

/**
 * The intact audit entry, if any, that says `run` ended with nothing left to
 * restore: it completed or was refused; it failed or was aborted with every
 * restore confirmed; or it was recovered or dismissed. (A run that ended with
 * a restore not confirmed stays open: its marker keeps that outcome.)
 */
export async function findRunEnd(audit: AuditLog, run: string): Promise<RunEnd | undefined> {
  const needle = `"run":${JSON.stringify(run)}`;
  for (const file of [...(await audit.files())].reverse()) {
    const lines = (await readAuditFile(file)).split("\n");
    for (let i = lines.length - 1; i >= 0; i--) {
      const line = lines[i] as string;
      if (!line.includes(needle)) continue;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch {
        continue;
      }
      const e = EndSchema.safeParse(raw);
      if (!e.success || e.data.run !== run) continue;
      const { decision, status = decision, restores = [], time } = e.data;
      const ended = status === "completed" || status === "refused" ||
        decision === "recovered" || decision === "dismissed" ||
        ((status === "failed" || status === "aborted") && restores.every((r) => r.ok));
      if (ended && !(await integrityProblem(audit, raw as AuditEntry))) {
        return {
          status: decision === "recovered" || decision === "dismissed" ? decision : status,
          time,
        };
      }
    }
  }
  return undefined;
}
