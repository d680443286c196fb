/**
 * A facility of any size in the simulator's naming convention, for the
 * device-index benchmarks: storage-ring cells with BPMs, correctors, magnets,
 * vacuum, losses and cooling; linac and transfer-line sections; RF stations;
 * timing. Deterministic: the same `n` gives the same names.
 *
 * @module
 */
import type { IndexRecord } from "../src/index/record.ts";
import { channelRecord } from "../src/adapters/simulator/index_source.ts";

interface Family {
  section: string;
  sectionDesc: string;
  family: string;
  desc: string;
  idLetters: string[];
  perCell: number;
  signals: [suffix: string, desc: string, units: string, writable: boolean][];
}

const PS: Family["signals"] = [
  ["SETPT", "current setpoint", "A", true],
  ["RDBK", "current readback", "A", false],
  ["STATUS", "power supply state", "", false],
  ["PS:TEMP", "power supply temperature", "degC", false],
];

const SECTIONS: Record<string, string> = {
  SR: "Storage ring",
  CW: "Cooling water",
  BR: "Booster ring",
  TIMING: "Timing",
};

function family(
  section: string,
  name: string,
  desc: string,
  perCell: number,
  signals: Family["signals"],
  idLetters = [""],
): Family {
  const sectionDesc = SECTIONS[section] ?? section;
  return { section, sectionDesc, family: name, desc, idLetters, perCell, signals };
}

const FAMILIES: Family[] = [
  family("SR", "BPM", "BPM", 8, [
    ["X", "horizontal position", "mm", false],
    ["Y", "vertical position", "mm", false],
    ["SUM", "sum signal", "a.u.", false],
    ["TBT:X", "horizontal turn-by-turn position", "mm", false],
    ["TBT:Y", "vertical turn-by-turn position", "mm", false],
  ]),
  family("SR", "COR", "{plane} corrector", 6, PS, ["H", "V"]),
  family("SR", "QUAD", "quadrupole", 10, PS),
  family("SR", "SEXT", "sextupole", 7, PS),
  family("SR", "VAC:IP", "ion pump", 8, [
    ["PRES", "pressure", "mbar", false],
    ["CURRENT", "pump current", "uA", false],
    ["VOLT", "high voltage", "kV", false],
    ["STATUS", "controller state", "", false],
  ]),
  family("SR", "VAC:IG", "ion gauge", 4, [["PRES", "pressure", "mbar", false]]),
  family("SR", "BLM", "beam-loss monitor", 8, [["LOSS", "loss rate", "cts/s", false]]),
  family("CW", "MAG", "magnet cooling circuit", 12, [
    ["FLOW", "flow", "l/min", false],
    ["TEMP:RET", "return temperature", "degC", false],
  ]),
  family("BR", "BPM", "BPM", 2, [
    ["X", "horizontal position", "mm", false],
    ["Y", "vertical position", "mm", false],
  ]),
  family("TIMING", "EVR", "event receiver", 1, [
    ["OUT0:DELAY", "output 0 delay", "ns", true],
    ["OUT1:DELAY", "output 1 delay", "ns", true],
    ["STATUS", "link state", "", false],
  ]),
];

/** Devices one cell holds over all families. */
const PER_CELL = FAMILIES.reduce(
  (s, f) => s + f.perCell * f.idLetters.length * f.signals.length,
  0,
);

/** About `n` records (exactly `n`, cut at the end), in no particular order. */
export function generateRecords(n: number): IndexRecord[] {
  const out: IndexRecord[] = [];
  const cells = Math.ceil(n / PER_CELL);
  const width = String(cells * 12).length;
  for (let cell = 1; cell <= cells && out.length < n; cell++) {
    for (const f of FAMILIES) {
      for (const letter of f.idLetters) {
        for (let k = 0; k < f.perCell; k++) {
          const index = (cell - 1) * f.perCell + k + 1;
          const id = letter + String(index).padStart(width, "0");
          const plane = letter === "H" ? "horizontal" : letter === "V" ? "vertical" : "";
          const what = f.desc.replace("{plane}", plane);
          for (const [suffix, sdesc, units, writable] of f.signals) {
            const name = `${f.section}:${f.family}:${id}:${suffix}`;
            const description = `${f.sectionDesc} ${what} ${id} (cell ${
              String(cell).padStart(3, "0")
            }) ${sdesc}`;
            out.push(channelRecord(name, description, units, writable));
            if (out.length >= n) return out;
          }
        }
      }
    }
  }
  return out;
}

/** Wildcard patterns of the kinds operators and the model use, for the pattern benchmark. */
export const BENCH_PATTERNS = [
  "SR:BPM:*:X",
  "SR:COR:H*:SETPT",
  "*BPM*",
  "SR:VAC:IP:00012?:*",
  "*:TBT:Y",
  "CW:MAG:*",
  "SR:QUAD:0001*",
  "*:EVR:*:STATUS",
];

/** Informal queries for the latency benchmark. */
export const BENCH_QUERIES = [
  "horizontal steerers setpoint",
  "ion pump pressure cell 40",
  "bpm 117 turn by turn",
  "quadrupole readbacks",
  "beam loss monitors cell 12",
  "vertical correctors power supply temperature",
  "magnet cooling return temperature",
  "event receiver delays",
  "booster bpm vertical",
  "sextupol current setpoint",
];
