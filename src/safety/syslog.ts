/**
 * An audit entry as a syslog message (RFC 5424) framed for TCP with octet
 * counting (RFC 6587, section 3.4.1: `LENGTH SP MESSAGE`, so a record may
 * hold any byte, a newline included), and as a line of NDJSON for an HTTP
 * collector. Pure: no I/O here.
 *
 * The message: `<PRI>1 TIME HOST accel-agent - DECISION [accel@32473 seq="N"
 * hash="…" resent="1"] BOM{entry as JSON}`. `seq` is the entry's place in
 * the audit chain and `hash` its chain hash, so a collector's copy can be
 * checked against the console's; `resent="1"` marks a record that may have
 * reached the collector before (sent again after a failure whose outcome is
 * unknown). 32473 is the enterprise number RFC 5612 reserves for examples;
 * a facility that forwards into a system keyed on its own can filter on
 * `accel@32473`.
 *
 * @module
 */
import type { AuditEntry } from "./audit.ts";

/** One record to forward: the entry, its place in the chain, and whether it may be a duplicate. */
export interface ForwardRecord {
  seq: number;
  entry: AuditEntry;
  resent: boolean;
}

/** Syslog facilities by name (RFC 5424, table 1). */
export const FACILITIES: Record<string, number> = {
  kern: 0,
  user: 1,
  daemon: 3,
  auth: 4,
  syslog: 5,
  authpriv: 10,
  local0: 16,
  local1: 17,
  local2: 18,
  local3: 19,
  local4: 20,
  local5: 21,
  local6: 22,
  local7: 23,
};

/** Outcomes that are routine; any other status, and a rejection, is sent as a warning. */
const ROUTINE = new Set([
  "completed",
  "confirmed",
  "started",
  "write_ahead",
  "recovered",
  "dismissed",
  "token_issued",
  "accepted",
]);

const NOTICE = 5, WARNING = 4;

/** The fields a record too long for the collector gives up first (its hash still binds them). */
const BULKY = ["plan", "results", "originals", "restores", "violations"] as const;

const SD_ID = "accel@32473";
const BOM = "\ufeff";

/** RFC 5424 header fields are printable ASCII without spaces, of a bounded length; "-" is "none". */
function headerField(text: string | undefined, max: number): string {
  const clean = (text ?? "").replace(/[^\x21-\x7e]/g, "").slice(0, max);
  return clean || "-";
}

/** An SD-PARAM value: `"`, `\` and `]` escaped with a backslash. */
function sdValue(text: string): string {
  return text.replace(/["\\\]]/g, (c) => `\\${c}`);
}

function severity(entry: AuditEntry): number {
  if (entry.decision === "rejected") return WARNING;
  return entry.status === undefined || ROUTINE.has(entry.status) ? NOTICE : WARNING;
}

/** The entry as JSON within `maxBytes`, its bulky fields replaced by their size when it is not. */
function body(entry: AuditEntry, maxBytes: number): { json: string; truncated: boolean } {
  const json = JSON.stringify(entry);
  if (new TextEncoder().encode(json).length <= maxBytes) return { json, truncated: false };
  const slim: Record<string, unknown> = { ...entry };
  for (const k of BULKY) {
    if (slim[k] !== undefined) {
      slim[k] = { truncated: true, bytes: JSON.stringify(slim[k]).length };
    }
  }
  return { json: JSON.stringify(slim), truncated: true };
}

/**
 * The RFC 5424 message for a record. `maxBytes` bounds the JSON body: past
 * it, the plan, results, originals, restores and violations are replaced by
 * their sizes and `truncated="1"` says so (the console's audit has them all).
 */
export function syslogMessage(
  r: ForwardRecord,
  opts: { facility: number; appName: string; maxBytes: number },
): string {
  const pri = opts.facility * 8 + severity(r.entry);
  const { json, truncated } = body(r.entry, opts.maxBytes);
  const params = [
    `seq="${r.seq}"`,
    `hash="${sdValue(r.entry.hash ?? "")}"`,
    ...(r.resent ? ['resent="1"'] : []),
    ...(truncated ? ['truncated="1"'] : []),
  ];
  return [
    `<${pri}>1`,
    headerField(r.entry.time, 64),
    headerField(r.entry.host, 255),
    headerField(opts.appName, 48),
    "-",
    headerField(r.entry.decision, 32),
    `[${SD_ID} ${params.join(" ")}]`,
    `${BOM}${json}`,
  ].join(" ");
}

/** A message framed for TCP: its length in octets, a space, the message (RFC 6587 octet counting). */
export function octetFrame(message: string): Uint8Array {
  const bytes = new TextEncoder().encode(message);
  const head = new TextEncoder().encode(`${bytes.length} `);
  const out = new Uint8Array(head.length + bytes.length);
  out.set(head);
  out.set(bytes, head.length);
  return out;
}

/** A record as one NDJSON line for an HTTP collector. */
export function httpLine(r: ForwardRecord): string {
  return `${JSON.stringify({ seq: r.seq, resent: r.resent, entry: r.entry })}\n`;
}
