/**
 * The one place in the program that calls `ControlSystem.write` (a test
 * enforces it). Every write is checked against the value read just before
 * it (max_step from the machine as it is, not as it was at preflight), then
 * its readback device (see `../readback.ts`) is read until it comes within
 * tolerance or the settle time runs out, on the injected timers. A device
 * with no readback device has only its setpoint read back: "setpoint
 * accepted, no readback device", never "confirmed". The first read of a
 * device is its original.
 *
 * The kill switches are asked right before every write goes to the control
 * system, so a switch turned off stops the plan before its next write or scan
 * point: at most the one write already past its check when the switch was
 * turned off still reaches the wire. One kind of write is exempt: a restore
 * ({@link Writer.restore}), which brings a device this run wrote back to the
 * value it read before its first write, in steps no larger than max_step,
 * each within the device's limits or between its original and the values
 * this run sent it. Leaving a device half-way through a plan nobody can
 * finish is worse than putting back what the plan itself changed; nothing
 * else is written.
 *
 * @module
 */
import type { Value } from "../../adapters/adapter.ts";
import type { PreflightedPlan, ReadbackPartner } from "../../plan_model/preflighted.ts";
import { errorMessage } from "../../util/errors.ts";
import { round6, sleep } from "../../util/misc.ts";
import { DEFAULT_SETTLE_MS } from "../preflight.ts";
import { partnerText } from "../readback.ts";
import { errorText, show } from "./text.ts";
import type { Confirmation, ExecuteDeps } from "./types.ts";

/**
 * How often a readback is read while it settles: first {@link FIRST_POLL_MS}
 * after the write, each pause twice the one before, then every
 * {@link POLL_MS}. Most readbacks follow within milliseconds (a scan's small
 * steps), so a fixed 50 ms pause cost a scan point far more than its reads.
 */
const FIRST_POLL_MS = 1;
const POLL_MS = 50;

/** How long the kill switches have to answer before they count as off (real time). */
export const SWITCH_ANSWER_MS = 5000;

/** A write that would step further than max_step from the live value. */
export class StepRefused extends Error {}

/** A write whose readback did not come within tolerance in its settle time. */
export class NotConfirmed extends Error {}

/** A write not sent because a kill switch is off. */
export class WritesOff extends Error {}

/**
 * A restore step not sent: from where the device reads now, it would go
 * where neither the limits nor this run ever put the device (a gateway that
 * returns another channel's value, or someone else moving it).
 */
export class RestoreRefused extends Error {}

/** Writes one device at a time, each confirmed, and remembers every device's original. */
export class Writer {
  /** Original value of every device written, in order of first write. */
  readonly originals = new Map<string, Value>();
  /** Every write handed to the control system, in order: what the wire may have received. */
  readonly sent: { device: string; value: Value }[] = [];
  /** The value last sent to each device whose confirmation has not come (yet). */
  readonly #unconfirmed = new Map<string, Value>();
  /** Why writes were off, once a check found them off. */
  switchedOff?: string;

  constructor(readonly checked: PreflightedPlan, readonly deps: ExecuteDeps) {}

  /** The device's value now; throws when it cannot be read. */
  async readValue(device: string, signal: AbortSignal): Promise<Value> {
    const [r] = await this.deps.cs.read([device], signal);
    if (!r?.ok || r.value === null) {
      throw new Error(`cannot read ${device} (${r?.error ?? "no value"})`);
    }
    return r.value;
  }

