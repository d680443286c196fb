/**
 * One behaviour suite for every {@link ControlSystem}: the simulator, EPICS
 * through the fake services, TANGO through the REST bridge to a real
 * TangoTest. Each backend's `*_test.ts` calls {@link conformance} with a
 * factory that starts what it needs and names devices of that machine.
 */
import assert from "node:assert/strict";
import type { ControlSystem, Value } from "../../src/adapters/adapter.ts";

/** A started backend and the names that exercise it. */
export interface Subject extends AsyncDisposable {
  cs: ControlSystem;
  /** At least three devices that read fine. */
  readable: string[];
  /** A device that cannot be read (never connects, throws, does not exist). */
  broken: string;
  /** A device whose write is confirmed by reading the value back exactly. */
  writable: { device: string; values: [Value, Value] };
  /** A device the backend must refuse to write. */
  readOnly: string;
  /** A wildcard with at least `min` matches, for paging. */
  search: { pattern: string; min: number };
  /** A time range with e-log and alarm entries, or undefined when the backend has no logs. */
  logs?: { from: string; to: string };
}

export function conformance(backend: string, start: () => Promise<Subject>, ignore = false): void {
  const test = (name: string, fn: (s: Subject) => Promise<void>) =>
    Deno.test({
      name: `${backend}: ${name}`,
      ignore,
      async fn() {
        await using s = await start();
        try {
          await fn(s);
        } finally {
          await s.cs.close();
        }
      },
    });

  test("reads many devices in one call, in the order asked", async (s) => {
    const names = [...s.readable, s.readable[0] as string];
    const readings = await s.cs.read(names);
    assert.deepEqual(readings.map((r) => r.device), names);
    for (const r of readings) {
      assert.equal(r.ok, true, `${r.device}: ${r.error}`);
      assert.notEqual(r.value, null);
      assert.ok(Number.isFinite(Date.parse(r.timestamp)), r.timestamp);
      assert.ok(["NONE", "MINOR", "MAJOR", "INVALID"].includes(r.severity));
    }
  });

  test("a device that cannot be read fails alone, with a one-line reason", async (s) => {
    const readings = await s.cs.read([s.readable[0] as string, s.broken, s.readable[1] as string]);
    assert.deepEqual(readings.map((r) => r.ok), [true, false, true]);
    const bad = readings[1];
    assert.equal(bad?.device, s.broken);
    assert.ok(bad?.error && !bad.error.includes("\n"), bad?.error);
  });

  test("a write is confirmed by reading the new value back", async (s) => {
    const { device, values } = s.writable;
    for (const value of values) {
      await s.cs.write(device, value);
      const [r] = await s.cs.read([device]);
      assert.equal(r?.ok, true, r?.error);
      assert.deepEqual(r?.value, value);
    }
  });

  test("a write to a read-only device is refused with a message naming it", async (s) => {
    const before = await s.cs.read([s.readOnly]);
    await assert.rejects(s.cs.write(s.readOnly, 1), (e: Error) => {
      assert.ok(e.message.includes(s.readOnly), e.message);
      assert.ok(!e.message.includes("\n"));
      return true;
    });
    const after = await s.cs.read([s.readOnly]);
    assert.equal(after[0]?.ok, before[0]?.ok);
  });

  test("describe tells writability and existence", async (s) => {
    const [w, r] = await s.cs.describe([s.writable.device, s.readOnly]);
    assert.equal(w?.exists, true);
    assert.equal(w?.writable, true);
    assert.equal(r?.writable, false);
  });

  test("search pages through matches with a stable total", async (s) => {
    const { pattern, min } = s.search;
    const first = await s.cs.search({ pattern, limit: 2, offset: 0 });
    assert.ok(first.total >= min, `total ${first.total} < ${min}`);
    assert.equal(first.devices.length, 2);
    const second = await s.cs.search({ pattern, limit: 2, offset: 2 });
    assert.equal(second.total, first.total);
    assert.equal(second.offset, 2);
    const names = [...first.devices, ...second.devices].map((d) => d.device);
    assert.equal(new Set(names).size, 4, "pages do not overlap");
    const past = await s.cs.search({ pattern, limit: 5, offset: first.total });
    assert.deepEqual(past.devices, []);
  });

  test("logs of a time range come newest first and inside the range", async (s) => {
    if (!s.logs) {
      for (const source of ["elog", "alarm"] as const) {
        const now = new Date().toISOString();
        await assert.rejects(
          s.cs.logs({ source, from: new Date(Date.now() - 3_600_000).toISOString(), to: now }),
          /has no (e-log|alarm log)/,
        );
      }
      return;
    }
    const { from, to } = s.logs;
    for (const source of ["elog", "alarm"] as const) {
      const entries = await s.cs.logs({ source, from, to, limit: 20 });
      assert.ok(entries.length > 0, `${source} has entries`);
      assert.ok(entries.length <= 20);
      let last = Infinity;
      for (const e of entries) {
        const t = Date.parse(e.time);
        assert.ok(t >= Date.parse(from) && t < Date.parse(to), `${e.time} inside`);
        assert.ok(t <= last, "newest first");
        last = t;
        assert.equal(e.source, source);
      }
    }
  });

  test("an aborted call rejects promptly", async (s) => {
    const controller = new AbortController();
    controller.abort(new Error("cancelled by the operator"));
    await assert.rejects(s.cs.read(s.readable, controller.signal), /cancelled by the operator/);
  });
}
