/**
 * Builds the change path from the configuration: limits, policy, audit log
 * and the plan service.
 *
 * @module
 */
import type { ControlSystem } from "../adapters/adapter.ts";
import type { LoadedConfig } from "../config/mod.ts";
import { PlanService } from "../plan/service.ts";
import { type Approver, DeferringApprover } from "../safety/approval.ts";
import { AuditLog } from "../safety/audit.ts";
import { LimitsError, loadLimits, nameMatchingFor } from "../safety/limits.ts";
import { CliError, Exit } from "./exit.ts";
import type { Io } from "./io.ts";

/** The plan service and the approver in force (each mode sets its own). */
export interface PlanPath {
  service: PlanService;
  approver: Approver;
  /** Directories under the state directory. */
  auditDir: string;
  plansDir: string;
  /** Where scan data (CSV) is written; the sandbox sees it as one of its data directories. */
  scansDir: string;
  /** Where a scan file is for Python in the sandbox, when the sandbox is on. */
  sandboxPath?: (hostPath: string) => string | undefined;
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
  let limits;
  try {
    limits = await loadLimits(limitsPath, nameMatchingFor(cs.kind));
  } catch (e) {
    if (e instanceof LimitsError) throw new CliError(`limits error: ${e.message}`, Exit.USAGE);
    throw e;
  }
  const auditDir = `${stateDir}/audit`;
  const plansDir = `${stateDir}/plans`;
  const scansDir = `${stateDir}/scans`;
  const service = new PlanService({
    cs,
    limits,
    policy: {
      writesEnabled: config.safety.writes_enabled,
      maxScanPoints: config.safety.max_scan_points,
      maxPlanSeconds: config.safety.max_plan_seconds,
      limitsSource: config.safety.limits_file,
    },
    audit: new AuditLog(auditDir),
    identity: {
      operator: operatorName(config.operator, io),
      host: hostName(),
      configHash: loaded.hash,
    },
    now: () => Date.now(),
    plansDir,
    workDir: scansDir,
    autoApproveReadOnly: !config.safety.ask_for_read_only_plans,
    readbackTimeoutMs: config.safety.readback_timeout_s * 1000,
  });
  return { service, approver: new DeferringApprover(), auditDir, plansDir, scansDir };
}

function operatorName(configured: string | undefined, io: Io): string {
  return configured ?? io.env("USER") ?? io.env("LOGNAME") ?? io.env("USERNAME") ?? "unknown";
}

function hostName(): string {
  try {
    return Deno.hostname();
  } catch {
    return "unknown";
  }
}
