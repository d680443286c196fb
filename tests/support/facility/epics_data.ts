/**
 * The fake EPICS facility's contents, shared by the fake gateway and the
 * fake archiver, ChannelFinder, Olog and alarm logger so they tell one story.
 *
 * @module
 */
import type { FakePv } from "./fake_pvws.ts";

const pad = (n: number) => String(n).padStart(2, "0");

/** 24 BPM positions, correctors, an enum, a string, a waveform, a PV that never connects. */
export function epicsPvs(): Record<string, FakePv> {
  const pvs: Record<string, FakePv> = {};
  for (let i = 1; i <= 24; i++) {
    pvs[`SR:BPM:${pad(i)}:X`] = {
      value: Number((0.01 * Math.sin(i)).toFixed(6)),
      units: "mm",
      precision: 3,
      description: `BPM ${i} horizontal position`,
      min: -10,
      max: 10,
      warn_low: -1,
      warn_high: 1,
      alarm_low: -2,
      alarm_high: 2,
      readonly: true,
    };
  }
  pvs["SR:COR:H01:SETPT"] = {
    value: 0.5,
    units: "A",
    precision: 3,
    description: "Horizontal corrector 1 set point",
    min: -10,
    max: 10,
  };
  pvs["SR:COR:H02:SETPT"] = {
    value: 0,
    units: "A",
    description: "Corrector 2 (stuck)",
    stuck: true,
  };
  pvs["SR:MODE"] = { value: 1, vtype: "VEnum", labels: ["Off", "On", "Standby"], units: "" };
  pvs["SR:OPERATOR:MSG"] = { value: "Beam for users", vtype: "VString" };
  pvs["SR:ORBIT:WF"] = { value: [0.1, -0.2, 0.3, 0.25], units: "mm", readonly: true };
  pvs["SR:DCCT:CURRENT"] = { value: 301.5, units: "mA", precision: 2, readonly: true };
  pvs["SR:VAC:GAUGE:01"] = {
    value: 3.2e-8,
    units: "mbar",
    alarm_high: 1e-8,
    warn_high: 5e-9,
    severity: "MAJOR",
    readonly: true,
  };
  pvs["SR:GHOST:PV"] = { value: 0, neverConnects: true };
  pvs["SR:COR:H03:SETPT"] = {
    value: 0,
    units: "A",
    description: "Corrector 3 (IOC refuses)",
    rejectsWrites: true,
  };
  return pvs;
}

/** ChannelFinder properties: record types tell writability. */
export function recordTypeOf(pv: FakePv): string {
  if (pv.vtype === "VEnum") return "mbbo";
  if (pv.vtype === "VString") return "stringout";
  if (Array.isArray(pv.value)) return "waveform";
  return pv.readonly ? "ai" : "ao";
}

/** PVs the archiver does not hold. */
export const NOT_ARCHIVED = new Set(["SR:GHOST:PV"]);

/** The archived value of a PV at a time (a slow sine), or a string/array for those PVs. */
export function archivedValue(name: string, pv: FakePv, tS: number): number | string | number[] {
  if (Array.isArray(pv.value)) return pv.value.map((v) => v + 0.01 * Math.sin(tS / 600));
  if (typeof pv.value === "string") return pv.value;
  if (pv.vtype === "VEnum") return Math.floor(tS / 3600) % 3;
  return Number(pv.value) + 0.1 * Math.sin(tS / 600 + name.length);
}

/** Olog entries, every 2 h over the three days before `nowMs`, newest last. */
export function ologEntries(nowMs: number): Record<string, unknown>[] {
  const levels = ["Info", "Problem", "Info", "Urgent"];
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < 36; i++) {
    const t = nowMs - (36 - i) * 2 * 3_600_000 + 600_000;
    const bpm = `SR:BPM:${pad((i % 24) + 1)}:X`;
    out.push({
      id: 1000 + i,
      owner: i % 2 ? "jdoe" : "asmith",
      title: i % 4 === 3 ? `Beam dump, ${bpm} interlock` : `Shift note ${i}`,
      description: i % 4 === 3
        ? `Beam dump due to orbit interlock at ${bpm}. Recovered after 20 min.`
        : `Routine check. Orbit at ${bpm} nominal.`,
      source: "",
      level: levels[i % 4],
      state: "Active",
      createdDate: t,
      logbooks: [{ name: "Operations", owner: "olog-logs" }],
      tags: [],
      properties: [],
      attachments: [],
      events: [],
    });
  }
  return out;
}

/** Alarm-logger messages (REST shape), every 90 min over three days; some use ES's time format. */
export function alarmMessages(nowMs: number): Record<string, unknown>[] {
  const severities = ["MAJOR", "MINOR", "OK", "INVALID", "MAJOR_ACK"];
  const messages = ["HIHI_ALARM", "HIGH_ALARM", "NO_ALARM", "UDF_ALARM", "HIHI_ALARM"];
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < 48; i++) {
    const t = nowMs - (48 - i) * 90 * 60_000 + 300_000;
    const pv = i % 3 === 0 ? "SR:VAC:GAUGE:01" : `SR:BPM:${pad((i % 24) + 1)}:X`;
    const iso = new Date(t).toISOString();
    out.push({
      severity: severities[i % 5],
      message: messages[i % 5],
      value: String((i % 7) * 1.5),
      time: iso,
      current_severity: "MINOR",
      current_message: "LOW_ALARM",
      // Elasticsearch's own form for some: the client must accept both.
      message_time: i % 4 === 0 ? iso.replace("T", " ").replace("Z", "") : iso,
      config: `state:/Accelerator/SR/${pv}`,
      pv,
      enabled: true,
    });
  }
  return out;
}

/**
 * `n` more PVs in a storage ring's style, for name-service tests at scale:
 * `SR:C07:BPM:3:X` ("Cell 7 BPM 3 horizontal position"), correctors' setpoints
 * (output records, so settable), ion-pump pressures and RF powers, cycling
 * over 30 cells.
 */
export function generatedPvs(n: number): Record<string, FakePv> {
  const kinds: [string, string, string, boolean][] = [
    ["BPM:{i}:X", "BPM {i} horizontal position", "mm", true],
    ["BPM:{i}:Y", "BPM {i} vertical position", "mm", true],
    ["HCOR:{i}:SETPT", "horizontal corrector {i} current setpoint", "A", false],
    ["VCOR:{i}:SETPT", "vertical corrector {i} current setpoint", "A", false],
    ["IP:{i}:PRES", "ion pump {i} pressure", "mbar", true],
    ["RF:{i}:FWD:PWR", "RF station {i} forward power", "kW", true],
  ];
  const pvs: Record<string, FakePv> = {};
  for (let k = 0; k < n; k++) {
    const [tail, desc, units, readonly] = kinds[k % kinds.length] as [
      string,
      string,
      string,
      boolean,
    ];
    const cell = Math.floor(k / kinds.length) % 30 + 1;
    const i = String(Math.floor(k / kinds.length / 30) + 1);
    pvs[`SR:C${pad(cell)}:${tail.replace("{i}", i)}`] = {
      value: 0,
      units,
      description: `Cell ${cell} ${desc.replace("{i}", i)}`,
      readonly,
    };
  }
  return pvs;
}
