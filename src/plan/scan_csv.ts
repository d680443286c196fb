/**
 * Scan data as CSV in the work directory, so analysis code can read it.
 *
 * @module
 */
import type { Value } from "../adapters/adapter.ts";
import type { ScanAction } from "../plan_model/plan.ts";
import { makePrivateDir, writePrivateFile } from "../util/private_files.ts";

export interface ScanRow {
  time: string;
  setpoint: number;
  readback: Value | null;
  values: (Value | null)[];
}

/** Writes the rows and returns the file's path. */
export async function writeScanCsv(
  dir: string,
  planHash: string,
  where: string,
  scan: ScanAction,
  rows: ScanRow[],
): Promise<string> {
  await makePrivateDir(dir);
  const stamp = rows[0]?.time.replace(/[:.]/g, "-") ?? "empty";
  const index = /\[(\d+)\]/.exec(where)?.[1] ?? "0";
  const path = `${dir}/scan-${planHash.slice(0, 12)}-${index}-${stamp}.csv`;
  const header = [
    "time",
    `${scan.writeDevice}`,
    `${scan.writeDevice}:readback`,
    ...scan.readDevices,
  ];
  const lines = [header.map(cell).join(",")];
  for (const r of rows) {
    lines.push([r.time, r.setpoint, r.readback, ...r.values].map(cell).join(","));
  }
  await writePrivateFile(path, lines.join("\n") + "\n");
  return path;
}

/**
 * One cell. A line break in a value (a string a gateway sent) becomes a
 * space: one row per line is what every reader of the file counts on (the
 * plot splits lines first; Python's csv refuses a lone CR outside quotes).
 */
function cell(v: Value | null): string {
  if (v === null) return "";
  const text = (Array.isArray(v) ? v.join(" ") : String(v)).replace(/[\r\n]+/g, " ");
  return /[",]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
