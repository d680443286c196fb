/**
 * What runs after the plan: its rollback, and the restores of every device
 * it wrote. When the plan fails or is aborted, the rollback runs only if it
 * still fits the limits from where the machine now is (it was checked from
 * where the plan would have ended); then every written device the rollback
 * did not put back is restored to its original, newest first, in steps no
 * larger than its max_step, each confirmed. The rollback and each restore
 * have a deadline of their own (the plan's signal may be why they run).
 *
 * A kill switch that is off skips a rollback that writes: its writes are
 * the plan's, not restores, so the originals are restored instead. A
 * restore that cannot reach the device (a read or write that fails, a
 * gateway that answers late) is tried again, with growing pauses, until its
 * deadline; a step refused by max_step or a readback that does not come
 * within tolerance in its settle time is not.
 *
 * @module
 */
import type { Value } from "../../adapters/adapter.ts";
import type { Action } from "../../plan_model/plan.ts";
import type { PreflightedPlan } from "../../plan_model/preflighted.ts";
import { round6, sleep, timeoutSignal } from "../../util/misc.ts";
import { errorMessage } from "../../util/errors.ts";
import { scanPoints } from "../../plan_model/plan.ts";
import { checkValue } from "../preflight.ts";
import { errorText } from "./text.ts";
import type { ActionResult, ExecuteDeps, Restore, RunOptions } from "./types.ts";
import { NotConfirmed, RestoreRefused, StepRefused, type Writer } from "./writer.ts";
import { writtenBy } from "../preflight_checks/walk.ts";

/** What the rollback needs of the run it ends. */
export interface RollbackHost {
  readonly checked: PreflightedPlan;
  readonly deps: ExecuteDeps;
  readonly writer: Writer;
  readonly errors: string[];
  readonly rollbackResults: ActionResult[];
  runAction(where: string, action: Action, opts: RunOptions): Promise<ActionResult>;
  stoppedResult(where: string, action: Action, mark: number): ActionResult;
}

/**
 * Runs the plan's rollback. Returns the devices it wrote, or undefined
 * when it was skipped or failed (the originals must then be restored).
 */
export async function runRollback(
  host: RollbackHost,
  afterFailure: boolean,
): Promise<Set<string> | undefined> {
  const rollback = host.checked.plan.rollback ?? [];
  if (rollback.length === 0) return new Set();
  if (rollback.some((a) => writtenBy(a).length > 0)) {
    const off = await host.writer.switchOff();
    if (off !== undefined) {
      host.errors.push(`rollback not run: ${off}; the originals are restored instead`);
      return undefined;
    }
  }
  if (afterFailure) {
    const problem = await rollbackFitsNow(host, rollback);
    if (problem) {
      host.errors.push(`rollback not run: ${problem}; the originals are restored instead`);
      return undefined;
    }
  }
  const budget = (host.deps.rollbackTimeoutMs ?? 60_000) + 1000 * rollbackSeconds(rollback);
  const opts = { signal: timeoutSignal(budget), progress: false, severity: false };
  for (let i = 0; i < rollback.length; i++) {
    const action = rollback[i] as Action;
    const mark = host.writer.sent.length;
    try {
      host.rollbackResults.push(await host.runAction(`rollback[${i}]`, action, opts));
    } catch (e) {
      host.rollbackResults.push(host.stoppedResult(`rollback[${i}]`, action, mark));
      host.errors.push(`rollback[${i}]: ${errorText(e, opts.signal)}`);
      return undefined;
    }
  }
  return new Set(rollback.flatMap(writtenBy));
}

