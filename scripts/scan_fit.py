"""Fit of a scan's response: readback against setpoint, linear and quadratic least squares.

Usage: scan_fit.py FILE.csv X_COLUMN Y_COLUMN
FILE is relative to DATA_DIR unless absolute (e.g. a scan's CSV of corrector
current against BPM position). Prints slope, intercept, r² and the residual
RMS of both fits; writes scan_fit.json and scan_residuals.csv to WORK_DIR.
"""
import csv
import json
import math
import os
import sys


def data_path(name):
    return name if os.path.isabs(name) else os.path.join(DATA_DIR or ".", name)


def solve(a, b):
    """Gaussian elimination with partial pivoting for a small square system."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) < 1e-15:
            raise ValueError("the scan does not determine the fit (too few distinct points)")
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, n):
            k = m[r][col] / m[col][col]
            for c in range(col, n + 1):
                m[r][c] -= k * m[col][c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


def poly_fit(xs, ys, degree):
    """Least squares through the normal equations; coefficients from x^0 up."""
    size = degree + 1
    a = [[sum(x ** (i + j) for x in xs) for j in range(size)] for i in range(size)]
    b = [sum(y * x ** i for x, y in zip(xs, ys)) for i in range(size)]
    return solve(a, b)


def evaluate(coef, x):
    return sum(c * x ** i for i, c in enumerate(coef))


def quality(coef, xs, ys):
    mean = sum(ys) / len(ys)
    residuals = [y - evaluate(coef, x) for x, y in zip(xs, ys)]
    ss_res = sum(r * r for r in residuals)
    ss_tot = sum((y - mean) ** 2 for y in ys)
    return residuals, (1 - ss_res / ss_tot) if ss_tot else 1.0, math.sqrt(ss_res / len(ys))


def main(argv):
    if len(argv) != 4:
        sys.exit("usage: scan_fit.py FILE.csv X_COLUMN Y_COLUMN")
    with open(data_path(argv[1]), newline="") as f:
        rows = list(csv.DictReader(f))
    xs = [float(r[argv[2]]) for r in rows]
    ys = [float(r[argv[3]]) for r in rows]
    out = {"file": argv[1], "x": argv[2], "y": argv[3], "points": len(xs)}
    for name, degree in (("linear", 1), ("quadratic", 2)):
        if len(set(xs)) <= degree:
            continue
        coef = poly_fit(xs, ys, degree)
        residuals, r2, rms = quality(coef, xs, ys)
        out[name] = {"coefficients": [round(c, 9) for c in coef], "r2": round(r2, 6),
                     "residual_rms": round(rms, 9)}
        if degree == 1:
            out["slope"] = round(coef[1], 9)
            out["intercept"] = round(coef[0], 9)
            linear_residuals = residuals
    print(f"{argv[3]} = {out['slope']:.6g} * {argv[2]} + {out['intercept']:.6g}"
          f"  (r² {out['linear']['r2']:.4f}, residual rms {out['linear']['residual_rms']:.4g})")
    if "quadratic" in out:
        q = out["quadratic"]
        print(f"quadratic: coefficients {q['coefficients']}  (r² {q['r2']:.4f})")
    with open(os.path.join(WORK_DIR, "scan_fit.json"), "w") as f:
        json.dump(out, f, indent=2)
    with open(os.path.join(WORK_DIR, "scan_residuals.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow([argv[2], argv[3], "linear_residual"])
        for x, y, r in zip(xs, ys, linear_residuals):
            w.writerow([x, y, round(r, 9)])


main(sys.argv)