  /**
   * Why writes are off now (every kill switch asked), or undefined while
   * they are allowed. A switch that cannot be read, or does not answer
   * within {@link SWITCH_ANSWER_MS} (a site file swapped for a FIFO blocks
   * its open), counts as off.
   */
  async switchOff(): Promise<string | undefined> {
    if (!this.deps.killSwitch) return undefined;
    let off: string | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      off = await Promise.race([
        this.deps.killSwitch(),
        new Promise<string>((resolve) => {
          timer = setTimeout(
            () =>
              resolve(
                `writes are off: the kill switches did not answer within ${
                  SWITCH_ANSWER_MS / 1000
                } s`,
              ),
            SWITCH_ANSWER_MS,
          );
        }),
      ]);
    } catch (e) {
      off = `writes are off: the kill switches cannot be read (${errorMessage(e)})`;
    } finally {
      clearTimeout(timer);
    }
    if (off !== undefined) this.switchedOff ??= off;
    return off;
  }

  /**
   * Reads the device (its first read is its original), refuses a step
   * beyond max_step from that live value, asks the kill switches, writes,
   * and waits for the readback to come within tolerance.
   */
  writeConfirmed(device: string, value: Value, signal: AbortSignal): Promise<Confirmation> {
    return this.#put(device, value, signal, false);
  }

  /**
   * Brings a device this run wrote back to its original, in steps no
   * larger than its max_step: the one write a kill switch turned off allows.
   */
  async restore(device: string, signal: AbortSignal): Promise<Confirmation> {
    const original = this.originals.get(device);
    if (original === undefined) throw new Error(`${device} was not written by this plan`);
    const unconfirmed = this.#unconfirmed.has(device);
    try {
      return await this.#rampTo(device, original, signal);
    } catch (e) {
      if (!unconfirmed || signal.aborted || e instanceof RestoreRefused) throw e;
      // The plan's write was never confirmed and the restore's failed too (an IOC that
      // refuses every put to it): the device may never have moved. It is restored only if,
      // a whole settle time later (so a late landing of that write would show), it reads
      // its original; the claim rests on that read, never on the refused write.
      const settle = this.checked.readbacks[device]?.settleMs ?? this.#defaultSettleMs();
      await sleep(settle, signal, this.deps.timers);
      const tol = this.checked.tolerances[device] ?? 1e-6;
      const [now] = await this.deps.cs.read([device], signal);
      if (!now?.ok || !matches(now.value, original, tol)) throw e;
      this.#unconfirmed.delete(device);
      return await this.awaitReadback(device, original, signal);
    }
  }

  async #put(
    device: string,
    value: Value,
    signal: AbortSignal,
    restoring: boolean,
  ): Promise<Confirmation> {
    let before: Value;
    try {
      before = await this.readValue(device, signal);
    } catch (e) {
      throw new Error(`${errorText(e, signal)} before writing it; nothing was written to it`);
    }
    if (!this.originals.has(device)) this.originals.set(device, before);
    const maxStep = this.deps.limits.lookup(device)?.max_step;
    if (maxStep !== undefined && typeof value === "number" && typeof before !== "number") {
      // A number read as text (a gateway sending it so): the step cannot be checked, so no write.
      throw new StepRefused(
        `refused to write ${device} = ${round6(value)}: it reads ${
          JSON.stringify(before)
        }, not a number, so the step from its live value cannot be checked against max_step ${maxStep}`,
      );
    }
    if (
      maxStep !== undefined && typeof before === "number" && typeof value === "number" &&
      Math.abs(value - before) > maxStep + 1e-9
    ) {
      throw new StepRefused(
        `refused to write ${device} = ${round6(value)}: a step of ${
          round6(value - before)
        } from the live ${round6(before)} exceeds max_step ${maxStep}`,
      );
    }
    if (!restoring) {
      // Asked last, right before the wire: nothing between this check and the write waits.
      const off = await this.switchOff();
      if (off !== undefined) {
        throw new WritesOff(`the plan stopped before writing ${device} = ${show(value)}: ${off}`);
      }
    }
    this.sent.push({ device, value });
    this.#unconfirmed.set(device, value);
    await this.deps.cs.write(device, value, signal);
    const confirmed = await this.awaitReadback(device, value, signal);
    this.#unconfirmed.delete(device);
    return confirmed;
  }

  /**
   * Brings a device to `target` in steps no larger than its max_step: a
   * restore must not jump where a plan could not.
   */
  async #rampTo(device: string, target: Value, signal: AbortSignal): Promise<Confirmation> {
    const maxStep = this.deps.limits.lookup(device)?.max_step;
    if (typeof target !== "number") {
      this.#restorableState(device, target);
      return await this.#put(device, target, signal, true);
    }
    if (maxStep === undefined) return await this.#put(device, target, signal, true);
    const tol = this.checked.tolerances[device] ?? 1e-6;
    let now = await this.#readNumber(device, signal);
    // A write this run sent and never saw confirmed (stopped while it settled) may land after
    // this read, which can be older than it: the device is at `now` or on its way to `pending`.
    // So the restore steps from whichever is further from the target, and writes the target even
    // when the read already shows it: the last write the device takes is then the original.
    const pending = this.#unconfirmed.get(device);
    if (typeof pending === "number" && Math.abs(pending - target) > Math.abs(now - target)) {
      now = pending;
    }
    if (pending === undefined && Math.abs(now - target) <= tol) {
      // Already there: say what confirms it, as a write would.
      return await this.awaitReadback(device, target, signal);
    }
    for (let guard = 0; guard < 10_000; guard++) {
      const last = Math.abs(target - now) <= maxStep;
      const step = last ? target : now + Math.sign(target - now) * maxStep;
      this.#restorable(device, target, step, now);
      const c = await this.#put(device, step, signal, true);
      if (last) return c;
      now = await this.#readNumber(device, signal);
    }
    throw new Error(`${device} did not reach ${target}`);
  }

  /**
   * Throws {@link RestoreRefused} unless a text or enum device's original is
   * a value its limits list, or the value preflight read just before the
   * plan (the audit's write-ahead record): it has no steps to bound, so a
   * gateway that lied about it at its write would otherwise have the restore
   * set a state nobody allowed.
   */
  #restorableState(device: string, original: Value): void {
    const allowed = this.deps.limits.lookup(device)?.values;
    const before = this.checked.live[device];
    if (
      allowed?.includes(String(original)) || JSON.stringify(before) === JSON.stringify(original)
    ) {
      return;
    }
    throw new RestoreRefused(
      `refused to restore ${device} to ${show(original)}: its limits do not list that value, and ` +
        `it read ${show(before ?? null)} before the plan; check ${device} by hand`,
    );
  }

  /**
   * Throws {@link RestoreRefused} unless a restore step to `value` stays
   * where the device may be put: within its limits entry's min and max, or
   * between its original and the values this run sent it. A step is worked
   * out from the live value, so without this a gateway that answers with
   * another channel's value (−1000 for a corrector) would have the restore
   * walk the device out to there, past every limit, with no kill switch asked.
   */
  #restorable(device: string, original: number, value: number, now: number): void {
    const limit = this.deps.limits.lookup(device);
    const withinLimits = limit?.min !== undefined && limit.max !== undefined &&
      value >= limit.min && value <= limit.max;
    const moved = [original, ...this.sent.filter((w) => w.device === device).map((w) => w.value)]
      .filter((v): v is number => typeof v === "number");
    const lo = Math.min(...moved), hi = Math.max(...moved);
    if (withinLimits || (value >= lo && value <= hi)) return;
    throw new RestoreRefused(
      `refused to restore ${device}: it reads ${round6(now)}, and the next step, ${
        round6(value)
      }, is outside its limits and outside what this run moved it through (${round6(lo)} … ${
        round6(hi)
      }); check ${device} by hand`,
    );
  }

  /**
   * Reads the device's readback partner (or, with none, the device itself)
   * until it is within tolerance of `value`, for at most its settle time on
   * the injected timers (a fake clock in tests, so the simulator's lag runs
   * on its own time).
   */
  async awaitReadback(device: string, value: Value, signal: AbortSignal): Promise<Confirmation> {
    const tol = this.checked.tolerances[device] ?? 1e-6;
    const partner: ReadbackPartner = this.checked.readbacks[device] ??
      { device: null, readValue: false, source: "none", settleMs: this.#defaultSettleMs() };
    const read = partner.device ?? device;
    const timers = this.deps.timers;
    const clock = () => timers?.now() ?? performance.now();
    const deadline = clock() + partner.settleMs;
    for (let pause = FIRST_POLL_MS;; pause = Math.min(POLL_MS, 2 * pause)) {
      const [after] = await this.deps.cs.read([read], signal);
      const got = after?.ok ? after.value : null;
      if (matches(got, value, tol)) return confirmation(partner, got);
      const now = clock();
      if (now >= deadline) throw notConfirmed(device, value, tol, partner, got);
      await sleep(Math.min(pause, Math.max(1, deadline - now)), signal, timers);
    }
  }

  async #readNumber(device: string, signal: AbortSignal): Promise<number> {
    const now = await this.readValue(device, signal);
    if (typeof now !== "number") throw new Error(`${device} reads ${show(now)}, not a number`);
    return now;
  }

  #defaultSettleMs(): number {
    return this.deps.readbackTimeoutMs ?? DEFAULT_SETTLE_MS;
  }
}

function confirmation(partner: ReadbackPartner, got: Value | null): Confirmation {
  return partner.device
    ? {
      status: "confirmed",
      readbackDevice: partner.device,
      ...(partner.readValue ? { readValue: true } : {}),
      readback: got,
    }
    : { status: "accepted", readbackDevice: null, readback: got };
}

function notConfirmed(
  device: string,
  value: Value,
  tol: number,
  partner: ReadbackPartner,
  got: Value | null,
): Error {
  const waited = `${round6(partner.settleMs / 1000)} s`;
  const want = `${typeof value === "number" ? round6(value) : value} within ±${tol}`;
  return new NotConfirmed(
    partner.device
      ? `readback ${partnerText(partner)} of ${device} reads ${show(got)}, not ${want} ` +
        `after ${waited}: the write is not confirmed`
      : `${device} (no readback device) reads back ${show(got)}, not ${want} after ${waited}: ` +
        "the setpoint was not accepted",
  );
}

function matches(got: Value | null, want: Value, tol: number): boolean {
  if (typeof got === "number" && typeof want === "number") {
    return Math.abs(got - want) <= tol + 1e-12;
  }
  return got === want;
}
