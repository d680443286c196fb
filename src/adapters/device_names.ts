/**
 * One device, one name: how each control system canonicalises a device name
 * and what it refuses, in the one place the limits, preflight, the approval
 * table, the writer, the readback and the audit all go through, so each of
 * them sees the name the wire writes. An alias the gateway or the server
 * would resolve to another channel is either rewritten to the channel's one
 * name (only where the two are certainly the same channel) or refused with a
 * line naming it and saying what to write instead. The rules (README
 * "Device names", docs/device-names.md):
 *
 * - Every system: printable ASCII only (U+0021–U+007E).
 * - EPICS and the simulator (whose names are EPICS names): `RECORD` or
 *   `RECORD.FIELD`. The record holds letters, digits and `_ - + : [ ] < > ; { }`
 *   (the EPICS record-name set); a protocol prefix (`pva://`, `ca://`, any
 *   `scheme://`) is refused (the gateway adds `[epics] pv_prefix`); `.VAL` is
 *   the record itself and is rewritten to it; any other field is an upper-case
 *   name of letters, digits and `_`, and is a device of its own, which the
 *   limits open only where an entry names that field. Anything after the
 *   field (`$`, `[…]`, `{…}` channel filters) is refused.
 * - TANGO: `domain/family/member[/attribute]`, each segment of letters,
 *   digits, `_`, `-` and `.` (not `.` or `..`, not starting or ending with
 *   a dot); names are case-insensitive and canonically lower case; a
 *   `tango://HOST:PORT/` prefix naming `[tango] tango_host` is dropped, any
 *   other host is refused; `#dbase=no`, `%` escapes, `;` parameters, `?`
 *   and empty segments are refused. Every segment is percent-encoded on the
 *   wire ({@link tangoPath}); a canonical name survives that round trip.
 *
 * @module
 */

/** A name as the control system writes it, or why it cannot be one. */
export type CanonicalName = { ok: true; name: string } | { ok: false; error: string };

/** A record field of an EPICS name (`SR:MODE.HIHI`): the record and the field. */
export interface FieldName {
  record: string;
  field: string;
}

/** How one control system names its devices. */
export interface DeviceNaming {
  /** The control system's kind: "epics", "tango", "simulator", or another (generic rules). */
  readonly kind: string;
  /** False where names ignore ASCII letter case (TANGO). */
  readonly caseSensitive: boolean;
  /** The canonical name of `name`, or why it is refused (one line that names it). */
  canonical(name: string): CanonicalName;
  /**
   * Why a limits entry (an exact name, or a pattern with `*` and `?`) can
   * never match a canonical name, or undefined when it can.
   */
  entryProblem(entry: string): string | undefined;
  /** The record and field of a name with a field (EPICS, the simulator); undefined otherwise. */
  fieldOf(name: string): FieldName | undefined;
}

/** What a naming needs to know of its facility. */
export interface NamingOptions {
  /** `[tango] tango_host`: the one Tango host a `tango://` prefix may name. */
  tangoHost?: string;
}

/** The naming of a control system by its kind. */
export function namingFor(kind: string, opts: NamingOptions = {}): DeviceNaming {
  if (kind === "epics" || kind === "simulator") return epicsNaming(kind);
  if (kind === "tango") return tangoNaming(opts.tangoHost);
  return genericNaming(kind);
}

/**
 * Throws unless `name` is canonical for `naming`: the adapters' write paths
 * call it, so a name nothing canonicalised never reaches the wire.
 */
export function requireCanonical(naming: DeviceNaming, name: string): void {
  const c = naming.canonical(name);
  if (c.ok && c.name === name) return;
  const why = c.ok ? `its canonical name is ${c.name}` : c.error;
  throw new Error(`write to ${quoted(name)} not sent: ${why}`);
}

