/** Every duration key of the configuration is bounded to what a timer can wait. */
import assert from "node:assert/strict";
import type { z } from "zod";
import { ConfigSchema } from "../../src/config/schema.ts";
import { MAX_TIMER_MS } from "../../src/util/misc.ts";

/** The schema inside defaults, prefaults and optionals. */
function unwrap(s: z.ZodType): z.ZodType {
  let t = s as z.ZodType & { _zod: { def: { innerType?: z.ZodType } } };
  while (t._zod.def.innerType) t = t._zod.def.innerType as typeof t;
  return t;
}

/** Every key whose name says it is a duration, with the largest value its schema accepts. */
function durations(s: z.ZodType, path: string, out: [string, number | null, number][]) {
  const inner = unwrap(s) as z.ZodType & { shape?: Record<string, z.ZodType>; maxValue?: number };
  if (inner.shape) {
    for (const [k, v] of Object.entries(inner.shape)) durations(v, path ? `${path}.${k}` : k, out);
    return;
  }
  const unit = /_ms$/.test(path) ? 1 : /(_s|_seconds)$/.test(path) ? 1000 : 0;
  if (unit) out.push([path, inner.maxValue ?? null, unit]);
}

Deno.test("every duration key in the configuration has an upper bound a timer can hold", () => {
  const found: [string, number | null, number][] = [];
  durations(ConfigSchema, "", found);
  assert.ok(found.length >= 15, found.map((f) => f[0]).join(", "));
  const bound = (key: string) => found.find((f) => f[0] === key)?.[1];
  assert.equal(bound("safety.max_plan_seconds"), 7 * 24 * 3600);
  assert.equal(bound("sandbox.timeout_s"), 86_400);
  for (const [key, max, unit] of found) {
    assert.ok(max !== null && Number.isFinite(max), `${key} has no upper bound`);
    assert.ok(max * unit <= MAX_TIMER_MS, `${key}: ${max} is past what a timer holds`);
  }
});
