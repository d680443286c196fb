/**
 * A second facility, in another facility's conventions, served through the
 * fake ChannelFinder: hierarchical names `SYS[:CELL]-SUB{DEV:ELEM}SIGNAL-SUFFIX`
 * (`SR:C03-MG{PS:QH1}I:Sp1-SP`, `BTS-BI{BPM:2}Pos:X-I`), suffixes `-SP` (a
 * setpoint), `-I` (a reading), `-Sts` (a state), `-Wf` (a waveform), and
 * descriptions as such a facility keeps them: short (an EPICS DESC holds 40
 * characters), abbreviated, in a `description` property beside `system`,
 * `cell`, `elemType`, `elemName`, `handle`, `recordType`, `EGU`, `iocName`
 * and `hostName`. Nothing in it follows the simulator's naming: the index
 * must read it from what the service says.
 *
 * Five systems: the linac (LN), the linac-to-booster line (LTB), the booster
 * (BR, four arcs A1–A4), the booster-to-storage-ring line (BTS) and a
 * 30-cell storage ring (SR) with its RF, insertion devices and diagnostics.
 *
 * @module
 */
import { type CfChannel, type ChannelFinderOptions, channelsRoute } from "./fake_epics.ts";
import { FakeHttp } from "./fake_http.ts";

const pad = (n: number) => String(n).padStart(2, "0");

interface Signal {
  /** What follows the `}`: `I:Sp1-SP`. */
  tail: string;
  /** What the description says of it, after the element. */
  says: string;
  handle: "setpoint" | "readback" | "status" | "waveform";
  recordType: string;
  units: string;
}

const MAGNET_PS: Signal[] = [
  { tail: "I:Sp1-SP", says: "Current SP", handle: "setpoint", recordType: "ao", units: "A" },
  { tail: "I:Ps1DCCT1-I", says: "Current RB", handle: "readback", recordType: "ai", units: "A" },
  { tail: "Sts:On-Sts", says: "PS On Status", handle: "status", recordType: "bi", units: "" },
  { tail: "Flt:Sum-Sts", says: "PS Fault Summary", handle: "status", recordType: "bi", units: "" },
];

/** Where a device is: the ring's cells, the booster's arcs. */
function place(system: string, cell: string | undefined): Record<string, string> {
  if (cell === undefined) return {};
  return system === "BR" ? { arc: cell } : { cell };
}