/** A name in double quotes, with anything unprintable escaped (`\u0000`). */
export function quoted(name: string): string {
  return JSON.stringify(name).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`,
  );
}

const PRINTABLE = /^[!-~]+$/;

/** Why a name is not printable ASCII, if it is not. */
function asciiProblem(name: string): string | undefined {
  if (name === "") return "an empty device name";
  if (PRINTABLE.test(name)) return undefined;
  const bad = [...name].find((c) => c < "!" || c > "~") ?? "";
  const cp = (bad.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
  return `${quoted(name)} holds U+${cp}; device names are printable ASCII (U+0021–U+007E) only`;
}

const refuse = (error: string): CanonicalName => ({ ok: false, error });

function genericNaming(kind: string): DeviceNaming {
  return {
    kind,
    caseSensitive: true,
    canonical: (name) => {
      const bad = asciiProblem(name);
      return bad ? refuse(bad) : { ok: true, name };
    },
    entryProblem: () => undefined,
    fieldOf: () => undefined,
  };
}

// ---- EPICS (and the simulator) ------------------------------------------------------------

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
/** The EPICS record-name characters (Application Developer's Guide), braces included. */
const RECORD_CHAR = /[A-Za-z0-9_\-+:[\]<>;{}]/;

function epicsNaming(kind: string): DeviceNaming {
  /** `pattern`: `*` and `?` may stand anywhere (a limits entry). */
  const canonical = (name: string, pattern = false): CanonicalName => {
    const bad = asciiProblem(name);
    if (bad) return refuse(bad);
    const scheme = SCHEME.exec(name);
    if (scheme) {
      return refuse(
        `${quoted(name)}: the protocol prefix "${scheme[0]}" is not part of a device name ` +
          `(the gateway adds [epics] pv_prefix); write ${name.slice(scheme[0].length)}`,
      );
    }
    const wild = (c: string) => pattern && (c === "*" || c === "?");
    const dot = name.indexOf(".");
    const record = dot < 0 ? name : name.slice(0, dot);
    if (record === "") return refuse(`${quoted(name)} names no record before its field`);
    const odd = [...record].find((c) => !RECORD_CHAR.test(c) && !wild(c));
    if (odd !== undefined) {
      return refuse(
        `${quoted(name)} holds "${odd}", which is not in an EPICS record name ` +
          "(letters, digits and _ - + : [ ] < > ; { })",
      );
    }
    if (dot < 0) return { ok: true, name };
    const rest = name.slice(dot + 1);
    let end = 0;
    while (
      end < rest.length && (/[A-Za-z0-9_]/.test(rest[end] as string) || wild(rest[end] as string))
    ) end++;
    const field = rest.slice(0, end);
    const target = (f: string) => (f === "VAL" ? record : `${record}.${f}`);
    if (field === "" && rest === "") {
      return refuse(`${quoted(name)} has no field name after "."; write ${record}`);
    }
    if (end < rest.length) {
      const upper = field.toUpperCase() || "VAL";
      return refuse(
        `${quoted(name)}: "${rest.slice(end)}" after the field is a channel filter ` +
          `or modifier the gateway applies to ${target(upper)}; write ${target(upper)}`,
      );
    }
    if (field !== field.toUpperCase()) {
      return refuse(
        `${quoted(name)}: EPICS field names are upper case; write ${target(field.toUpperCase())}`,
      );
    }
    return { ok: true, name: target(field) };
  };
  return {
    kind,
    caseSensitive: true,
    canonical: (name) => canonical(name),
    entryProblem(entry) {
      const c = canonical(entry, true);
      if (!c.ok) return c.error;
      if (c.name !== entry) {
        return `${quoted(entry)} ends in .VAL, which is the record itself; write ${c.name}`;
      }
      return undefined;
    },
    fieldOf(name) {
      const dot = name.indexOf(".");
      return dot < 0 ? undefined : { record: name.slice(0, dot), field: name.slice(dot + 1) };
    },
  };
}

// ---- TANGO ---------------------------------------------------------------------------------

const TANGO_SEGMENT_CHAR = /[A-Za-z0-9_.-]/;
const TANGO_PREFIX = /^tango:\/\/([^/]*)\//i;
const WHAT_CHAR: Record<string, string> = {
  "%": "a percent escape, which the server would decode into another name",
  "#": "a TANGO client suffix (#dbase=no) the REST server never sees",
  ";": "a path parameter, which the server would drop",
  "?": "the start of a query",
  ":": "a host separator",
  "\\": "a backslash",
};

/** `host:port` with the default port, lower case, for comparing Tango hosts. */
function hostKey(host: string): string {
  const [h = "", p = "10000"] = host.toLowerCase().split(":");
  return `${h}:${Number(p)}`;
}

function tangoNaming(tangoHost?: string): DeviceNaming {
  const canonical = (input: string, pattern = false): CanonicalName => {
    const bad = asciiProblem(input);
    if (bad) return refuse(bad);
    let name = input;
    const prefix = TANGO_PREFIX.exec(name);
    if (prefix) {
      const host = prefix[1] ?? "";
      if (tangoHost === undefined || hostKey(host) !== hostKey(tangoHost)) {
        return refuse(
          `${quoted(input)} names the Tango host "${host}", not ${
            tangoHost ?? "the configured one"
          } ([tango] tango_host); write ${name.slice(prefix[0].length)}`,
        );
      }
      name = name.slice(prefix[0].length);
    } else if (SCHEME.test(name)) {
      return refuse(`${quoted(input)}: a TANGO name is domain/family/member/attribute`);
    }
    const segments = name.split("/");
    if (!pattern && (segments.length < 3 || segments.length > 4)) {
      return refuse(
        `${quoted(input)} is not a TANGO name: use domain/family/member/attribute ` +
          `(${segments.length} segment${segments.length === 1 ? "" : "s"} given)`,
      );
    }
    for (const [i, s] of segments.entries()) {
      const where = `segment ${i + 1} of ${quoted(input)}`;
      if (s === "") return refuse(`${where} is empty (a double or trailing slash)`);
      if (s === "." || s === "..") return refuse(`${where} is "${s}", which a URL resolves away`);
      const odd = [...s].find((c) =>
        !TANGO_SEGMENT_CHAR.test(c) && !(pattern && (c === "*" || c === "?"))
      );
      if (odd !== undefined) {
        return refuse(
          `${where} holds "${odd}"${WHAT_CHAR[odd] ? `, ${WHAT_CHAR[odd]}` : ""}; TANGO names ` +
            "hold letters, digits, _ - and .",
        );
      }
      if (s.startsWith(".") || s.endsWith(".")) {
        return refuse(`${where} starts or ends with a dot, which a server may drop`);
      }
    }
    return { ok: true, name: asciiLower(name) };
  };
  return {
    kind: "tango",
    caseSensitive: false,
    canonical: (name) => canonical(name),
    entryProblem(entry) {
      const c = canonical(entry, /[*?]/.test(entry));
      if (!c.ok) return c.error;
      if (c.name !== asciiLower(entry)) return `${quoted(entry)} names ${c.name}; write that`;
      return undefined;
    },
    fieldOf: () => undefined,
  };
}

/** Lower-cases ASCII letters only. */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
}

/**
 * A TANGO name's segments as a URL path, each percent-encoded, so the
 * server decodes exactly the segments given: `sys/tg_test/%31` reaches the
 * device `sys/tg_test/%31` (which does not exist), never `sys/tg_test/1`.
 */
export function tangoPath(name: string): string {
  return name.split("/").map(encodeURIComponent).join("/");
}
