/**
 * How the longer commands of the table turn their arguments and flags into
 * a {@link Command}; each throws a one-line UsageError saying what to fix.
 *
 * @module
 */
import { UsageError } from "../../app/exit.ts";
import type { Command } from "./command.ts";
import { bool, intOption, list, str, type Values } from "./table.ts";
import { elogChoice } from "./elog_args.ts";

/** `search`: its arguments and flags as a command. */
export function searchCommand(rest: string[], v: Values): Command {
  const text = rest.join(" ").trim();
  if (text === "") {
    throw new UsageError(
      `search needs a pattern or words, e.g. accel-agent search "LINAC:BPM:*:X" (quote wildcards) or accel-agent search ion pump pressure cell 4`,
    );
  }
  if (bool(v, "writable") && bool(v, "read-only")) {
    throw new UsageError("--writable and --read-only exclude each other");
  }
  if (bool(v, "pattern") && bool(v, "words")) {
    throw new UsageError("--pattern and --words exclude each other");
  }
  return {
    kind: "search",
    pattern: text,
    mode: bool(v, "pattern") ? "pattern" : bool(v, "words") ? "informal" : "auto",
    subsystem: str(v, "subsystem"),
    writable: bool(v, "writable") ? true : bool(v, "read-only") ? false : undefined,
    limit: intOption("limit", str(v, "limit"), 50, 1, 10_000),
    offset: intOption("offset", str(v, "offset"), 0, 0, Number.MAX_SAFE_INTEGER),
  };
}

/** `logs`: its arguments and flags as a command. */
export function logsCommand(rest: string[], v: Values): Command {
  const source = rest[0];
  if (rest.length !== 1 || (source !== "elog" && source !== "alarm" && source !== "archive")) {
    throw new UsageError(
      "logs needs one source: elog, alarm or archive, e.g. accel-agent logs alarm --from -8h",
    );
  }
  const devices = list(v, "device");
  if (source === "archive" && !devices.length) {
    throw new UsageError("logs archive needs --device NAME (repeatable)");
  }
  const given = str(v, "severity");
  const severity = given?.toUpperCase();
  if (severity !== undefined && !["NONE", "MINOR", "MAJOR", "INVALID"].includes(severity)) {
    throw new UsageError(
      `--severity "${given}" is not a severity; use MINOR, MAJOR or INVALID`,
    );
  }
  return {
    kind: "logs",
    source,
    from: str(v, "from"),
    to: str(v, "to"),
    devices,
    text: str(v, "text"),
    severity,
    limit: intOption("limit", str(v, "limit"), 50, 1, 10_000),
  };
}

/** `plan show|run|recover`: its arguments and flags as a command. */
export function planCommand(rest: string[], v: Values): Command {
  const [sub, file, ...extra] = rest;
  const dismiss = bool(v, "dismiss");
  if (sub === "recover") {
    if (extra.length) throw new UsageError("plan recover takes at most one run id");
    if (dismiss && !file) {
      throw new UsageError(
        "--dismiss needs the run id, e.g. accel-agent plan recover 3f2a… --dismiss",
      );
    }
    const elog = elogChoice(v);
    if (dismiss && elog) {
      throw new UsageError("--elog goes with a recovery that runs, not --dismiss");
    }
    return { kind: "plan_recover", run: file, dismiss, ...(elog ? { elog } : {}) };
  }
  if (dismiss) throw new UsageError("--dismiss goes with plan recover");
  if ((sub !== "show" && sub !== "run") || !file || extra.length) {
    throw new UsageError(
      "plan needs show, run or recover and one file or saved plan ID, e.g. accel-agent plan show bump.toml",
    );
  }
  const hash = str(v, "approved-hash");
  const approval = str(v, "approval");
  if (hash !== undefined && approval !== undefined) {
    throw new UsageError("give the approval token once: --approved-hash or --approval");
  }
  const token = hash ?? approval;
  if (sub === "show" && token !== undefined) {
    throw new UsageError("--approved-hash goes with plan run, not plan show");
  }
  if (sub === "run" && bool(v, "reusable")) {
    throw new UsageError("--reusable goes with plan show, which issues the token");
  }
  const elog = elogChoice(v);
  if (sub === "show" && elog !== undefined) {
    throw new UsageError("--elog goes with plan run, whose logbook draft it posts or skips");
  }
  return sub === "show"
    ? { kind: "plan_show", file, reusable: bool(v, "reusable") }
    : { kind: "plan_run", file, approvedHash: token, ...(elog ? { elog } : {}) };
}