/** Checks the rollback from the machine's present values; a reason it does not fit, if any. */
async function rollbackFitsNow(
  host: RollbackHost,
  rollback: Action[],
): Promise<string | undefined> {
  const { cs } = host.deps;
  const devices = [...new Set(rollback.flatMap(writtenBy))];
  const signal = timeoutSignal(host.deps.restoreTimeoutMs ?? 30_000);
  try {
    const [infos, readings] = await Promise.all([
      cs.describe(devices, signal),
      cs.read(devices, signal),
    ]);
    const info = new Map(infos.map((d) => [d.device, d]));
    const at = new Map<string, Value | null>(
      readings.map((r) => [r.device, r.ok ? r.value : null]),
    );
    for (const [i, a] of rollback.entries()) {
      const targets = a.type === "write" ? [a.value] : a.type === "scan" ? scanPoints(a) : [];
      const device = a.type === "write" ? a.device : a.type === "scan" ? a.writeDevice : "";
      for (const value of targets) {
        const d = info.get(device);
        if (!d?.exists) return `rollback[${i}]: ${device} is unknown`;
        const from = at.get(device) ?? null;
        const problem = checkValue(
          d,
          value,
          from,
          host.deps.limits.lookup(device),
          host.deps.policy,
        );
        if (problem[0]) return `rollback[${i}]: ${problem[0].message}`;
        const away = awayFromOriginal(host, device, from, value);
        if (away) return `rollback[${i}] ${away}`;
        at.set(device, value);
      }
    }
  } catch (e) {
    return `cannot check it against live values (${errorText(e, signal)})`;
  }
  return undefined;
}

/** Run from the middle of a plan, a rollback may only lead back toward the original. */
function awayFromOriginal(
  host: RollbackHost,
  device: string,
  from: Value | null,
  value: Value,
): string | undefined {
  const original = host.writer.originals.get(device);
  const tol = host.checked.tolerances[device] ?? 1e-6;
  if (
    typeof original === "number" && typeof from === "number" && typeof value === "number" &&
    Math.abs(value - original) > Math.abs(from - original) + tol
  ) {
    return `would move ${device} away from its original ${round6(original)} ` +
      `(to ${round6(value)}, from ${round6(from)})`;
  }
  return undefined;
}

/** The first pause before a restore is tried again; each pause is twice the one before. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2000;

/**
 * Restores every device this run sent a write to, but `except`, to its
 * original, newest first. A device read but never written (its step
 * refused, a kill switch off before its write) is left as it is: whatever
 * it reads now, this run did not put it there.
 */
export async function restoreOriginals(
  writer: Writer,
  deps: ExecuteDeps,
  except: Set<string>,
): Promise<Restore[]> {
  const restores: Restore[] = [];
  const written = new Set(writer.sent.map((w) => w.device));
  for (const [device, original] of [...writer.originals].reverse()) {
    if (except.has(device) || !written.has(device)) continue;
    restores.push(await restoreOne(writer, device, original, deps.restoreTimeoutMs ?? 30_000));
  }
  return restores;
}

/** One device back to its original, tried again while it cannot be reached, within `budgetMs`. */
async function restoreOne(
  writer: Writer,
  device: string,
  original: Value,
  budgetMs: number,
): Promise<Restore> {
  const signal = timeoutSignal(budgetMs);
  const failed = (error: string): Restore => ({
    device,
    to: original,
    readback: null,
    ok: false,
    error,
  });
  let last = "";
  for (let attempt = 1, pause = RETRY_FIRST_MS;; attempt++, pause *= 2) {
    try {
      const c = await writer.restore(device, signal);
      return {
        device,
        to: original,
        readback: c.readback,
        readbackDevice: c.readbackDevice,
        ok: true,
        ...(attempt > 1 ? { attempts: attempt } : {}),
      };
    } catch (e) {
      const final = e instanceof StepRefused || e instanceof NotConfirmed ||
        e instanceof RestoreRefused;
      if (signal.aborted && e === signal.reason) {
        return failed(
          `no answer within its ${round6(budgetMs / 1000)} s` +
            (last ? ` (the last try: ${last}; ${attempt} tries)` : ""),
        );
      }
      last = errorMessage(e);
      if (final) return failed(errorText(e, signal));
    }
    try {
      await sleep(Math.min(pause, RETRY_MAX_MS), signal);
    } catch {
      return failed(
        `not restored within its ${
          round6(budgetMs / 1000)
        } s (${attempt} tries; the last: ${last})`,
      );
    }
  }
}

/** Seconds the rollback spends by design (waits and dwells), on top of its budget. */
function rollbackSeconds(rollback: Action[]): number {
  return rollback.reduce(
    (s, a) =>
      s + (a.type === "wait" ? a.seconds : a.type === "scan" ? a.steps * a.dwellSeconds : 0),
    0,
  );
}
