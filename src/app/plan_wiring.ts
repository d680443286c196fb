/**
 * Builds the change path from the configuration: limits, policy, audit log
 * and the plan service.
 *
 * @module
 */
import type { ControlSystem } from "../adapters/adapter.ts";
import { facilityIdentity } from "../adapters/mod.ts";
import type { LoadedConfig } from "../config/mod.ts";
import { PlanService } from "../plan/service.ts";
import { RunJournal } from "../plan/run_journal.ts";
import { type Approver, DeferringApprover } from "../safety/approval.ts";
import { ApprovalTokens } from "../safety/approval_token.ts";
import { AuditLog, type SafetyState } from "../safety/audit.ts";
import { AuditForwarder } from "../safety/audit_forward.ts";
import { keysDir, keysExposedBy, loadKey } from "../safety/keys.ts";
import {
  LIMITS_FIX,
  LimitsError,
  LimitsTable,
  MAX_LIMITS_BYTES,
  type NameMatching,
  nameMatchingFor,
  openToAll,
  parseLimits,
} from "../safety/limits.ts";
import { readConfigSwitch, readSiteSwitches } from "../safety/site.ts";
import { defaultPyodideDir, resolvePath as sandboxPath } from "../sandbox/mod.ts";
import { sha256Hex } from "../util/hash.ts";
import { CliError, Exit } from "./exit.ts";
import type { Io } from "./io.ts";
import { errorMessage } from "../util/errors.ts";
import { isRefusal, readRegularText } from "../util/bounded_read.ts";
import type { ElogService } from "../elog/mod.ts";

/** The limits shipped for the simulated facility (`configs/safety_limits.toml`). */
const SHIPPED_LIMITS = decodeURIComponent(
  new URL("../../configs/safety_limits.toml", import.meta.url).pathname,
);

/** The plan service and the approver in force (each mode sets its own). */
export interface PlanPath {
  service: PlanService;
  approver: Approver;
  /** The limits table the plan service checks against (read-only here: `/limits` shows it). */
  limits: LimitsTable;
  /** Directories under the state directory. */
  auditDir: string;
  plansDir: string;
  /** Where scan data (CSV) is written; the sandbox sees it as one of its data directories. */
  scansDir: string;
  /** Where a scan file is for Python in the sandbox, when the sandbox is on. */
  sandboxPath?: (hostPath: string) => string | undefined;
  /** Approval tokens of this state directory (`plan show` issues, `plan run` checks). */
  tokens: ApprovalTokens;
  /** How long a token is valid unless issued for a reusable procedure. */
  approvalExpiryMs: number;
  /** The audit key, when one exists (verification never creates it). */
  auditKey(): Promise<CryptoKey | undefined>;
  /** Records an approval given outside a plan's run (a reusable procedure). */
  audit: AuditLog;
  /**
   * Logbook drafts of the plans that reached the machine, and their posting:
   * opened on first use (a plan's end, an `elog` command), so start-up does not load it.
   */
  elog(): Promise<ElogService>;
  /** The drafts' service if something opened it already (no plan ended: no drafts). */
  elogIfOpen(): ElogService | undefined;
  /** The off-console copy of the audit, when the site file names collectors. */
  forwarder?: AuditForwarder;
  /** Gives the audit's forwarding a bounded moment to send what this process appended. */
  close(): Promise<void>;
}

/** `~` is the home directory; a relative path is relative to the config file. */
export function resolvePath(path: string, baseDir: string, io: Io): string {
  if (path.startsWith("~")) return `${io.env("HOME") ?? io.cwd}${path.slice(1)}`;
  return path.startsWith("/") ? path : `${baseDir}/${path}`;
}

