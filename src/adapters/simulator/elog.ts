/**
 * The electronic logbook: what the crews and experts wrote about each shift.
 * Entries narrate the shift's incidents with numbers read from the same
 * physics that feeds the archive, so the story and the trends agree.
 *
 * @module
 */

import type { LogEntry, Severity } from "../adapter.ts";
import { HOUR_MS, type IncidentBook, type ShiftPlan } from "./incidents.ts";
import {
  type Draft,
  incidentDrafts,
  keyDevices,
  type Level,
  MIN_MS,
  type Narrator,
  pad,
  phrase,
} from "./narratives.ts";
import { hashNumbers, Rng } from "./noise.ts";
import type { Physics, Setpoints } from "./physics.ts";

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
    private readonly sp: Setpoints,
    readonly book: IncidentBook,
    private readonly people: Readonly<Record<string, readonly string[]>>,
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
    const value = def ? this.physics.value(def, t, this.sp, false) : 0;
    return typeof value === "number" ? value : 0;
  }

  expert(rng: Rng, group: string, plan: ShiftPlan): string {
    return rng.pick(this.people[group] ?? [plan.crew.lead]);
  }

  private shiftStart(plan: ShiftPlan, rng: Rng): Draft {
    const t = plan.start + Math.round(rng.range(3, 12) * MIN_MS);
    const current = this.v("RING:DCCT:CURRENT", t);
    const previous = this.book.plan(plan.k - 1).incidents;
    const handover = previous.length
      ? previous.map((i) => phrase(i, t)).join("; ")
      : "quiet shift, no open items";
    const beam = current < 1
      ? "no stored beam"
      : `${current.toFixed(1)} mA in top-up, lifetime ${this.v("RING:LIFETIME", t).toFixed(1)} h`;
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
    const when = () => Math.round(plan.start + rng.range(1, 7) * HOUR_MS);
    const operator = rng.pick([plan.crew.lead, plan.crew.operator]);
    if (rng.chance(0.45)) {
      const cor = `RING:COR:${rng.pick(["H", "V"])}${pad(rng.int(1, 40))}:SETPT`;
      out.push({
        t: when(),
        title: "Orbit correction",
        text: `Global orbit correction (SVD, 36 singular values): H rms ${
          rng.range(0.06, 0.16).toFixed(3)
        } -> ${rng.range(0.02, 0.04).toFixed(3)} mm, V rms ${rng.range(0.04, 0.1).toFixed(3)} -> ${
          rng.range(0.015, 0.03).toFixed(3)
        } mm. Largest kick change on ${cor} (${rng.range(-0.05, 0.05).toFixed(4)} mrad).`,
        author: operator,
        logbook: "Operations",
        devices: [cor],
        level: "Info",
      });
    }
    if (rng.chance(0.25)) {
      const h = `LINAC:COR:H${pad(rng.int(1, 10))}:SETPT`;
      const v = `BTS:COR:V${pad(rng.int(1, 6))}:SETPT`;
      out.push({
        t: when(),
        title: "Injection tuning",
        text: `Injection efficiency ${rng.range(78, 88).toFixed(0)}% -> ${
          rng.range(92, 96).toFixed(0)
        }% after steering with ${h} and ${v}.`,
        author: operator,
        logbook: "Operations",
        devices: [h, v, "DIAG:INJ:EFF"],
        level: "Info",
      });
    }
    if (rng.chance(0.12)) {
      const init = this.physics.initial.get("RF:PHASE:SETPT");
      out.push({
        t: when(),
        title: "Linac RF phase scan",
        text: `Scanned RF:PHASE:SETPT over +/-10 deg: DIAG:ENERGY:MEAS peaks at ${
          this.physics.onCrestDeg.toFixed(1)
        } deg (on crest). Operating point left at ${init} deg, off crest for energy-spread control.`,
        author: this.expert(rng, "Physics", plan),
        logbook: "Operations",
        devices: ["RF:PHASE:SETPT", "DIAG:ENERGY:MEAS"],
        level: "Info",
      });
    }
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

  private summary(plan: ShiftPlan, rng: Rng): Draft {
    const t = plan.end - Math.round(rng.range(10, 25) * MIN_MS);
    let down = 0;
    // A trip late in the previous shift can keep the beam off into this one.
    for (const i of [...this.book.plan(plan.k - 1).incidents, ...plan.incidents]) {
      if (i.kind !== "rf-trip") continue;
      down += Math.max(0, Math.min(i.refilled, plan.end) - Math.max(i.t0, plan.start));
    }
    let sum = 0;
    for (let n = 0; n < 48; n++) {
      sum += this.v("RING:DCCT:CURRENT", plan.start + (n + 0.5) * (plan.end - plan.start) / 48);
    }
    const events = plan.incidents.map((i) => phrase(i, t));
    return {
      t,
      title: `${plan.name} shift summary`,
      text: `Beam available ${
        (100 * (1 - down / (plan.end - plan.start))).toFixed(1)
      }% of the shift (${Math.round(down / MIN_MS)} min down), average current ${
        (sum / 48).toFixed(1)
      } mA. ${events.length ? `Events: ${events.join("; ")}.` : "No incidents."}`,
      author: plan.crew.lead,
      logbook: "Operations",
      devices: plan.incidents.flatMap((i) => keyDevices(i)),
      level: "Info",
    };
  }
}
