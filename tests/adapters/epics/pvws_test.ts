/** Live values through the pvws gateway: batching, delta merging, writes confirmed by the monitor, faults. */
import assert from "node:assert/strict";
import { createEpics, type EpicsOptions } from "../../../src/adapters/epics/mod.ts";
import { PvwsClient } from "../../../src/adapters/epics/pvws.ts";
import { startFakeEpics } from "../../support/facility/fake_epics.ts";
import { waitFor } from "../../support/run_agent.ts";

const BPMS = Array.from({ length: 20 }, (_, i) => `SR:BPM:${String(i + 1).padStart(2, "0")}:X`);

/** A bare pvws client on a fake gateway's socket (connect timeout 1 s). */
function clientOn(url: string, more: Partial<ConstructorParameters<typeof PvwsClient>[0]>) {
  return new PvwsClient({
    url: `${url.replace("http", "ws")}/pv`,
    connectTimeoutMs: 1000,
    reconnectMinMs: 50,
    reconnectMaxMs: 200,
    ...more,
  });
}

function epicsOn(url: string, more: EpicsOptions = {}) {
  return createEpics({
    pvwsUrl: url,
    readTimeoutMs: 300,
    writeTimeoutMs: 400,
    monitorLingerMs: 0,
    ...more,
  });
}

Deno.test("a batch of 20 reads costs one subscribe message and clears afterwards", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake.pvws.url);
  const readings = await cs.read(BPMS);
  assert.ok(readings.every((r) => r.ok && r.units === "mm" && typeof r.value === "number"));
  assert.equal(fake.pvws.stats.subscribes, 1);
  await waitFor(() => fake.pvws.subscribed() === 0, 2000, "the clear");
  await cs.read(BPMS.slice(0, 3));
  assert.equal(cs.pvws?.stats.subscribes, 2, "the socket is reused: one more subscribe");
  await cs.close();
});

Deno.test("a repeat read within the monitor linger costs no round trip; clears follow later", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake.pvws.url, { monitorLingerMs: 300 });
  await cs.read(BPMS);
  fake.pvws.set("SR:BPM:01:X", 0.5);
  await waitFor(() => cs.pvws?.state("SR:BPM:01:X")?.value === 0.5, 2000, "the monitor update");
  const [again] = await cs.read(["SR:BPM:01:X"]);
  assert.equal(again?.value, 0.5, "the live monitor's value");
  assert.equal(fake.pvws.stats.subscribes, 1);
  await waitFor(() => fake.pvws.subscribed() === 0, 3000, "the late clear");
  await cs.close();
});

Deno.test("later delta updates merge into the first update's metadata", async () => {
  await using fake = startFakeEpics();
  const client = clientOn(fake.pvws.url, { reconnectMinMs: 50, reconnectMaxMs: 200 });
  const got = await client.acquire(["SR:VAC:GAUGE:01"], 1000);
  assert.equal((got.get("SR:VAC:GAUGE:01") as Record<string, unknown>).units, "mbar");
  fake.pvws.set("SR:VAC:GAUGE:01", 1e-9, "NONE");
  await waitFor(() => client.state("SR:VAC:GAUGE:01")?.value === 1e-9, 2000, "the delta");
  const merged = client.state("SR:VAC:GAUGE:01") ?? {};
  assert.equal(merged.units, "mbar", "metadata kept from the first update");
  assert.equal(merged.severity, "NONE", "severity replaced by the delta");
  client.release(["SR:VAC:GAUGE:01"]);
  client.close();
});

Deno.test("a PV that never connects fails alone within the read timeout", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake.pvws.url);
  const t = performance.now();
  const [ok, ghost] = await cs.read(["SR:BPM:01:X", "SR:GHOST:PV"]);
  const ms = performance.now() - t;
  assert.equal(ok?.ok, true);
  assert.equal(ghost?.ok, false);
  assert.match(ghost?.error ?? "", /no value within 300 ms: the PV did not connect/);
  assert.ok(ms < 1300, `${ms.toFixed(0)} ms`);
  await cs.close();
});

Deno.test("a disconnected IOC (NaN, severity UNDEFINED) reads as a per-PV error", async () => {
  await using fake = startFakeEpics();
  fake.pvws.pvs.set("SR:IOC:DOWN", { value: NaN, severity: "UNDEFINED" });
  const cs = epicsOn(fake.pvws.url);
  const [r] = await cs.read(["SR:IOC:DOWN"]);
  assert.equal(r?.ok, false);
  assert.equal(r?.status, "DISCONNECTED");
  assert.match(r?.error ?? "", /disconnected/);
  await cs.close();
});

Deno.test("a gateway that is down gives every device a clear error within the timeout", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const cs = epicsOn(`http://127.0.0.1:${port}/pvws`, { pvget: "off" });
  const t = performance.now();
  const readings = await cs.read(["SR:BPM:01:X", "SR:BPM:02:X"]);
  assert.ok(performance.now() - t < 1300);
  for (const r of readings) {
    assert.equal(r.ok, false);
    assert.match(
      r.error ?? "",
      /pvws gateway at ws:\/\/127\.0\.0\.1:\d+\/pvws\/pv .*check \[epics\] pvws_url/,
    );
  }
  // Within the backoff window the next read fails at once instead of waiting it out.
  const [again] = await cs.read(["SR:BPM:01:X"]);
  assert.match(again?.error ?? "", /next attempt in \d+ ms/);
  await cs.close();
});

