/**
 * The recorded session the demo replays: a question, reads, a scan plan the
 * operator approves, a chart of the scan, and a sandbox analysis of its data.
 *
 * @module
 */
import type { ReplayStep } from "./model_server.ts";

/** What the replay types at the prompt. */
export const QUESTION = "Scan the RF phase from -4 to -12 deg and tell me where the energy peaks";

/** The scan plan the replayed model proposes (the REPL tests propose it too). */
export const SCAN_PLAN = {
  description: "RF phase scan around the operating point",
  actions: [{
    type: "scan",
    writeDevice: "RF:PHASE:SETPT",
    start: -4,
    stop: -12,
    steps: 9,
    readDevices: ["DIAG:ENERGY:MEAS"],
    dwellSeconds: 0.3,
  }],
  // Back to the operating point in steps no larger than the limits' max_step (2 deg).
  rollback: [
    { type: "write", device: "RF:PHASE:SETPT", value: -10, reason: "back toward the start" },
    { type: "wait", seconds: 0.1 },
    { type: "write", device: "RF:PHASE:SETPT", value: -8, reason: "back toward the start" },
    { type: "wait", seconds: 0.1 },
    { type: "write", device: "RF:PHASE:SETPT", value: -6, reason: "back toward the start" },
    { type: "wait", seconds: 0.1 },
    { type: "write", device: "RF:PHASE:SETPT", value: -4, reason: "operating point" },
  ],
};

/**
 * A peak is reported only inside the scan: the highest point must have a
 * neighbour on each side, and a parabola through the three places it
 * between them. Highest at an edge, the crest may lie beyond the range.
 */
const ANALYSIS = `import csv
rows = list(csv.DictReader(open(PATH)))
cols = list(rows[0].keys())
phase = next(c for c in cols if "PHASE" in c)
energy = next(c for c in cols if "ENERGY" in c)
pts = sorted((float(r[phase]), float(r[energy])) for r in rows)
for p, e in pts:
    print(f"{p:6.2f} deg  {e:10.4f}")
i = max(range(len(pts)), key=lambda k: pts[k][1])
if 0 < i < len(pts) - 1:
    (x0, y0), (x1, y1), (x2, y2) = pts[i - 1], pts[i], pts[i + 1]
    d = (x0 - x1) * (x0 - x2) * (x1 - x2)
    a = (x2 * (y1 - y0) + x1 * (y0 - y2) + x0 * (y2 - y1)) / d
    b = (x2 * x2 * (y0 - y1) + x1 * x1 * (y2 - y0) + x0 * x0 * (y1 - y2)) / d
    x = min(max(-b / (2 * a), x0), x2) if a < 0 else x1
    y = y1 + a * (x * x - x1 * x1) + b * (x - x1)
    print(f"peak: {y:.4f} at {x:.2f} deg")
else:
    print(f"edge: {pts[i][1]:.4f} at {pts[i][0]:.2f} deg")
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
      const edge = /edge: (\S+) at (\S+) deg/.exec(out);
      return `## Result\n\nEnergy against phase, from the scan:\n\n\`\`\`\n${out}\n\`\`\`\n\n` +
        (peak
          ? `The energy peaks at ${peak[2]} deg (${peak[1]} MeV), inside the scanned range; `
          : edge
          ? `No peak inside the scan: the energy is highest at its edge, ${edge[2]} deg ` +
            `(${edge[1]} MeV), so the crest may lie beyond it; `
          : "No peak was found; ") +
        "the phase is back at its operating point (the plan's rollback).\n\n" +
        "Replay finished — no model was called.";
    },
  },
];