export async function createPlanPath(
  loaded: LoadedConfig,
  cs: ControlSystem,
  stateDir: string,
  io: Io,
): Promise<PlanPath> {
  const { config } = loaded;
  const limitsPath = resolvePath(config.safety.limits_file, loaded.baseDir, io);
  // The shipped limits are the simulated facility's: on a real one they open nothing.
  const simulatorsOwn = cs.kind !== "simulator" && limitsPath === SHIPPED_LIMITS;
  const matching = nameMatchingFor(cs.kind, { tangoHost: config.tango.tango_host });
  const { limits, hash: limitsHash } = simulatorsOwn
    ? { limits: new LimitsTable({}, matching), hash: "" }
    : await readLimits(limitsPath, matching);
  const exposed = keysExposedBy(stateDir, sandboxRoots(loaded, stateDir, io));
  if (exposed) throw new CliError(`config error: ${exposed}`, Exit.USAGE);
  const auditDir = `${stateDir}/audit`;
  const plansDir = `${stateDir}/plans`;
  const scansDir = `${stateDir}/scans`;
  const forwarder = await auditForwarder(config, stateDir, auditDir, io);
  // The head lives beside the audit directory: removing the directory does not remove it.
  const audit = new AuditLog(auditDir, Date.now, {
    key: () => loadKey(stateDir, "audit"),
    headPath: `${stateDir}/audit.head`,
    onRecovered: (m) => io.err(`accel-agent: ${m}\n`),
    ...(forwarder ? { onAppended: (_: unknown, seq: number) => forwarder.appended(seq) } : {}),
  });
  // Read before every proposal and every write of a running plan: the site files and the config's own switch.
  const safety = async (): Promise<SafetyState> => {
    const [site, live] = await Promise.all([
      readSiteSwitches(io.env),
      // Every file of the chain: a switch turned off in a config the operator's extends counts too.
      readConfigSwitch(loaded.layers?.length ? loaded.layers.map((l) => l.path) : loaded.path),
    ]);
    const configOn = config.safety.writes_enabled && live.writesEnabled;
    return {
      limitsFile: limitsPath,
      limitsHash,
      configWritesEnabled: configOn,
      ...(live.error ? { configError: live.error } : {}),
      site,
      writesEnabled: configOn && site.every((x) => x.writesEnabled),
    };
  };
  const identity = {
    operator: operatorName(config.operator, io),
    host: hostName(),
    configHash: loaded.hash,
  };
  const workDir = resolvePath(config.sandbox.work_dir, loaded.baseDir, io);
  let opened: ElogService | undefined;
  let opening: Promise<ElogService> | undefined;
  const elog = () =>
    opening ??= import("./elog_wiring.ts")
      .then((m) => m.createElog(loaded, { stateDir, scansDir, workDir, audit, identity }, io))
      .then((service) => (opened = service));
  const service = new PlanService({
    cs,
    limits,
    policy: {
      writesEnabled: config.safety.writes_enabled,
      maxScanPoints: config.safety.max_scan_points,
      maxPlanSeconds: config.safety.max_plan_seconds,
      // As the config's directory sees it: beside the config, its name; inherited, its whole path.
      limitsSource: simulatorsOwn
        ? `${limitsPath} (the simulated facility's limits, which open nothing on ${cs.kind}: ` +
          "name this facility's own in [safety] limits_file)"
        : limitsPath.startsWith(`${loaded.baseDir}/`)
        ? limitsPath.slice(loaded.baseDir.length + 1)
        : limitsPath,
    },
    audit,
    safety,
    identity,
    now: () => Date.now(),
    plansDir,
    journal: new RunJournal(`${stateDir}/running`),
    workDir: scansDir,
    autoApproveReadOnly: !config.safety.ask_for_read_only_plans,
    readbackTimeoutMs: config.safety.readback_timeout_s * 1000,
    onFinished: async (run) => await (await elog()).planFinished(run),
  });
  return {
    service,
    approver: new DeferringApprover(),
    limits,
    auditDir,
    plansDir,
    scansDir,
    // A token binds the facility and the limits it was shown against, not the plan alone.
    tokens: new ApprovalTokens(stateDir, {
      facility: facilityIdentity(config),
      limits: limitsHash,
    }),
    approvalExpiryMs: config.safety.approval_expiry_s * 1000,
    audit,
    elog,
    elogIfOpen: () => opened,
    ...(forwarder ? { forwarder } : {}),
    close: async () => await forwarder?.close(),
    async auditKey() {
      try {
        await Deno.stat(`${keysDir(stateDir)}/audit.key`);
      } catch {
        return undefined;
      }
      return await loadKey(stateDir, "audit");
    },
  };
}

/**
 * The forwarder to the log collectors the site files name, if any. The
 * sim-eval profile's attempts (simulated, auto-approved) stay on the console.
 */
async function auditForwarder(
  config: LoadedConfig["config"],
  stateDir: string,
  auditDir: string,
  io: Io,
): Promise<AuditForwarder | undefined> {
  if (config.profile.name === "sim-eval") return undefined;
  const collectors = (await readSiteSwitches(io.env)).flatMap((s) => s.collectors ?? []);
  if (!collectors.length) return undefined;
  return new AuditForwarder({
    stateDir,
    auditDir,
    collectors,
    report: (m) => io.err(`accel-agent: ${m}\n`),
  });
}

/** The limits file's table and the SHA-256 of its bytes ("" when there is no file: nothing is writable). */
async function readLimits(
  path: string,
  matching: NameMatching,
): Promise<{ limits: LimitsTable; hash: string }> {
  let text: string;
  try {
    text = await readRegularText(path, MAX_LIMITS_BYTES, { fix: LIMITS_FIX });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      return { limits: new LimitsTable({}, matching), hash: "" };
    }
    if (isRefusal(e)) throw new CliError(`limits error: ${e.message}`, Exit.USAGE);
    throw new CliError(
      `limits error: ${path}: cannot read the limits file (${errorMessage(e)})`,
      Exit.USAGE,
    );
  }
  const open = await openToAll(path);
  if (open) throw new CliError(`limits error: ${open}`, Exit.USAGE);
  try {
    return { limits: parseLimits(text, path, matching), hash: await sha256Hex(text) };
  } catch (e) {
    if (e instanceof LimitsError) throw new CliError(`limits error: ${e.message}`, Exit.USAGE);
    throw e;
  }
}

/** Every directory the Python sandbox is granted a read of, as the config names it. */
function sandboxRoots(loaded: LoadedConfig, stateDir: string, io: Io) {
  const s = loaded.config.sandbox;
  const home = io.env("HOME") ?? io.cwd;
  const at = (p: string) => sandboxPath(p, loaded.baseDir, home);
  return [
    ...s.data_dirs.map((d) => ({ path: at(d), what: "[sandbox] data_dirs" })),
    { path: `${stateDir}/scans`, what: "the scans directory" },
    ...(s.scripts_dir ? [{ path: at(s.scripts_dir), what: "[sandbox] scripts_dir" }] : []),
    ...(s.packages_dir ? [{ path: at(s.packages_dir), what: "[sandbox] packages_dir" }] : []),
    {
      path: s.pyodide_dir ? at(s.pyodide_dir) : defaultPyodideDir(),
      what: "the Pyodide directory",
    },
    { path: at(s.cache_dir), what: "[sandbox] cache_dir" },
  ];
}

/** Who the operator is: `operator` in the config, else the login name. */
export function operatorName(configured: string | undefined, io: Io): string {
  return configured ?? io.env("USER") ?? io.env("LOGNAME") ?? io.env("USERNAME") ?? "unknown";
}

function hostName(): string {
  try {
    return Deno.hostname();
  } catch {
    return "unknown";
  }
}