Deno.test("a socket dropped mid-read fails the missing PVs at once, and the next read reconnects", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake.pvws.url, { readTimeoutMs: 3000, reconnectMinMs: 20 });
  fake.pvws.dropOnNextSubscribe = true;
  const t = performance.now();
  const readings = await cs.read(BPMS.slice(0, 10));
  assert.ok(performance.now() - t < 1000, "no waiting for the read timeout");
  const failed = readings.filter((r) => !r.ok);
  assert.equal(failed.length, 5);
  for (const r of failed) assert.match(r.error ?? "", /connection to the pvws gateway .* dropped/);
  const again = await cs.read(BPMS.slice(0, 10));
  assert.ok(again.every((r) => r.ok));
  await cs.close();
});

Deno.test("the client reconnects with backoff and subscribes again to PVs still in use", async () => {
  await using fake = startFakeEpics();
  const client = clientOn(fake.pvws.url, { reconnectMinMs: 20, reconnectMaxMs: 100 });
  await client.acquire(["SR:DCCT:CURRENT"], 1000);
  fake.pvws.dropAll();
  await waitFor(() => client.state("SR:DCCT:CURRENT") === undefined, 2000, "the drop");
  await waitFor(() => client.state("SR:DCCT:CURRENT") !== undefined, 3000, "the resubscribe");
  assert.equal(fake.pvws.stats.subscribes, 2);
  client.release(["SR:DCCT:CURRENT"]);
  client.close();
});

Deno.test("a write the monitor never confirms fails within the write deadline", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake.pvws.url);
  const t = performance.now();
  await assert.rejects(
    cs.write("SR:COR:H02:SETPT", 1),
    /write of 1 to SR:COR:H02:SETPT not confirmed within 400 ms: the value is still 0/,
  );
  assert.ok(performance.now() - t < 1500);
  await cs.close();
});

Deno.test("a write the gateway rejects reports the gateway's message", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake.pvws.url);
  await assert.rejects(
    cs.write("SR:COR:H03:SETPT", 2),
    /write to SR:COR:H03:SETPT failed: Write to SR:COR:H03:SETPT failed: put rejected by the IOC/,
  );
  await cs.close();
});

Deno.test("enum writes go by index; arrays and unknown labels are refused locally", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake.pvws.url);
  await cs.write("SR:MODE", "Standby");
  assert.deepEqual(fake.pvws.stats.writes.at(-1), { pv: "SR:MODE", value: 2 });
  assert.equal((await cs.read(["SR:MODE"]))[0]?.value, "Standby");
  await assert.rejects(
    cs.write("SR:MODE", "Warp"),
    /"Warp" is not one of its states \(Off, On, Standby\)/,
  );
  await assert.rejects(cs.write("SR:COR:H01:SETPT", [1, 2]), /cannot write arrays/);
  const [info] = await cs.describe(["SR:MODE"]);
  assert.deepEqual(info?.labels, ["Off", "On", "Standby"]);
  await cs.close();
});

Deno.test("waveforms decode from little-endian Base64; alarm status follows the limits", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake.pvws.url);
  const [wf, vac] = await cs.read(["SR:ORBIT:WF", "SR:VAC:GAUGE:01"]);
  assert.deepEqual(wf?.value, [0.1, -0.2, 0.3, 0.25]);
  assert.equal(vac?.severity, "MAJOR");
  assert.equal(vac?.status, "HIHI");
  await cs.close();
});

Deno.test("the HTTP pvget fast path is used when the gateway offers it", async () => {
  await using fake = startFakeEpics({ pvget: true });
  const cs = epicsOn(fake.pvws.url);
  const [a, ghost] = await cs.read(["SR:BPM:01:X", "SR:GHOST:PV"]);
  assert.equal(a?.ok, true);
  assert.equal(a?.units, "mm");
  assert.equal(ghost?.ok, false);
  assert.match(ghost?.error ?? "", /did not connect/);
  assert.equal(fake.pvws.stats.subscribes, 0, "no socket needed");
  await cs.close();
});

Deno.test("a pva:// prefix goes on the wire while readings keep the agent's names", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake.pvws.url, { pvPrefix: "pva://" });
  const [r] = await cs.read(["SR:DCCT:CURRENT"]);
  assert.equal(r?.device, "SR:DCCT:CURRENT");
  assert.equal(r?.value, 301.5);
  await cs.write("SR:COR:H01:SETPT", 0.75);
  assert.deepEqual(fake.pvws.stats.writes.at(-1), { pv: "pva://SR:COR:H01:SETPT", value: 0.75 });
  await cs.close();
});

