/**
 * The recorded session the demo replays: a question, reads, a scan plan the
 * operator approves, a chart of the scan, and a sandbox analysis of its data.
 *
 * @module
 */
import type { ReplayStep } from "./model_server.ts";

/** What the replay types at the prompt. */
export const QUESTION = "Scan the RF phase from -4 to -8 deg and tell me where the energy peaks";

/** The scan plan the replayed model proposes (the REPL tests propose it too). */
export const SCAN_PLAN = {
  description: "RF phase scan around the operating point",
  actions: [{
    type: "scan",
    writeDevice: "RF:PHASE:SETPT",
    start: -4,
    stop: -8,
    steps: 5,
    readDevices: ["DIAG:ENERGY:MEAS"],
    dwellSeconds: 0.3,
  }],
  rollback: [
    { type: "write", device: "RF:PHASE:SETPT", value: -6, reason: "back toward the start" },
    { type: "wait", seconds: 0.1 },
    { type: "write", device: "RF:PHASE:SETPT", value: -4, reason: "operating point" },
  ],
};

const ANALYSIS = `import csv
rows = list(csv.DictReader(open(PATH)))
cols = list(rows[0].keys())
phase = next(c for c in cols if "PHASE" in c)
energy = next(c for c in cols if "ENERGY" in c)
best = max(rows, key=lambda r: float(r[energy]))
for r in rows:
    print(f"{float(r[phase]):6.2f} deg  {float(r[energy]):10.4f}")
print(f"peak: {float(best[energy]):.4f} at {float(best[phase]):.2f} deg")
`;

/** What the plan's tool result says of its scan: the CSV as Python sees it, and its file name. */
const scan = { python: "/data1/missing.csv", file: "" };

function rememberScan(result: unknown): void {
  const r = result as { csv_files?: unknown; csv_files_in_python?: unknown; plan_hash?: unknown };
  const inPython = Array.isArray(r?.csv_files_in_python) ? r.csv_files_in_python[0] : undefined;
  const file = Array.isArray(r?.csv_files) ? r.csv_files[0] : r?.plan_hash;
  if (typeof inPython === "string") scan.python = inPython;
  if (typeof file === "string") scan.file = file;
}

/** The model's answers, in order. */
export const STEPS: ReplayStep[] = [
  {
    text: "Let me read the RF phase and the beam energy first.",
    toolCalls: [{
      name: "get_parameter",
      arguments: { devices: ["RF:PHASE:SETPT", "DIAG:ENERGY:MEAS"] },
    }],
  },
  {
    text: "I propose a 5-point scan of the phase, recording the energy at each step.",
    toolCalls: [{ name: "propose_plan", arguments: SCAN_PLAN }],
  },
  {
    text: "The scan is done. First a look at the curve.",
    toolCalls: (result) => {
      rememberScan(result);
      return [{
        name: "plot",
        arguments: { source: "scan", scan: scan.file, columns: ["DIAG:ENERGY:MEAS"] },
      }];
    },
  },
  {
    text: "Now the analysis, in the sandbox.",
    toolCalls: () => [{
      name: "execute_code",
      arguments: {
        description: "Find the phase of peak energy in the scan",
        code: `PATH = ${JSON.stringify(scan.python)}\n${ANALYSIS}`,
      },
    }],
  },
  {
    text: (result) => {
      const out = String((result as { stdout?: unknown })?.stdout ?? "").trim();
      const peak = /peak: (\S+) at (\S+) deg/.exec(out);
      return `## Result\n\nEnergy against phase, from the scan:\n\n\`\`\`\n${out}\n\`\`\`\n\n` +
        (peak ? `The energy peaks at ${peak[2]} deg (${peak[1]} MeV); ` : "No peak was found; ") +
        "the phase is back at its operating point (the plan's rollback).\n\n" +
        "Replay finished — no model was called.";
    },
  },
];
