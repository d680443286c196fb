/**
 * The electronic logbook: what the crews and experts wrote about each shift.
 * Entries narrate the shift's incidents with numbers read from the same
 * physics that feeds the archive, so the story and the trends agree.
 *
 * @module
 */

import type { LogEntry, Severity } from "../control/records.ts";
import type { IncidentBook, ShiftPlan } from "./incidents.ts";
import {
  type Draft,
  hm,
  incidentDrafts,
  keyDevices,
  type Level,
  MIN_MS,
  type Narrator,
  phrase,
} from "./narratives.ts";
import { hashNumbers, Rng } from "./noise.ts";
import type { Physics } from "./physics.ts";
import { type PastSetpoints, type RoutineAction, SCAN_HALF_RANGE_DEG } from "./routine.ts";
import { INJECTION_CORRECTORS } from "./corrections.ts";

const LEVEL_SEVERITY: Record<Level, Severity> = {
  Info: "NONE",
  Warning: "MINOR",
  Problem: "MAJOR",
};
/** Entries per shift are numbered k·64 + i, so ids are unique and stable. */
const IDS_PER_SHIFT = 64;
const MD_TOPICS = [
  "chromaticity measurement",
  "LOCO optics measurement",
  "beam-based alignment of the ring quadrupoles",
  "single-bunch instability thresholds",
  "injection efficiency optimisation",
];

/** Writes the e-log of one shift. */
export class ElogWriter implements Narrator {
  constructor(
    private readonly physics: Physics,
    private readonly past: PastSetpoints,
    readonly book: IncidentBook,
    private readonly people: Readonly<Record<string, readonly string[]>>,
    private readonly corrections: { readonly orbitCorrectors: readonly string[] },
  ) {}

  /** The shift's entries, oldest first (recovery notes may fall in the next shift). */
  entries(plan: ShiftPlan): LogEntry[] {
    const rng = new Rng(hashNumbers(this.physics.seed, plan.k, 0xe106));
    const drafts: Draft[] = [this.shiftStart(plan, rng)];
    for (const incident of plan.incidents) {
      drafts.push(...incidentDrafts(this, incident, plan, rng));
    }
    drafts.push(...this.routine(plan, rng), this.summary(plan, rng));
    drafts.sort((a, b) => a.t - b.t);
    return drafts.slice(0, IDS_PER_SHIFT).map((d, i) => ({
      source: "elog",
      id: String(plan.k * IDS_PER_SHIFT + i),
      time: new Date(d.t).toISOString(),
      title: d.title,
      text: d.text,
      author: d.author,
      logbook: d.logbook,
      devices: [...new Set(d.devices)],
      severity: LEVEL_SEVERITY[d.level],
      status: d.level,
    }));
  }

  v(name: string, t: number): number {
    const def = this.physics.facility.byName.get(name);
    const value = def ? this.physics.value(def, t, this.past, false) : 0;
    return typeof value === "number" ? value : 0;
  }

  state(name: string, t: number): string {
    const def = this.physics.facility.byName.get(name);
    return def ? String(this.physics.value(def, t, this.past, false)) : "";
  }

  refilledAfter(t: number): number {
    const full = 0.99 * (this.physics.ring?.targetMA ?? 300);
    const current = (u: number) => this.physics.beam.current(u, this.past);
    let lo = t;
    for (let u = t; u < t + 8 * 60 * MIN_MS; u += 10_000) {
      if (current(u) >= full) {
        let hi = u;
        while (hi - lo > 1000) {
          const mid = Math.floor((lo + hi) / 2);
          if (current(mid) >= full) hi = mid;
          else lo = mid;
        }
        return hi;
      }
      lo = u;
    }
    return t + 8 * 60 * MIN_MS;
  }

  fillRate(t: number): number {
    return this.physics.beam.conditions(t, this.past).fillRateMAps;
  }

  lossRate(t: number): number {
    const current = this.physics.beam.current(t, this.past);
    if (current <= 0) return 0;
    return current / (this.physics.beam.lifetime(t, this.past).totalH * 3600);
  }

  expert(rng: Rng, group: string, plan: ShiftPlan): string {
    return rng.pick(this.people[group] ?? [plan.crew.lead]);
  }