Deno.test("a gateway slower than the read timeout gives per-PV errors within the timeout", async () => {
  await using fake = startFakeEpics({ latencyMs: 600 });
  const cs = epicsOn(fake.pvws.url, { readTimeoutMs: 200, pvget: "off" });
  const t = performance.now();
  const readings = await cs.read(["SR:BPM:01:X", "SR:BPM:02:X"]);
  assert.ok(performance.now() - t < 700, "bounded by the read timeout, not the gateway");
  for (const r of readings) assert.match(r.error ?? "", /no value within 200 ms/);
  await cs.close();
});

Deno.test("an idle socket is kept alive with pings", async () => {
  await using fake = startFakeEpics();
  const client = clientOn(fake.pvws.url, {
    reconnectMinMs: 50,
    reconnectMaxMs: 200,
    keepaliveMs: 40,
  });
  await client.acquire(["SR:DCCT:CURRENT"], 1000);
  await waitFor(() => fake.pvws.stats.pings >= 2, 3000, "two pings");
  client.release(["SR:DCCT:CURRENT"]);
  client.close();
});

Deno.test("writing the value a PV already holds is confirmed though the monitor posts nothing", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake.pvws.url);
  await cs.write("SR:COR:H01:SETPT", 0.5);
  assert.deepEqual(fake.pvws.stats.writes.at(-1), { pv: "SR:COR:H01:SETPT", value: 0.5 });
  await assert.rejects(
    cs.write("SR:COR:H03:SETPT", 0),
    /put rejected by the IOC/,
    "an error still wins",
  );
  await cs.close();
});

/**
 * A gateway that accepts TCP connections and never answers (not even the
 * WebSocket handshake), and an adapter on it; disposing closes both.
 */
function silentGateway(more: EpicsOptions) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn);
  })().catch(() => {});
  const cs = epicsOn(`http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/pvws`, more);
  return {
    cs,
    held,
    async [Symbol.asyncDispose]() {
      await cs.close();
      listener.close();
      for (const c of held) c.close();
      await accepting;
    },
  };
}

Deno.test("a gateway that accepts connections and never answers costs each read one read timeout", async () => {
  await using gateway = silentGateway({ readTimeoutMs: 400 });
  for (let i = 0; i < 2; i++) {
    const t = performance.now();
    const [r] = await gateway.cs.read(["SR:BPM:01:X"]);
    const ms = performance.now() - t;
    assert.equal(r?.ok, false);
    assert.ok(ms < 900, `read ${i + 1} took ${ms.toFixed(0)} ms against a 400 ms read timeout`);
  }
});

Deno.test("an abort stops a read still waiting for the gateway to accept the connection", async () => {
  // pvget off: the socket, not the HTTP path (whose fetch takes the signal itself).
  await using gateway = silentGateway({
    readTimeoutMs: 5_000,
    connectTimeoutMs: 5_000,
    pvget: "off",
  });
  const { cs } = gateway;
  const stop = new AbortController();
  const t = performance.now();
  setTimeout(() => stop.abort(new Error("cancelled by the operator")), 100);
  await assert.rejects(cs.read(["SR:BPM:01:X"], stop.signal), /cancelled by the operator/);
  const ms = performance.now() - t;
  assert.ok(
    ms < 2_000,
    `the read ended ${ms.toFixed(0)} ms after it began (connect timeout 5 s)`,
  );
  // Closing the adapter ends the connection still opening in the background.
  await waitFor(() => gateway.held.length === 1, 2000, "the gateway's connection");
  await cs.close();
  const conn = gateway.held[0] as Deno.Conn;
  const buf = new Uint8Array(4096);
  const untilEof = async () => {
    while (await conn.read(buf) !== null) { /* the handshake request */ }
    return "closed";
  };
  const timeout = new Promise((r) => setTimeout(() => r("still open"), 2000));
  assert.equal(await Promise.race([untilEof(), timeout]), "closed");
});

Deno.test("connecting counts against the read timeout: a gateway slow to accept costs one read timeout", async () => {
  await using gateway = silentGateway({
    readTimeoutMs: 300,
    connectTimeoutMs: 5_000,
    pvget: "off",
  });
  const { cs } = gateway;
  const t = performance.now();
  const [r] = await cs.read(["SR:BPM:01:X"]);
  const ms = performance.now() - t;
  assert.equal(r?.ok, false);
  assert.match(r?.error ?? "", /did not accept a connection within the read timeout \(300 ms\)/);
  assert.ok(ms < 2_000, `the read took ${ms.toFixed(0)} ms (read timeout 300 ms, connect 5 s)`);
});

Deno.test("closing the adapter ends a read still waiting for a PV, with a message saying so", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake.pvws.url, { readTimeoutMs: 3_000, pvget: "off" });
  const t = performance.now();
  const reading = cs.read(["SR:GHOST:PV"]);
  await waitFor(() => fake.pvws.subscribed() === 1, 2_000, "the subscribe");
  await cs.close();
  const [r] = await reading;
  const ms = performance.now() - t;
  assert.equal(r?.ok, false);
  assert.match(r?.error ?? "", /the EPICS adapter was closed/);
  assert.ok(ms < 2_000, `the read ended ${ms.toFixed(0)} ms after it began (read timeout 3 s)`);
});