/** Every channel of the second facility, sorted by name. */
export function secondFacilityChannels(): CfChannel[] {
  const out: CfChannel[] = [];
  const add = (
    name: string,
    description: string,
    props: Record<string, string>,
    tags: string[] = ["archived"],
  ) => {
    const ioc = name.replace(/\{.*$/, "").replace(/[^A-Za-z0-9]+/g, "-").toLowerCase();
    const properties = Object.entries({
      description,
      ...props,
      iocName: `ioc-${ioc}`,
      hostName: `xf-${ioc.slice(0, 6)}`,
      pvStatus: "Active",
    }).map(([k, v]) => ({ name: k, value: v, owner: "cf-update", channels: [] as never[] }));
    out.push({
      name,
      owner: "cf-update",
      properties,
      tags: tags.map((t) => ({ name: t, owner: "cf-tags", channels: [] as never[] })),
    });
  };
  const magnet = (
    system: string,
    cell: string | undefined,
    elem: string,
    elemType: string,
    what: string,
  ) => {
    const where = cell ? `${system}:${cell}` : system;
    for (const s of MAGNET_PS) {
      add(`${where}-MG{PS:${elem}}${s.tail}`, `${cell ?? system} ${elem} ${what} ${s.says}`, {
        system,
        ...place(system, cell),
        elemType,
        elemName: elem,
        handle: s.handle,
        recordType: s.recordType,
        ...(s.units ? { EGU: s.units } : {}),
      });
    }
  };
  const bpm = (system: string, cell: string | undefined, k: number, tbt: boolean) => {
    const where = cell ? `${system}:${cell}` : system;
    const label = `${cell ?? system} BPM ${k}`;
    const props = {
      system,
      ...place(system, cell),
      elemType: "BPM",
      elemName: `BPM${k}`,
    };
    const sig: [string, string, string, string, string][] = [
      ["Pos:X-I", "X Position", "readback", "ai", "mm"],
      ["Pos:Y-I", "Y Position", "readback", "ai", "mm"],
      ["Ampl:Sum-I", "Sum Amplitude", "readback", "ai", ""],
    ];
    if (tbt) {
      sig.push(["TBT:X-Wf", "TbT X Waveform", "waveform", "waveform", "mm"]);
      sig.push(["TBT:Y-Wf", "TbT Y Waveform", "waveform", "waveform", "mm"]);
    }
    for (const [tail, says, handle, recordType, units] of sig) {
      add(`${where}-BI{BPM:${k}}${tail}`, `${label} ${says}`, {
        ...props,
        handle,
        recordType,
        ...(units ? { EGU: units } : {}),
      });
    }
  };

  // ---- Linac ----
  for (let k = 1; k <= 6; k++) magnet("LN", undefined, `Sol${k}`, "SOL", "Solenoid");
  for (let k = 1; k <= 5; k++) magnet("LN", undefined, `Q${k}`, "QUAD", "Quad");
  for (let k = 1; k <= 4; k++) {
    magnet("LN", undefined, `HC${k}`, "HCOR", "Horiz Corr");
    magnet("LN", undefined, `VC${k}`, "VCOR", "Vert Corr");
  }
  for (let k = 1; k <= 3; k++) {
    const props = { system: "LN", elemType: "KLY", elemName: `Kly${k}` };
    add(`LN-RF{Kly:${k}}Pwr:Fwd-I`, `Linac Klystron ${k} Fwd Power`, {
      ...props,
      handle: "readback",
      recordType: "ai",
      EGU: "MW",
    });
    add(`LN-RF{Kly:${k}}Pwr:Ref-I`, `Linac Klystron ${k} Refl Power`, {
      ...props,
      handle: "readback",
      recordType: "ai",
      EGU: "MW",
    });
    add(`LN-RF{Kly:${k}}HV-I`, `Linac Klystron ${k} Modulator HV`, {
      ...props,
      handle: "readback",
      recordType: "ai",
      EGU: "kV",
    });
    add(`LN-RF{Kly:${k}}Phs-SP`, `Linac Klystron ${k} Phase SP`, {
      ...props,
      handle: "setpoint",
      recordType: "ao",
      EGU: "deg",
    });
    add(`LN-RF{Kly:${k}}Phs-I`, `Linac Klystron ${k} Phase RB`, {
      ...props,
      handle: "readback",
      recordType: "ai",
      EGU: "deg",
    });
    add(`LN-RF{Kly:${k}}Sts-Sts`, `Linac Klystron ${k} Ready Status`, {
      ...props,
      handle: "status",
      recordType: "bi",
    });
  }
  for (let k = 1; k <= 4; k++) bpm("LN", undefined, k, false);
  for (let k = 1; k <= 2; k++) {
    add(`LN-BI{ICT:${k}}Q-I`, `Linac ICT ${k} Bunch Charge`, {
      system: "LN",
      elemType: "ICT",
      elemName: `ICT${k}`,
      handle: "readback",
      recordType: "ai",
      EGU: "nC",
    });
  }
  add("LN-BI{Gun}HV-I", "Electron Gun HV Readback", {
    system: "LN",
    elemType: "GUN",
    handle: "readback",
    recordType: "ai",
    EGU: "kV",
  });

  // ---- Transfer lines ----
  for (const [line, quads, cors, bpms] of [["LTB", 8, 3, 4], ["BTS", 6, 4, 6]] as const) {
    for (let k = 1; k <= quads; k++) {
      // BTS alternates focusing and defocusing quadrupoles; the LTB numbers them plainly.
      const elem = line === "BTS" ? `${k % 2 ? "QF" : "QD"}${Math.ceil(k / 2)}` : `Q${k}`;
      magnet(line, undefined, elem, "QUAD", "Quad");
    }
    for (let k = 1; k <= cors; k++) {
      magnet(line, undefined, `HC${k}`, "HCOR", "Horiz Corr");
      magnet(line, undefined, `VC${k}`, "VCOR", "Vert Corr");
    }
    for (let k = 1; k <= bpms; k++) bpm(line, undefined, k, false);
    for (let k = 1; k <= 3; k++) {
      add(`${line}-BI{FS:${k}}Pos-Sts`, `${line} Flag ${k} In/Out Status`, {
        system: line,
        elemType: "FLAG",
        elemName: `FS${k}`,
        handle: "status",
        recordType: "bi",
      });
    }
  }
  magnet("LTB", undefined, "BD1", "DIPOLE", "Dipole");
  magnet("BTS", undefined, "BD1", "DIPOLE", "Dipole");
  magnet("BTS", undefined, "Sept", "SEPTUM", "Injection Septum");
  for (let k = 1; k <= 4; k++) magnet("SR", undefined, `InjKick${k}`, "KICKER", "Injection Kicker");

  // ---- Booster ----
  for (const fam of ["QF", "QD", "QG"]) magnet("BR", undefined, fam, "QUAD", "Quad Family");
  for (const fam of ["SF", "SD"]) magnet("BR", undefined, fam, "SEXT", "Sext Family");
  magnet("BR", undefined, "BD", "DIPOLE", "Main Dipole");
  for (let a = 1; a <= 4; a++) {
    const arc = `A${a}`;
    for (let k = 1; k <= 3; k++) {
      magnet("BR", arc, `CH${k}`, "HCOR", "Horiz Corr");
      magnet("BR", arc, `CV${k}`, "VCOR", "Vert Corr");
    }
    for (let k = 1; k <= 4; k++) bpm("BR", arc, k, false);
  }
  for (
    const [tail, says, handle, recordType, units] of [
      ["Volt-SP", "Voltage SP", "setpoint", "ao", "kV"],
      ["Volt-I", "Voltage RB", "readback", "ai", "kV"],
      ["Pwr:Fwd-I", "Fwd Power", "readback", "ai", "kW"],
    ] as const
  ) {
    add(`BR-RF{Cav:1}${tail}`, `Booster Cavity ${says}`, {
      system: "BR",
      elemType: "CAV",
      elemName: "Cav1",
      handle,
      recordType,
      EGU: units,
    });
  }

  // ---- Storage ring, cell by cell ----
  const quads = ["QH1", "QH2", "QH3", "QL1", "QL2", "QL3", "QM1", "QM2"];
  const sexts = ["SH1", "SH3", "SH4", "SL1", "SL2", "SL3", "SM1", "SM2"];
  const cors = ["CH1", "CH2", "CL1", "CL2", "CM1"];
  const ids: Record<number, [string, string]> = {
    3: ["IVU", "In-Vac Undulator"],
    5: ["IVU", "In-Vac Undulator"],
    8: ["DW", "Damping Wiggler"],
    10: ["IVU", "In-Vac Undulator"],
    11: ["EPU", "Ellip Pol Undulator"],
    17: ["IVU", "In-Vac Undulator"],
    18: ["DW", "Damping Wiggler"],
    23: ["EPU", "Ellip Pol Undulator"],
    28: ["DW", "Damping Wiggler"],
  };
  for (let c = 1; c <= 30; c++) {
    const cell = `C${pad(c)}`;
    for (const q of quads) magnet("SR", cell, q, "QUAD", "Quad");
    for (const s of sexts) magnet("SR", cell, s, "SEXT", "Sext");
    for (const k of cors) {
      // One corrector magnet, two planes: each its own supply.
      magnet("SR", cell, `${k}X`, "HCOR", "Horiz Corr");
      magnet("SR", cell, `${k}Y`, "VCOR", "Vert Corr");
    }
    for (let k = 1; k <= 6; k++) bpm("SR", cell, k, true);
    for (let k = 1; k <= 4; k++) {
      const props = { system: "SR", cell, elemType: "IP", elemName: `IP${k}` };
      add(`SR:${cell}-VA{IP:${k}}P-I`, `${cell} Ion Pump ${k} Pressure`, {
        ...props,
        handle: "readback",
        recordType: "ai",
        EGU: "Torr",
      });
      add(`SR:${cell}-VA{IP:${k}}I-I`, `${cell} Ion Pump ${k} Current`, {
        ...props,
        handle: "readback",
        recordType: "ai",
        EGU: "uA",
      });
    }
    for (let k = 1; k <= 2; k++) {
      add(`SR:${cell}-VA{CCG:${k}}P-I`, `${cell} Cold Cathode Gauge ${k} Pressure`, {
        system: "SR",
        cell,
        elemType: "CCG",
        elemName: `CCG${k}`,
        handle: "readback",
        recordType: "ai",
        EGU: "Torr",
      });
      add(`SR:${cell}-MG{TC:${k}}T-I`, `${cell} Magnet Thermocouple ${k}`, {
        system: "SR",
        cell,
        elemType: "TC",
        elemName: `TC${k}`,
        handle: "readback",
        recordType: "ai",
        EGU: "C",
      });
    }
    add(`SR:${cell}-VA{GV:1}Pos-Sts`, `${cell} Gate Valve Open/Closed`, {
      system: "SR",
      cell,
      elemType: "GV",
      elemName: "GV1",
      handle: "status",
      recordType: "bi",
    });
    const id = ids[c];
    if (id) {
      const [kind, says] = id;
      const props = { system: "SR", cell, elemType: kind, elemName: `${kind}1` };
      add(`SR:${cell}-ID:G1{${kind}:1}Gap-SP`, `${cell} ${says} Gap SP`, {
        ...props,
        handle: "setpoint",
        recordType: "ao",
        EGU: "mm",
      });
      add(`SR:${cell}-ID:G1{${kind}:1}Gap-I`, `${cell} ${says} Gap RB`, {
        ...props,
        handle: "readback",
        recordType: "ai",
        EGU: "mm",
      });
      add(`SR:${cell}-ID:G1{${kind}:1}Mtr:Moving-Sts`, `${cell} ${says} Gap Motion Status`, {
        ...props,
        handle: "status",
        recordType: "bi",
      });
    }
  }
  for (let k = 1; k <= 4; k++) {
    const props = { system: "SR", elemType: "CAV", elemName: `Cav${k}` };
    for (
      const [tail, says, handle, recordType, units] of [
        ["Volt-SP", "Voltage SP", "setpoint", "ao", "kV"],
        ["Volt-I", "Gap Voltage RB", "readback", "ai", "kV"],
        ["Phs-SP", "Phase SP", "setpoint", "ao", "deg"],
        ["Phs-I", "Phase RB", "readback", "ai", "deg"],
        ["Pwr:Fwd-I", "Fwd Power", "readback", "ai", "kW"],
        ["Pwr:Ref-I", "Refl Power", "readback", "ai", "kW"],
        ["T:Body-I", "Body Temp", "readback", "ai", "C"],
        ["Tuner:Pos-I", "Tuner Position", "readback", "ai", "mm"],
        ["Intlk-Sts", "Interlock Status", "status", "bi", ""],
      ]
    ) {
      add(`SR-RF{Cav:${k}}${tail}`, `SR RF Cavity ${k} ${says}`, {
        ...props,
        handle: handle as string,
        recordType: recordType as string,
        ...(units ? { EGU: units as string } : {}),
      });
    }
  }
  add("SR-BI{DCCT:1}I:Beam-I", "SR Stored Beam Current", {
    system: "SR",
    elemType: "DCCT",
    handle: "readback",
    recordType: "ai",
    EGU: "mA",
  });
  add("SR-BI{DCCT:1}Lifetime-I", "SR Beam Lifetime", {
    system: "SR",
    elemType: "DCCT",
    handle: "readback",
    recordType: "ai",
    EGU: "h",
  });
  for (const p of ["X", "Y"]) {
    add(`SR-BI{Tune}${p}-I`, `SR Fractional Tune ${p === "X" ? "Horiz" : "Vert"}`, {
      system: "SR",
      elemType: "TUNE",
      handle: "readback",
      recordType: "ai",
    });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** The second facility's ChannelFinder on loopback, paging as a real server does. */
export function serveSecondFacility(
  opts: Partial<ChannelFinderOptions> = {},
  channels: CfChannel[] = secondFacilityChannels(),
): FakeHttp {
  const options: ChannelFinderOptions = {
    maxResultWindow: opts.maxResultWindow ?? 10_000,
    searchAfter: opts.searchAfter ?? true,
    scroll: opts.scroll ?? true,
  };
  return new FakeHttp((url) => channelsRoute(url, channels, options));
}