  private shiftStart(plan: ShiftPlan, rng: Rng): Draft {
    const t = plan.start + Math.round(rng.range(3, 12) * MIN_MS);
    const current = this.v("RING:DCCT:CURRENT", t);
    const previous = this.book.plan(plan.k - 1).incidents;
    const handover = previous.length
      ? previous.map((i) => phrase(this, i, t)).join("; ")
      : "quiet shift, no open items";
    const target = this.physics.ring?.targetMA ?? 300;
    const beam = current < 1
      ? "no stored beam"
      : `${current.toFixed(1)} mA ${
        current < 0.95 * target && this.fillRate(t) > 0 ? "with continuous injection" : "in top-up"
      }, lifetime ${this.v("RING:LIFETIME", t).toFixed(1)} h`;
    const watch =
      previous.some((i) => i.kind === "rf-trip" && i.station === 3 && i.cause === "REFL_PWR")
        ? " Keep an eye on RF:STN:03:REFL:PWR."
        : "";
    return {
      t,
      title: `${plan.name} shift start`,
      text: `Crew ${plan.crew.id}: ${plan.crew.lead} (lead), ${plan.crew.operator}. Mode ${
        plan.mode === "MD" ? "machine development" : "user operation"
      }, ${beam}. Handover from the previous shift: ${handover}.${watch}`,
      author: plan.crew.lead,
      logbook: "Operations",
      devices: previous.flatMap((i) => keyDevices(i)),
      level: "Info",
    };
  }

  private routine(plan: ShiftPlan, rng: Rng): Draft[] {
    const out: Draft[] = [];
    const operator = rng.pick([plan.crew.lead, plan.crew.operator]);
    for (const a of plan.routine) out.push(this.narrate(a, operator, rng, plan));
    if (plan.mode === "MD") {
      const topic = rng.pick(MD_TOPICS);
      const physicist = this.expert(rng, "Physics", plan);
      const start = {
        t: plan.start + 20 * MIN_MS,
        title: `MD: ${topic}`,
        logbook: "Physics",
        author: physicist,
      };
      out.push({
        ...start,
        text: `Machine development started: ${topic}. Users informed.`,
        devices: [],
        level: "Info",
      });
      out.push({
        ...start,
        t: plan.end - 40 * MIN_MS,
        title: `MD done: ${topic}`,
        text: "MD finished; machine restored to the user settings and handed back to operations.",
        devices: [],
        level: "Info",
      });
    }
    return out;
  }

  /**
   * One routine action in the crew's words, every number read from the
   * physics just before and after it, as the archive holds them.
   */
  private narrate(a: RoutineAction, operator: string, rng: Rng, plan: ShiftPlan): Draft {
    const t = Math.round(a.t + rng.range(2, 6) * MIN_MS) + (a.kind === "rf-scan" ? a.end - a.t : 0);
    const before = a.t - 1000;
    const after = a.t + 1000;
    switch (a.kind) {
      case "orbit": {
        const physics = this.physics;
        const bpms = physics.facility.catalogue.filter((d) =>
          d.role === "bpm" && d.section === "RING" && (d.suffix === "X" || d.suffix === "Y")
        );
        // rms of the readings, and of their distance from the reference (golden) orbit.
        const rms = (plane: "X" | "Y", at: number, fromReference: boolean) => {
          let sum = 0;
          let n = 0;
          for (const d of bpms) {
            if (d.suffix !== plane) continue;
            let x = this.v(d.name, at);
            if (fromReference) x -= this.reference(d);
            sum += x * x;
            n++;
          }
          return Math.sqrt(sum / Math.max(1, n)).toFixed(3);
        };
        const moved = this.movedCorrectors(a, before, after);
        const [top] = moved;
        return {
          t,
          title: "Orbit correction",
          text:
            `Global orbit correction to the reference orbit (${moved.length} correctors, regularised response-matrix inversion) at ${
              hm(a.t)
            } UTC: H rms ${rms("X", before, false)} -> ${
              rms("X", after, false)
            } mm (from the reference ${rms("X", before, true)} -> ${
              rms("X", after, true)
            } mm), V rms ${rms("Y", before, false)} -> ${
              rms("Y", after, false)
            } mm (from the reference ${rms("Y", before, true)} -> ${rms("Y", after, true)} mm). ${
              top ? `Largest kick change on ${top.name} (${signed(top.change)} mrad).` : ""
            }`.trim(),
          author: operator,
          logbook: "Operations",
          devices: moved.slice(0, 8).map((m) => m.name),
          level: "Info",
        };
      }
      case "injection": {
        const steering = INJECTION_CORRECTORS.filter((c) => this.physics.facility.byName.has(c))
          .map((c) => `${c} (${signed(this.v(c, after) - this.v(c, before), 3)} mrad)`);
        return {
          t,
          title: "Injection tuning",
          text: `Injection efficiency ${this.v("DIAG:INJ:EFF", before).toFixed(0)}% -> ${
            this.v("DIAG:INJ:EFF", a.t + MIN_MS).toFixed(0)
          }% after steering onto the injection BPMs at ${hm(a.t)} UTC with ${steering.join(", ")}.`,
          author: operator,
          logbook: "Operations",
          devices: [...INJECTION_CORRECTORS, "DIAG:INJ:EFF"],
          level: "Info",
        };
      }
      case "rf-scan": {
        const init = this.v("RF:PHASE:SETPT", before);
        return {
          t,
          title: "Linac RF phase scan",
          text: `Scanned RF:PHASE:SETPT over +/-${SCAN_HALF_RANGE_DEG} deg in 1 deg steps from ${
            hm(a.t)
          } UTC: DIAG:ENERGY:MEAS peaks at ${
            this.physics.injection.onCrestDeg.toFixed(1)
          } deg (on crest). Operating point left at ${init} deg, off crest for energy-spread control.`,
          author: this.expert(rng, "Physics", plan),
          logbook: "Operations",
          devices: ["RF:PHASE:SETPT", "DIAG:ENERGY:MEAS"],
          level: "Info",
        };
      }
    }
  }

