/**
 * The stored current: dI/dt = −I/τ + injection, integrated through time.
 * While the machine runs undisturbed it keeps its top-up cycle, which has a
 * closed form (I = I_top·e^(−Δt/τ) since the last top-up, or the equilibrium
 * I = rate·τ when the injector cannot keep up); wherever something happens
 * (an incident of the facility's history, a live write or fault) the current
 * is stepped forward with the lifetime, the injection rate and the loss
 * conditions the machine has at each step, from the closed form before it,
 * and kept in checkpoints so reads and archive queries replay it cheaply. A
 * loss is placed at the moment its cause starts, to the millisecond.
 *
 * @module
 */

/** What the ring is like at one time: supplied by the physics. */
export interface BeamConditions {
  /** Why no beam can be stored now (RF, aperture, resonance, instability, permit), or undefined. */
  readonly lossReason: string | undefined;
  /** The beam-loss monitor where a loss happens (device name). */
  readonly lossMonitor: string | undefined;
  /** Lifetime (h) at a stored current (mA). */
  lifetimeH(currentMA: number): number;
  /** Injection rate while injecting, mA/s (0 when injection is inhibited). */
  readonly fillRateMAps: number;
  /** Top-up mode with injection enabled and every interlock clear. */
  readonly topUp: boolean;
  /** Top-up interval, s. */
  readonly intervalS: number;
}

/** A beam loss: when, how much and where. */
export interface LossEvent {
  readonly t: number;
  readonly lostMA: number;
  readonly monitor: string | undefined;
  readonly reason: string;
}

/** The source of conditions and of the history's shape. */
export interface BeamEnv {
  conditions(t: number): BeamConditions;
  /** Top-up target current, mA. */
  readonly targetMA: number;
}

const MAX_STEP_MS = 10_000;
const ONSET_RESOLUTION_MS = 1;

/** The current, checkpointed from `start` on. */
export class BeamTrack {
  private readonly ts: number[] = [];
  private readonly currents: number[] = [];
  private readonly injecting: boolean[] = [];
  readonly losses: LossEvent[] = [];

  /** `startMA`: the current at `start` (default: the closed form of the top-up cycle). */
  constructor(private readonly env: BeamEnv, readonly start: number, startMA?: number) {
    this.ts.push(start);
    this.currents.push(startMA ?? closedFormCurrent(env, start));
    this.injecting.push(false);
  }

  /** Forgets everything after `t` (a write at `t` changed the future) and checkpoints at `t`. */
  truncate(t: number): void {
    let n = this.ts.length;
    while (n > 1 && (this.ts[n - 1] ?? 0) > t) n--;
    this.ts.length = n;
    this.currents.length = n;
    this.injecting.length = n;
    while (this.losses.length > 0 && (this.losses[this.losses.length - 1]?.t ?? 0) > t) {
      this.losses.pop();
    }
    // Step exactly to `t`, so the conditions the write changed apply from that moment.
    const last = n - 1;
    let time = this.ts[last] ?? t;
    let current = this.currents[last] ?? 0;
    let injecting = this.injecting[last] ?? false;
    if (time >= t) return;
    while (time < t) {
      const to = Math.min(t, nextStop(time, this.env.conditions(time).intervalS));
      [time, current, injecting] = this.step(time, to, current, injecting, true);
    }
    this.ts.push(time);
    this.currents.push(current);
    this.injecting.push(injecting);
  }

  /**
   * Stored current (mA) at `t` ≥ start. Checkpoints (and the losses found on
   * the way) reach up to the latest time asked for; earlier times are stepped
   * to from the checkpoint before them.
   */
  current(t: number): number {
    let last = this.ts.length - 1;
    while ((this.ts[last] ?? 0) < t) {
      const from = this.ts[last] ?? 0;
      const to = Math.min(t, nextStop(from, this.env.conditions(from).intervalS));
      const [tEnd, current, injecting] = this.step(
        from,
        to,
        this.currents[last] ?? 0,
        this.injecting[last] ?? false,
        true,
      );
      this.ts.push(tEnd);
      this.currents.push(current);
      this.injecting.push(injecting);
      last++;
    }
    const i = bisect(this.ts, t);
    let time = this.ts[i] ?? this.start;
    let current = this.currents[i] ?? 0;
    let injecting = this.injecting[i] ?? false;
    while (time < t) {
      const to = Math.min(t, nextStop(time, this.env.conditions(time).intervalS));
      [time, current, injecting] = this.step(time, to, current, injecting, false);
    }
    return current;
  }

