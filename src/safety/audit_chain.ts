/**
 * The audit chain's parts that an append and `audit verify` share: the
 * entry and head types, hashes and MACs, reading audit files within a cap,
 * and the checks of one entry with the words both say them in.
 *
 * @module
 */
import { canonicalJson, sha256Hex } from "../util/hash.ts";
import { macOf, sameText } from "./keys.ts";
import { readJson } from "../util/json_file.ts";
import { isRefusal, readRegularBytes, readRegularText } from "../util/bounded_read.ts";
import { z } from "zod";

/** The limits and kill switches a decision was made under. */
export interface SafetyState {
  /** The limits file as read, and the SHA-256 of its bytes ("" when there is none). */
  limitsFile: string;
  limitsHash: string;
  /** Writes allowed after every switch. */
  writesEnabled: boolean;
  /** `[safety] writes_enabled` of the user's config. */
  configWritesEnabled: boolean;
  /** Why the config file could not be read again for its switch (writes are then off). */
  configError?: string;
  /** Every site file consulted: its path and what it says (false when unreadable). */
  site: { file: string; writesEnabled: boolean; error?: string }[];
}

/** What a caller records; the log adds time, chain and hash. */
export interface AuditRecord {
  operator: string;
  host: string;
  configHash: string;
  planHash: string;
  plan: unknown;
  decision: string;
  /** Who or what decided: "terminal", "--approved-hash", "policy: read-only"… */
  decidedBy: string;
  /** The limits and kill switches in force. */
  safety?: SafetyState;
  /** The approval token used or issued (its id, never the token). */
  token?: unknown;
  /** The run a record belongs to (started, write_ahead and the outcome share it). */
  run?: string;
  /** write_ahead: every device the plan may write, with its value before the plan. */
  originals?: unknown;
  /** The unfinished run a recovery plan's records belong to (its originals are that run's). */
  recovers?: string;
  status?: string;
  results?: unknown;
  restores?: unknown;
  errors?: string[];
  violations?: unknown;
}

export interface AuditEntry extends AuditRecord {
  time: string;
  prevHash: string;
  hash: string;
  /** HMAC of `hash` with the audit key; absent in entries written without one. */
  mac?: string;
}

/** The head record: how many entries the chain holds and the newest one's hash. */
export interface AuditHead {
  entries: number;
  lastHash: string;
  mac?: string;
}

export const GENESIS = "0".repeat(64);

/** The largest audit day file read (each entry carries its plan: tens of thousands of plans). */
export const MAX_AUDIT_FILE_BYTES = 256 << 20;
/** The largest head record read (a count, a hash and a MAC). */
const MAX_HEAD_BYTES = 64 << 10;

/** An audit file, read within {@link MAX_AUDIT_FILE_BYTES}; a FIFO or a device is refused. */
export async function readAuditFile(path: string): Promise<string> {
  return new TextDecoder().decode(await readAuditBytes(path));
}

export function readAuditBytes(path: string): Promise<Uint8Array> {
  return readRegularBytes(path, MAX_AUDIT_FILE_BYTES, {
    fix: "look at it with accel-agent audit verify",
  });
}

/** A line of a chain that `audit verify` and an append both refuse: where, and why. */
export interface ChainBreak {
  file: string;
  line: number;
  reason: string;
}

/** The one line both `audit verify` and a refused append give for a broken chain. */
export function chainBreakText(b: ChainBreak): string {
  return `audit chain broken at ${b.file}:${b.line}: ${b.reason}`;
}

/**
 * Why a line is not an entry as the log wrote it (in `audit verify`'s
 * words), or the entry: JSON of an entry, whose hash covers its content and
 * whose bytes are exactly as written.
 */
export async function checkEntryLine(
  line: string,
): Promise<{ ok: true; entry: AuditEntry } | { ok: false; reason: string }> {
  let entry: AuditEntry;
  try {
    entry = JSON.parse(line);
  } catch {
    return { ok: false, reason: "not valid JSON" };
  }
  if (typeof entry !== "object" || entry === null || typeof entry.hash !== "string") {
    return { ok: false, reason: "not an audit entry" };
  }
  const { hash, mac: _mac, ...body } = entry;
  if ((await entryHash(body)) !== hash) {
    return { ok: false, reason: "the entry's content does not match its hash" };
  }
  // The hash covers the content; the bytes must also be exactly as written.
  if (JSON.stringify(entry) !== line) {
    return { ok: false, reason: "the line is not as it was written" };
  }
  return { ok: true, entry };
}

/**
 * Why an entry's MAC does not hold (in `audit verify`'s words), or
 * undefined: `afterKeyed` when an entry before it carried one.
 */
export async function macProblem(
  entry: AuditEntry,
  key: CryptoKey | undefined,
  afterKeyed: boolean,
): Promise<string | undefined> {
  if (entry.mac === undefined) {
    return afterKeyed
      ? "the entry has no MAC after keyed entries (written without the audit key)"
      : undefined;
  }
  if (key === undefined) {
    return "the entry carries a MAC but the audit key is not at hand to check it";
  }
  if (typeof entry.mac !== "string" || !sameText(await entryMac(key, entry.hash), entry.mac)) {
    return "the entry's MAC does not match (rewritten without the audit key)";
  }
  return undefined;
}

const HeadSchema = z.looseObject({
  entries: z.int().min(0),
  lastHash: z.string(),
  mac: z.string().optional(),
}) satisfies z.ZodType<AuditHead>;

/** The audit trail cannot be written; nothing that changes the machine may run. */
export class AuditError extends Error {
  override name = "AuditError";
}

/** Why a head record fails with the key at hand, in `audit verify`'s words. */
export const HEAD_MAC_MISMATCH =
  "the head record's MAC does not match (it was written without the audit key)";

/** The head record in `path`, or undefined when there is none. */
export async function readHead(path: string): Promise<AuditHead | undefined> {
  let text: string;
  try {
    text = await readRegularText(path, MAX_HEAD_BYTES, {
      fix: "look at it with accel-agent audit verify",
    });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    if (isRefusal(e)) throw new AuditError(e.message);
    throw e;
  }
  const head = readJson(HeadSchema, text);
  if (head.ok) return head.value;
  throw new AuditError(
    `${path}: the head record is damaged (${head.why}); look at it with accel-agent audit verify`,
  );
}

/** The hash of an entry: SHA-256 of its canonical JSON without `hash` and `mac`. */
export function entryHash(body: Omit<AuditEntry, "hash" | "mac">): Promise<string> {
  return sha256Hex(canonicalJson(body));
}

/** An entry's MAC: HMAC-SHA256 of its hash (which covers the previous hash) with the audit key. */
export function entryMac(key: CryptoKey, hash: string): Promise<string> {
  return macOf(key, `accel-agent audit entry v1\n${hash}`);
}

/** The head's MAC, over its count and last hash. */
export function headMac(key: CryptoKey, head: AuditHead): Promise<string> {
  return macOf(key, `accel-agent audit head v1\n${head.entries}\n${head.lastHash}`);
}