  /** What a ring BPM reads on the reference (golden) orbit: its offset and the golden orbit there. */
  private reference(def: import("./facility.ts").DeviceDef): number {
    const physics = this.physics;
    const at = physics.optics.lattice.of(def);
    const plane = def.plane === "V" ? 1 : 0;
    return (physics.optics.offset.get(def.name) ?? 0) + (at ? physics.orbit.golden(at, plane) : 0);
  }

  /** Ring correctors whose kick the correction changed, largest change first. */
  private movedCorrectors(a: RoutineAction, before: number, after: number) {
    const names = a.kind === "orbit" ? this.corrections.orbitCorrectors : [];
    return [...names]
      .map((name) => ({ name, change: this.v(name, after) - this.v(name, before) }))
      .filter((m) => Math.abs(m.change) > 1e-9)
      .sort((x, y) => Math.abs(y.change) - Math.abs(x.change));
  }

  private summary(plan: ShiftPlan, rng: Rng): Draft {
    const t = plan.end - Math.round(rng.range(10, 25) * MIN_MS);
    // Written before the shift ends: it counts what happened up to then.
    let down = 0;
    // A trip late in the previous shift can keep the beam off into this one.
    for (const i of [...this.book.plan(plan.k - 1).incidents, ...plan.incidents]) {
      if (i.kind !== "rf-trip") continue;
      down += Math.max(0, Math.min(this.refilledAfter(i.on), t) - Math.max(i.t0, plan.start));
    }
    let sum = 0;
    for (let n = 0; n < 48; n++) {
      sum += this.v("RING:DCCT:CURRENT", plan.start + (n + 0.5) * (t - plan.start) / 48);
    }
    const events = plan.incidents.filter((i) => i.start <= t).map((i) => phrase(this, i, t));
    return {
      t,
      title: `${plan.name} shift summary`,
      text: `Beam available ${
        (100 * (1 - down / (t - plan.start))).toFixed(1)
      }% of the shift so far (${Math.round(down / MIN_MS)} min down), average current ${
        (sum / 48).toFixed(1)
      } mA. ${events.length ? `Events: ${events.join("; ")}.` : "No incidents."}`,
      author: plan.crew.lead,
      logbook: "Operations",
      devices: plan.incidents.flatMap((i) => keyDevices(i)),
      level: "Info",
    };
  }
}

/** A change with its sign, as the crews write kicks. */
function signed(x: number, digits = 4): string {
  return `${x >= 0 ? "+" : ""}${x.toFixed(digits)}`;
}
