/**
 * The storage ring's RF as the beam sees it: the cavity voltages add as
 * vectors, V·e^{iΦ} = Σ Vᵢ·e^{iΔφᵢ} (Δφᵢ a station's phase from its initial
 * setting, where the stations were phased together), and the beam settles at
 * the synchronous phase where V·cos(ψ + Φ) = U₀. Each station then gives the
 * beam Pᵢ = I·Vᵢ·cos(ψ + Δφᵢ), which sums to I·U₀; its forward power is its
 * wall loss Vᵢ²/2Rs plus that share.
 *
 * @module
 */

import type { DeviceDef } from "./facility.ts";
import type { Machine } from "./machine.ts";
import type { Setpoints } from "./setpoints.ts";
import { num } from "./signals.ts";

const DEG = Math.PI / 180;

/** One ring RF station's devices. */
export interface Station {
  readonly number: number;
  readonly volt: DeviceDef;
  readonly phase: DeviceDef | undefined;
  readonly status: DeviceDef | undefined;
}

/** The RF voltage the beam sees at one time. */
export interface RfVoltage {
  /** Magnitude of the vector sum, MV. */
  readonly mv: number;
  /** Each station: voltage (kV) and phase from its initial setting (rad), and the sum's phase. */
  readonly stations: readonly { kv: number; dphi: number }[];
  readonly phase: number;
}

/** The ring RF of one {@link Machine}. */
export class RingRf {
  readonly stations: readonly Station[];

  constructor(private readonly m: Machine) {
    const out: Station[] = [];
    for (const def of m.facility.catalogue) {
      const match = /^RF:STN:(\d+):CAV:VOLT$/.exec(def.name);
      if (match === null) continue;
      const prefix = def.prefix.replace(/:CAV$/, "");
      out.push({
        number: Number(match[1]),
        volt: def,
        phase: m.facility.byName.get(`${prefix}:PHASE:SETPT`),
        status: m.facility.byName.get(`${prefix}:STATUS`),
      });
    }
    this.stations = out;
  }

  /** The vector sum of the cavity voltages at `t` (trips and their recovery included). */
  voltage(t: number, sp: Setpoints, withEffects = true): RfVoltage {
    let re = 0;
    let im = 0;
    const each: { kv: number; dphi: number }[] = [];
    for (const s of this.stations) {
      const kv = withEffects
        ? this.m.level(s.volt, t, sp)
        : num(this.m.actual(s.volt.source ?? s.volt, t, sp));
      const dphi = s.phase === undefined ? 0 : this.m.delta(s.phase, t, sp) * DEG;
      re += kv * Math.cos(dphi);
      im += kv * Math.sin(dphi);
      each.push({ kv, dphi });
    }
    return { mv: Math.hypot(re, im) / 1000, stations: each, phase: Math.atan2(im, re) };
  }

  /**
   * The power station `def` (any of its devices) gives the beam, kW, for a
   * current (mA) and an energy loss per turn (MeV): I·Vᵢ·cos(ψ + Δφᵢ).
   */
  beamPowerKW(def: DeviceDef, v: RfVoltage, currentMA: number, u0MeV: number): number {
    const i = this.stations.findIndex((s) =>
      def.prefix.startsWith(s.volt.prefix.replace(/:CAV$/, ""))
    );
    const s = v.stations[i];
    if (s === undefined || !(v.mv > u0MeV) || currentMA <= 0) return 0;
    const psi = Math.acos(u0MeV / v.mv) - v.phase;
    return currentMA * (s.kv / 1000) * Math.cos(psi + s.dphi);
  }

  /** The first station whose state reads `label` at `t` (its number), or undefined. */
  stationIn(label: string, t: number, sp: Setpoints): number | undefined {
    for (const s of this.stations) {
      if (s.status !== undefined && this.m.value(s.status, t, sp, false) === label) return s.number;
    }
    return undefined;
  }

  /** True when every station reads ON: the RF is ready for injection. */
  ready(t: number, sp: Setpoints): boolean {
    return this.stations.every((s) =>
      s.status === undefined || this.m.value(s.status, t, sp, false) === "ON"
    );
  }
}
