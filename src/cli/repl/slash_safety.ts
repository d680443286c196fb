/**
 * Slash commands that show the safety chain as it stands: `/limits DEVICE`,
 * `/audit [N]` and `/permissions`. They read; none of them changes anything.
 * Every name, value and message that came from a file or the control system
 * is shown through {@link untrusted}.
 *
 * @module
 */
import type { App } from "../../app/app.ts";
import type { DeviceInfo } from "../../adapters/adapter.ts";
import type { Io } from "../../app/io.ts";
import { computeGrants, GrantError, type Grants } from "../../app/permissions.ts";
import { type AuditEntry, AuditLog } from "../../safety/audit.ts";
import { verifyAuditDir } from "../../safety/audit_verify.ts";
import { isBounded, type LimitEntry } from "../../safety/limits.ts";
import { style } from "../term/style.ts";
import { untrusted } from "../../util/untrusted_text.ts";
import { readAuditFile } from "../../safety/audit_chain.ts";

export const SAFETY_SLASH_HELP: [string, string][] = [
  ["/limits DEVICE", "the device's limits as the safety chain sees them"],
  ["/audit [N]", "the last N audit records (10), and whether the chain verifies"],
  ["/permissions", "the grants this program runs with"],
];

/** Runs `cmd` when it is one of these commands; false when it is not. */
export async function runSafetySlash(
  cmd: string,
  arg: string,
  app: App,
  io: Io,
): Promise<boolean> {
  switch (cmd) {
    case "/limits":
      await showLimits(arg, app, io);
      return true;
    case "/audit":
      await showAudit(arg, app, io);
      return true;
    case "/permissions":
      showPermissions(app, io);
      return true;
    default:
      return false;
  }
}

async function showLimits(device: string, app: App, io: Io): Promise<void> {
  const s = style(io.color);
  if (!device || /\s/.test(device)) {
    io.err(s.red("/limits takes one device name, e.g. /limits RF:PHASE:SETPT\n"));
    return;
  }
  const source = app.loaded.config.safety.limits_file;
  const entry = app.plans.limits.lookup(device);
  const [info] = await app.cs.describe([device]).catch(() => []);
  const name = untrusted(device);
  const row = (k: string, v: string) => io.out(`  ${s.dim(k.padEnd(10))} ${v}\n`);
  io.out(`${s.bold(name)}${info && !info.exists ? s.yellow(" (no such device)") : ""}\n`);
  const units = info?.units ? ` ${untrusted(info.units)}` : "";
  if (!entry) {
    row("writable", s.red(`no: no entry in ${untrusted(source)}`));
  } else {
    row("entry", untrusted(`${entry.pattern} in ${source}`));
    row("writable", writableText(entry, info, s));
    if (entry.min !== undefined || entry.max !== undefined) {
      row("range", `${entry.min ?? "−∞"} … ${entry.max ?? "∞"}${units}`);
    }
    if (entry.max_step !== undefined) row("max_step", `${entry.max_step}${units}`);
    if (entry.values) row("values", entry.values.map((v) => untrusted(v)).join(", "));
    row(
      "tolerance",
      entry.tolerance !== undefined
        ? `${entry.tolerance}${units}`
        : info?.precision !== undefined
        ? `${10 ** -info.precision}${units} (from the device's precision)`
        : "1e-6 (default)",
    );
    if (entry.settle_s !== undefined) row("settle", `${entry.settle_s} s`);
  }
  if (entry) row("readback", readbackText(entry.readback, info?.readback));
  if (info?.exists) row("units", untrusted(info.units || "none"));
  if (!app.loaded.config.safety.writes_enabled) {
    io.out(s.yellow("  writes are off in this configuration ([safety] writes_enabled)\n"));
  }
}

function writableText(
  entry: LimitEntry,
  info: DeviceInfo | undefined,
  s: ReturnType<typeof style>,
): string {
  if (entry.writable === false) return s.red("no: marked not writable");
  if (info && !info.exists) return s.red("no: the control system has no such device");
  if (info?.writable === false) return s.red("no: the control system does not allow writes");
  if (isBounded(entry)) return s.green("yes, within the limits below");
  if (entry.unbounded) return s.yellow("yes, unbounded on purpose (unbounded = true)");
  return s.red("no: the entry lacks min, max or max_step (or values)");
}

