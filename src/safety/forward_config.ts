/**
 * `[audit_forward]` of a site file: where the facility's log collectors are.
 * It lives in the site file, not in a user's config, so no user can turn it
 * off or point it elsewhere:
 *
 * ```toml
 * [audit_forward]
 * syslog = "logs.ctrl.example:514"     # TCP, RFC 6587 octet counting, RFC 5424 messages
 * http_url = "https://collector.ctrl.example/accel-audit"   # optional: POST, NDJSON
 * facility = "local0"                  # the syslog facility
 * app_name = "accel-agent"
 * timeout_s = 10                       # one delivery: connect, send, confirmation
 * retry_s = 5                          # first wait before trying a failed collector again
 * max_message_bytes = 65536            # a longer entry is sent without its bulky fields
 * ```
 *
 * @module
 */
import type { ForwardConfig } from "./audit_forward.ts";
import type { ForwardTarget } from "./audit_deliver.ts";
import { FACILITIES } from "./syslog.ts";

const KEYS = [
  "syslog",
  "http_url",
  "facility",
  "app_name",
  "timeout_s",
  "retry_s",
  "max_message_bytes",
];

/** `host:port` (or `tcp://host:port`, `[::1]:port`) of a TCP syslog collector; port 514 by default. */
function syslogTarget(text: string): ForwardTarget | undefined {
  const m = /^(?:tcp:\/\/)?(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(text.trim());
  if (!m) return undefined;
  const port = Number(m[2] ?? 514);
  if (!(port > 0 && port < 65536)) return undefined;
  return { kind: "syslog", host: (m[1] as string).replace(/^\[|\]$/g, ""), port };
}

const number = (v: unknown, min: number, max: number) =>
  typeof v === "number" && Number.isFinite(v) && v >= min && v <= max;

/**
 * The collectors a site file's `[audit_forward]` names, or the reason it is
 * not valid (one phrase, as the site file's other errors are).
 */
export function forwardConfigs(raw: unknown): ForwardConfig[] | string {
  if (raw === undefined) return [];
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return "audit_forward must be a table";
  }
  const t = raw as Record<string, unknown>;
  const unknown = Object.keys(t).find((k) => !KEYS.includes(k));
  if (unknown) return `unknown key audit_forward.${unknown} (${KEYS.join(", ")})`;
  const facility = FACILITIES[String(t.facility ?? "local0")];
  if (facility === undefined) {
    return `audit_forward.facility must be one of ${Object.keys(FACILITIES).join(", ")}`;
  }
  if (t.timeout_s !== undefined && !number(t.timeout_s, 0.1, 600)) {
    return "audit_forward.timeout_s must be from 0.1 to 600 seconds";
  }
  if (t.retry_s !== undefined && !number(t.retry_s, 0.1, 3600)) {
    return "audit_forward.retry_s must be from 0.1 to 3600 seconds";
  }
  if (t.max_message_bytes !== undefined && !number(t.max_message_bytes, 1024, 16 << 20)) {
    return "audit_forward.max_message_bytes must be from 1024 to 16777216";
  }
  const appName = String(t.app_name ?? "accel-agent");
  if (!/^[\x21-\x7e]{1,48}$/.test(appName)) {
    return "audit_forward.app_name must be 1 to 48 printable ASCII characters";
  }
  const targets: ForwardTarget[] = [];
  if (t.syslog !== undefined) {
    const s = typeof t.syslog === "string" ? syslogTarget(t.syslog) : undefined;
    if (!s) return `audit_forward.syslog must be host:port (TCP), got ${JSON.stringify(t.syslog)}`;
    targets.push(s);
  }
  if (t.http_url !== undefined) {
    // No comma in the address: the network grant would read it as two hosts.
    if (typeof t.http_url !== "string" || !/^https?:\/\/[^/@\s,]+(\/\S*)?$/.test(t.http_url)) {
      return "audit_forward.http_url must be an http(s) URL without credentials";
    }
    targets.push({ kind: "http", url: t.http_url });
  }
  if (!targets.length) return "audit_forward names no collector (syslog or http_url)";
  const delivery = {
    facility,
    appName,
    maxMessageBytes: Number(t.max_message_bytes ?? 65536),
    timeoutMs: Number(t.timeout_s ?? 10) * 1000,
  };
  return targets.map((target) => ({ target, delivery, retryMs: Number(t.retry_s ?? 5) * 1000 }));
}

/** `host:port` of a collector, as the network grant names it. */
export function collectorHost(t: ForwardTarget): string | undefined {
  if (t.kind === "syslog") return `${t.host.includes(":") ? `[${t.host}]` : t.host}:${t.port}`;
  try {
    const u = new URL(t.url);
    return `${u.hostname}:${u.port || (u.protocol === "https:" ? "443" : "80")}`;
  } catch {
    return undefined;
  }
}
