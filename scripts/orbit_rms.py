"""Orbit RMS per plane from a BPM CSV: mean, RMS, RMS about the mean, worst BPM.

Usage: orbit_rms.py FILE.csv [COLUMN ...]
FILE is relative to DATA_DIR unless absolute. Without COLUMNs every numeric
column is a plane (e.g. x_mm, y_mm); the first non-numeric column names the
BPM. Writes orbit_rms.json to WORK_DIR.
"""
import csv
import json
import math
import os
import sys


def data_path(name):
    return name if os.path.isabs(name) else os.path.join(DATA_DIR or ".", name)


def is_number(text):
    try:
        float(text)
        return True
    except (TypeError, ValueError):
        return False


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: orbit_rms.py FILE.csv [COLUMN ...]")
    with open(data_path(argv[1]), newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"{argv[1]}: no rows")
    columns = list(rows[0].keys())
    planes = argv[2:] or [c for c in columns if all(is_number(r[c]) for r in rows)]
    label = next((c for c in columns if c not in planes), None)
    result = {"file": argv[1], "bpms": len(rows), "planes": {}}
    for plane in planes:
        values = [float(r[plane]) for r in rows if is_number(r.get(plane))]
        n = len(values)
        mean = sum(values) / n
        rms = math.sqrt(sum(v * v for v in values) / n)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / n)
        worst = max(range(len(rows)), key=lambda i: abs(float(rows[i][plane])))
        result["planes"][plane] = {
            "n": n,
            "mean": round(mean, 6),
            "rms": round(rms, 6),
            "rms_about_mean": round(std, 6),
            "max_abs": round(abs(float(rows[worst][plane])), 6),
            "worst": rows[worst][label] if label else worst,
        }
    print(f"{'plane':<10} {'n':>4} {'mean':>10} {'rms':>10} {'std':>10}  worst")
    for plane, s in result["planes"].items():
        print(f"{plane:<10} {s['n']:>4} {s['mean']:>10.4f} {s['rms']:>10.4f} "
              f"{s['rms_about_mean']:>10.4f}  {s['worst']} ({s['max_abs']:.4f})")
    with open(os.path.join(WORK_DIR, "orbit_rms.json"), "w") as f:
        json.dump(result, f, indent=2)


main(sys.argv)