  /** One step from `t0` towards `t1`; may end early when a fill completes or the beam is lost. */
  private step(
    t0: number,
    t1: number,
    current: number,
    injecting: boolean,
    record: boolean,
  ): [number, number, boolean] {
    const c = this.env.conditions(t0);
    if (c.lossReason !== undefined) {
      if (current > 0 && record) {
        this.losses.push({ t: t0, lostMA: current, monitor: c.lossMonitor, reason: c.lossReason });
      }
      return [t1, 0, false];
    }
    // A cause of loss that starts within the step ends it there, to the millisecond.
    if (current > 0 && this.env.conditions(t1).lossReason !== undefined) {
      let lo = t0;
      let hi = t1;
      while (hi - lo > ONSET_RESOLUTION_MS) {
        const mid = Math.floor((lo + hi) / 2);
        if (this.env.conditions(mid).lossReason === undefined) lo = mid;
        else hi = mid;
      }
      if (hi < t1) {
        const [, before] = this.step(t0, hi, current, injecting, false);
        return [hi, before, false];
      }
    }
    const target = this.env.targetMA;
    const atTopUp = isBoundary(t0, c.intervalS) || current < 0.5 * target;
    const inject = c.topUp && c.fillRateMAps > 0 && current < target &&
      (injecting || atTopUp);
    const tauS = Math.max(1e-3, c.lifetimeH(Math.max(current, 1e-6)) * 3600);
    const rate = inject ? c.fillRateMAps : 0;
    const steady = rate * tauS;
    const dtS = (t1 - t0) / 1000;
    const next = steady + (current - steady) * Math.exp(-dtS / tauS);
    if (inject && next >= target && steady > target) {
      const toTarget = tauS * Math.log((steady - current) / (steady - target));
      const tEnd = Math.min(t1, t0 + Math.max(1, toTarget * 1000));
      return [tEnd, target, false];
    }
    return [t1, Math.max(0, next), inject];
  }
}

/**
 * The undisturbed top-up cycle in closed form: full at each interval
 * boundary, decaying between; or, when the injector cannot make up the loss
 * (`keepsUp` false: rate·τ below the target), the equilibrium I = rate·τ(I).
 */
export function closedFormCurrent(env: BeamEnv, t: number, keepsUp = true): number {
  const c = env.conditions(t);
  if (c.lossReason !== undefined) return 0;
  const periodMs = c.intervalS * 1000;
  const since = ((t % periodMs) + periodMs) % periodMs;
  const cycle = env.targetMA * Math.exp(-since / 1000 / (c.lifetimeH(env.targetMA) * 3600));
  if (keepsUp || !c.topUp) return cycle;
  const rate = c.fillRateMAps;
  if (rate * c.lifetimeH(env.targetMA) * 3600 >= env.targetMA) return cycle;
  // Injecting all the time: I = rate·τ(I), solved by iteration (τ grows as I falls).
  let i = rate * c.lifetimeH(env.targetMA) * 3600;
  for (let k = 0; k < 20; k++) {
    i = Math.min(env.targetMA, rate * c.lifetimeH(Math.max(i, 1e-6)) * 3600);
  }
  return i;
}

function nextStop(t: number, intervalS: number): number {
  const periodMs = intervalS * 1000;
  const boundary = (Math.floor(t / periodMs) + 1) * periodMs;
  return Math.min(t + MAX_STEP_MS, boundary);
}

function isBoundary(t: number, intervalS: number): boolean {
  return t % (intervalS * 1000) === 0;
}

/** Index of the last element ≤ t (0 when none). */
function bisect(ts: readonly number[], t: number): number {
  let lo = 0;
  let hi = ts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((ts[mid] ?? Infinity) <= t) lo = mid + 1;
    else hi = mid;
  }
  return Math.max(0, lo - 1);
}