function readbackText(fromLimits: string | false | undefined, fromBackend?: string): string {
  if (fromLimits === false) return "none (the limits file says so)";
  if (fromLimits) return `${untrusted(fromLimits)} (from the limits file)`;
  if (fromBackend) return `${untrusted(fromBackend)} (from the control system's catalogue)`;
  return "found by naming convention when a plan writes it, else the device itself";
}

/** The most `/audit N` shows. */
const MAX_AUDIT = 200;

async function showAudit(arg: string, app: App, io: Io): Promise<void> {
  const s = style(io.color);
  const n = arg ? Number(arg) : 10;
  if (!Number.isInteger(n) || n < 1 || n > MAX_AUDIT) {
    io.err(s.red(`/audit takes a count from 1 to ${MAX_AUDIT}, e.g. /audit 3\n`));
    return;
  }
  const dir = app.plans.auditDir;
  const files = await new AuditLog(dir).files();
  const entries = await lastEntries(files, n);
  if (!entries.length) io.out(`no audit records in ${untrusted(dir)}\n`);
  for (const e of entries) io.out(`  ${auditLine(e, s)}\n`);
  if (!files.length) return;
  const result = await verifyAuditDir(
    dir,
    files,
    await app.plans.auditKey(),
    app.plans.audit.headPath,
  ).catch((e: unknown) => ({
    ok: false as const,
    file: dir,
    line: 0,
    reason: e instanceof Error ? e.message : String(e),
  }));
  io.out(
    result.ok
      ? s.green(`  chain verified: ${result.entries} entries, head ${result.head}\n`)
      : s.red(
        `  chain BROKEN at ${untrusted(`${result.file}:${result.line}: ${result.reason}`)}; ` +
          "accel-agent audit verify says more\n",
      ),
  );
}

/** The newest `n` entries, oldest first, reading the newest files first. */
async function lastEntries(files: string[], n: number): Promise<Partial<AuditEntry>[]> {
  const out: Partial<AuditEntry>[] = [];
  for (const file of [...files].reverse()) {
    const lines = (await readAuditFile(file)).split("\n").filter((l) => l.trim());
    for (const line of lines.reverse()) {
      try {
        out.push(JSON.parse(line) as Partial<AuditEntry>);
      } catch {
        out.push({ decision: "(unreadable line)", time: "" });
      }
      if (out.length >= n) return out.reverse();
    }
  }
  return out.reverse();
}

function auditLine(e: Partial<AuditEntry>, s: ReturnType<typeof style>): string {
  const text = (v: unknown) => untrusted(typeof v === "string" ? v : JSON.stringify(v) ?? "");
  const parts = [
    s.dim(text(e.time ?? "")),
    s.bold(text(e.decision ?? "?")),
    e.status ? text(e.status) : "",
    e.planHash ? `plan ${text(e.planHash).slice(0, 12)}` : "",
    e.decidedBy ? `by ${text(e.decidedBy)}` : "",
    e.operator ? `operator ${text(e.operator)}` : "",
    e.run ? s.dim(`run ${text(e.run)}`) : "",
  ];
  const errors = Array.isArray(e.errors) && e.errors.length
    ? s.red(` errors: ${e.errors.map(text).join("; ")}`)
    : "";
  return parts.filter(Boolean).join(" · ") + errors;
}

function showPermissions(app: App, io: Io): void {
  const s = style(io.color);
  let grants: Grants;
  try {
    grants = computeGrants(app.loaded, { env: io.env, cwd: io.cwd });
  } catch (e) {
    if (!(e instanceof GrantError)) throw e;
    io.err(s.red(`cannot compute the grants: ${untrusted(e.message)}\n`));
    return;
  }
  io.out(s.dim("  what the configuration needs (accel-agent permissions), and this process:\n"));
  for (const kind of ["read", "write", "net", "env", "run", "sys"] as const) {
    const list = grants[kind];
    const all = Deno.permissions.querySync({ name: kind }).state === "granted";
    const held = all ? ` ${s.yellow("(this process holds all: more than needed)")}` : "";
    const items = kind === "env" ? [list.join(", ")] : list;
    io.out(`  ${s.bold(kind)}${list.length ? "" : s.dim(" none")}${held}\n`);
    for (const item of items.filter(Boolean)) io.out(`    ${untrusted(item)}\n`);
  }
  const ffi = Deno.permissions.querySync({ name: "ffi" }).state === "granted";
  if (ffi) io.out(`  ${s.bold("ffi")} ${s.yellow("(this process holds it: not needed)")}\n`);
}
