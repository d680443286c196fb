/**
 * Checking an audit trail: the hash chain line by line, each entry's MAC
 * when the audit key is at hand, and, for a whole directory, the head
 * record, which is what shows a cut tail.
 *
 * @module
 */
import {
  type AuditHead,
  checkEntryLine,
  GENESIS,
  HEAD_MAC_MISMATCH,
  headMac,
  macProblem,
  readAuditFile,
  readHead,
} from "./audit_chain.ts";
import { sameText } from "./keys.ts";
import { errorMessage } from "../util/errors.ts";

export type VerifyResult =
  | {
    ok: true;
    entries: number;
    files: number;
    lastHash: string;
    /** Entries whose MAC was checked with the audit key. */
    keyed: number;
    /** Entries written without an audit key (before keyed audit existed). */
    unkeyed: number;
    /** How the head record compares: "unchecked" when one file is verified alone. */
    head: "matches" | "behind" | "absent" | "unchecked";
    /** What this result does not prove. */
    notes: string[];
    /**
     * The newest file ends in a torn line (an append that did not finish)
     * after an intact chain: recoverable, not tampering. The next append cuts
     * it off into `<file>.torn`.
     */
    torn?: { file: string; line: number; bytes: number };
  }
  | { ok: false; file: string; line: number; reason: string };

type Fail = Extract<VerifyResult, { ok: false }>;

/**
 * Verifies a chain. With `fromGenesis` (the whole directory), the first entry
 * must be the first ever written, so removing the oldest files is caught too;
 * otherwise (one file) its first entry may link to anything. With `key`, each
 * entry's MAC is checked, and an entry without one after a keyed entry fails.
 */
export async function verifyAudit(
  files: string[],
  fromGenesis = false,
  key?: CryptoKey,
): Promise<VerifyResult> {
  const r = await walk(files, fromGenesis, key);
  if (!r.ok) return r;
  const notes = [
    "one file alone: a cut tail is only detected when the whole directory is verified",
  ];
  if (r.unkeyed) notes.push(unkeyedNote(r.unkeyed, r.keyed));
  return intact(r, files.length, "unchecked", notes);
}

/** The result for a chain that verified: its counts, the head's state and the notes (a torn tail's last). */
function intact(
  r: Walked,
  files: number,
  head: "matches" | "behind" | "absent" | "unchecked",
  notes: string[],
): VerifyResult {
  return {
    ok: true,
    entries: r.entries,
    files,
    lastHash: r.last,
    keyed: r.keyed,
    unkeyed: r.unkeyed,
    head,
    notes: r.torn ? [...notes, tornNote(r.torn)] : notes,
    ...(r.torn ? { torn: r.torn } : {}),
  };
}

/**
 * Verifies an audit directory's day files from genesis and its head record
 * (`headFile`, default `<dir>/HEAD`). With the audit key, the head must carry
 * a valid MAC: a head re-written without the key fails even when every entry
 * was stripped of its MAC.
 */
export async function verifyAuditDir(
  dir: string,
  files: string[],
  key?: CryptoKey,
  headFile = `${dir}/HEAD`,
): Promise<VerifyResult> {
  const r = await walk(files, true, key);
  if (!r.ok) return r;
  const fail = (reason: string): Fail => ({ ok: false, file: headFile, line: 1, reason });
  let head: AuditHead | undefined;
  try {
    head = await readHead(headFile);
  } catch (e) {
    return fail(errorMessage(e).replace(`${headFile}: `, ""));
  }
  const notes: string[] = [];
  if (r.unkeyed) notes.push(unkeyedNote(r.unkeyed, r.keyed));
  // Only a chain that ends where the head says makes a torn line an interrupted append.
  const done = (state: "matches" | "behind" | "absent"): VerifyResult =>
    intact(r, files.length, state, notes);
  if (head === undefined) {
    if (r.keyed || r.macs) {
      return fail("the head record is missing: the newest entries may have been removed");
    }
    notes.push(
      "no head record (a log written before heads existed): a cut tail cannot be detected",
    );
    return done("absent");
  }
  if (key) {
    if (head.mac === undefined || !sameText(await headMac(key, head), head.mac)) {
      return fail(HEAD_MAC_MISMATCH);
    }
  }
  if (r.entries < head.entries) {
    return fail(
      `the log ends after ${r.entries} entries but the head records ${head.entries}: ` +
        `the last ${head.entries - r.entries} were removed`,
    );
  }
  if (r.entries === head.entries && r.last === head.lastHash) return done("matches");
  if (r.entries === head.entries + 1 && r.beforeLast === head.lastHash) {
    notes.push(
      "the head is one entry behind (an append was interrupted); the next append updates it",
    );
    return done("behind");
  }
  return fail(
    `the head records ${head.entries} entries ending in ${head.lastHash.slice(0, 12)}…, ` +
      `the log has ${r.entries} ending in ${
        r.last.slice(0, 12)
      }…: entries were removed or replaced`,
  );
}

