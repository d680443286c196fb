/**
 * The order operators count devices in ("the second quad", "the last three
 * correctors"): names compared with their numbers as numbers (`C3` before
 * `C10`), and a device's stem, so its signals are counted once.
 *
 * @module
 */

const RUNS = /[0-9]+|[^0-9]+/g;

/** Names compared as people read them: runs of digits by value, the rest as text. */
export function naturalCompare(a: string, b: string): number {
  const x = a.match(RUNS) ?? [], y = b.match(RUNS) ?? [];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const p = x[i] as string, q = y[i] as string;
    if (p === q) continue;
    const dp = /^[0-9]/.test(p), dq = /^[0-9]/.test(q);
    if (dp && dq) {
      const d = Number(p) - Number(q);
      if (d !== 0) return d;
      return p.length - q.length;
    }
    return p < q ? -1 : 1;
  }
  return x.length - y.length;
}

/**
 * The device a signal belongs to: the name up to its closing brace
 * (`SR:C03-MG{PS:QH1A}I:Sp1-SP` → `SR:C03-MG{PS:QH1A}`), else up to its last
 * segment holding a number (`RING:COR:H03:SETPT` → `RING:COR:H03`), else the
 * name itself.
 */
export function stemOf(name: string): string {
  const brace = name.lastIndexOf("}");
  if (brace > 0) return name.slice(0, brace + 1);
  const segments = name.split(/([:._/-])/);
  for (let i = segments.length - 1; i >= 0; i -= 1) {
    if (/[0-9]/.test(segments[i] ?? "")) return segments.slice(0, i + 1).join("");
  }
  return name;
}