function tornNote(t: { file: string; line: number; bytes: number }): string {
  return `${t.file}:${t.line}: a torn last line (${t.bytes} bytes, an append that did not ` +
    `finish) after an intact chain: recoverable, not tampering; the next plan cuts it off into ` +
    `${t.file}.torn`;
}

function unkeyedNote(n: number, keyed: number): string {
  const what = `${n} entr${n === 1 ? "y was" : "ies were"} written without an audit key`;
  // A keyed entry's MAC covers its hash, which covers every hash before it.
  return keyed
    ? `${what} (before keyed audit); the keyed entries after ${n === 1 ? "it" : "them"} protect ${
      n === 1 ? "it" : "them"
    } from a re-hashed rewrite`
    : `${what} (before keyed audit): a rewrite with re-computed hashes would not be detected`;
}

interface Walked {
  ok: true;
  entries: number;
  last: string;
  beforeLast: string;
  keyed: number;
  unkeyed: number;
  /** Entries that carry a MAC, checked or not. */
  macs: number;
  /** The newest file's bytes after its last newline. */
  torn?: { file: string; line: number; bytes: number };
}

async function walk(
  files: string[],
  fromGenesis: boolean,
  key: CryptoKey | undefined,
): Promise<Walked | Fail> {
  let prev: string | undefined = fromGenesis ? GENESIS : undefined;
  let beforeLast = GENESIS;
  let entries = 0, keyed = 0, unkeyed = 0, macs = 0;
  let torn: Walked["torn"];
  for (const [f, file] of files.entries()) {
    const lines = (await readAuditFile(file)).split("\n");
    const rest = lines.pop() as string;
    // An interrupted append leaves bytes after the last newline, in the newest file only.
    if (rest !== "") {
      if (f < files.length - 1) {
        return { ok: false, file, line: lines.length + 1, reason: "the last line is unfinished" };
      }
      torn = { file, line: lines.length + 1, bytes: new TextEncoder().encode(rest).length };
    }
    for (let i = 0; i < lines.length; i++) {
      const bad = (reason: string): Fail => ({ ok: false, file, line: i + 1, reason });
      // The same checks an append makes of the newest entry (audit.ts).
      const checked = await checkEntryLine(lines[i] as string);
      if (!checked.ok) return bad(checked.reason);
      const entry = checked.entry;
      if (prev !== undefined && entry.prevHash !== prev) {
        return bad(
          "the entry does not link to the one before it (a line was removed, added or reordered)",
        );
      }
      const macWrong = await macProblem(entry, key, macs > 0);
      if (macWrong) return bad(macWrong);
      if (entry.mac === undefined) unkeyed++;
      else {
        macs++;
        keyed++;
      }
      beforeLast = prev ?? GENESIS;
      prev = entry.hash;
      entries++;
    }
  }
  return {
    ok: true,
    entries,
    last: prev ?? GENESIS,
    beforeLast,
    keyed,
    unkeyed,
    macs,
    ...(torn ? { torn } : {}),
  };
}

/** A plan whose write-ahead record has no outcome after it: its process ended mid-plan. */
export interface UnfinishedRun {
  run: string;
  planHash: string;
  time: string;
  operator: string;
  originals: unknown;
}

/**
 * The runs in these audit files that recorded their originals before writing
 * and never an outcome (completed, failed, aborted, refused) nor a recovery
 * or dismissal. Lines that are not entries are skipped: verifying is the
 * chain's job.
 */
export async function unfinishedRuns(files: string[]): Promise<UnfinishedRun[]> {
  const ahead = new Map<string, UnfinishedRun>();
  const closed = new Set<string>();
  for (const file of files) {
    for (const line of (await readAuditFile(file)).split("\n")) {
      if (!line.trim()) continue;
      let e: Record<string, unknown>;
      try {
        e = JSON.parse(line);
      } catch {
        continue;
      }
      if (typeof e.run !== "string") continue;
      // A recovery's own originals are the values a run left; that run is the one listed.
      if (e.status === "write_ahead" && typeof e.recovers === "string") continue;
      if (e.status === "write_ahead") {
        ahead.set(e.run, {
          run: e.run,
          planHash: String(e.planHash),
          time: String(e.time),
          operator: String(e.operator),
          originals: e.originals,
        });
      } else if (e.status !== "started") closed.add(e.run);
    }
  }
  return [...ahead.values()].filter((r) => !closed.has(r.run));
}
