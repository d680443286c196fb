/** Live values through the pvws gateway: batching, delta merging, writes confirmed by the monitor, faults. */
import assert from "node:assert/strict";
import { createEpics, type EpicsOptions } from "../../../src/adapters/epics/mod.ts";
import { PvwsClient } from "../../../src/adapters/epics/pvws.ts";
import { startFakeEpics } from "../../support/facility/fake_epics.ts";
import { hasSettled, ManualTimers } from "../../support/manual_timers.ts";
import { waitFor } from "../../support/run_agent.ts";

const BPMS = Array.from({ length: 20 }, (_, i) => `SR:BPM:${String(i + 1).padStart(2, "0")}:X`);

/**
 * A bare pvws client on a fake gateway's socket (connect timeout 1 s). Tests
 * that look at a wait pass `timers` (a {@link ManualTimers}) and move its clock.
 */
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
  await waitFor(() => fake.pvws.subscribed() === 0, 60_000, "the clear");
  await cs.read(BPMS.slice(0, 3));
  assert.equal(cs.pvws?.stats.subscribes, 2, "the socket is reused: one more subscribe");
  await cs.close();
});

Deno.test("a repeat read within the monitor linger costs no round trip; clears follow later", async () => {
  await using fake = startFakeEpics();
  const timers = new ManualTimers();
  const cs = epicsOn(fake.pvws.url, { monitorLingerMs: 300, timers });
  await cs.read(BPMS);
  fake.pvws.set("SR:BPM:01:X", 0.5);
  await waitFor(() => cs.pvws?.state("SR:BPM:01:X")?.value === 0.5, 60_000, "the monitor update");
  timers.advance(299);
  const [again] = await cs.read(["SR:BPM:01:X"]);
  assert.equal(again?.value, 0.5, "the live monitor's value");
  assert.equal(fake.pvws.stats.subscribes, 1);
  assert.equal(fake.pvws.subscribed(), BPMS.length, "still subscribed within the linger");
  timers.advance(1);
  await waitFor(() => fake.pvws.subscribed() === 0, 60_000, "the late clear");
  await cs.close();
});

Deno.test("later delta updates merge into the first update's metadata", async () => {
  await using fake = startFakeEpics();
  const client = clientOn(fake.pvws.url, { reconnectMinMs: 50, reconnectMaxMs: 200 });
  const got = await client.acquire(["SR:VAC:GAUGE:01"], 1000);
  assert.equal((got.get("SR:VAC:GAUGE:01") as Record<string, unknown>).units, "mbar");
  fake.pvws.set("SR:VAC:GAUGE:01", 1e-9, "NONE");
  await waitFor(() => client.state("SR:VAC:GAUGE:01")?.value === 1e-9, 60_000, "the delta");
  const merged = client.state("SR:VAC:GAUGE:01") ?? {};
  assert.equal(merged.units, "mbar", "metadata kept from the first update");
  assert.equal(merged.severity, "NONE", "severity replaced by the delta");
  client.release(["SR:VAC:GAUGE:01"]);
  client.close();
});

Deno.test("a PV that never connects fails alone when the read timeout ends, not before", async () => {
  await using fake = startFakeEpics();
  const timers = new ManualTimers();
  const cs = epicsOn(fake.pvws.url, { pvget: "off", timers });
  const reading = cs.read(["SR:BPM:01:X", "SR:GHOST:PV"]);
  await waitFor(() => fake.pvws.subscribed() === 2, 60_000, "the subscribe");
  timers.advance(299);
  assert.equal(await hasSettled(reading), false, "still waiting 1 ms before the timeout");
  timers.advance(1);
  const [ok, ghost] = await reading;
  assert.equal(ok?.ok, true);
  assert.equal(ghost?.ok, false);
  assert.match(ghost?.error ?? "", /no value within 300 ms: the PV did not connect/);
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

Deno.test("a gateway that is down gives every device a clear error without waiting for a timeout", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const timers = new ManualTimers();
  const cs = epicsOn(`http://127.0.0.1:${port}/pvws`, { pvget: "off", timers });
  // The clock never moves: only the refused connection can end the read.
  const readings = await cs.read(["SR:BPM:01:X", "SR:BPM:02:X"]);
  for (const r of readings) {
    assert.equal(r.ok, false);
    assert.match(
      r.error ?? "",
      /pvws gateway at ws:\/\/127\.0\.0\.1:\d+\/pvws\/pv is unreachable.*check \[epics\] pvws_url/,
    );
  }
  // Within the backoff window the next read fails at once instead of waiting it out.
  const [again] = await cs.read(["SR:BPM:01:X"]);
  assert.match(again?.error ?? "", /next attempt in 250 ms/);
  timers.advance(100);
  const [later] = await cs.read(["SR:BPM:01:X"]);
  assert.match(later?.error ?? "", /next attempt in 150 ms/);
  // Once the window has passed the client tries again, and the window doubles.
  timers.advance(150);
  const [retried] = await cs.read(["SR:BPM:01:X"]);
  assert.match(retried?.error ?? "", /is unreachable/);
  const [backedOff] = await cs.read(["SR:BPM:01:X"]);
  assert.match(backedOff?.error ?? "", /next attempt in 500 ms/);
  await cs.close();
});

Deno.test("a socket dropped mid-read fails the missing PVs at once, and the next read reconnects", async () => {
  await using fake = startFakeEpics();
  const timers = new ManualTimers();
  const cs = epicsOn(fake.pvws.url, { readTimeoutMs: 3000, reconnectMinMs: 20, timers });
  fake.pvws.dropOnNextSubscribe = true;
  // The clock never moves: the read ends with the drop, not with its timeout.
  const readings = await cs.read(BPMS.slice(0, 10));
  const failed = readings.filter((r) => !r.ok);
  assert.equal(failed.length, 5);
  for (const r of failed) assert.match(r.error ?? "", /connection to the pvws gateway .* dropped/);
  const again = await cs.read(BPMS.slice(0, 10));
  assert.ok(again.every((r) => r.ok));
  await cs.close();
});

Deno.test("the client reconnects after its backoff and subscribes again to PVs still in use", async () => {
  await using fake = startFakeEpics();
  const timers = new ManualTimers();
  const client = clientOn(fake.pvws.url, { reconnectMinMs: 20, reconnectMaxMs: 100, timers });
  await client.acquire(["SR:DCCT:CURRENT"], 1000);
  fake.pvws.dropAll();
  await waitFor(() => client.state("SR:DCCT:CURRENT") === undefined, 60_000, "the drop");
  assert.deepEqual(timers.pending(), [20], "one reconnect, after the shortest backoff");
  timers.advance(19);
  assert.deepEqual(timers.pending(), [20], "no reconnect before the backoff ends");
  timers.advance(1);
  await waitFor(() => client.state("SR:DCCT:CURRENT") !== undefined, 60_000, "the resubscribe");
  assert.equal(fake.pvws.stats.subscribes, 2);
  client.release(["SR:DCCT:CURRENT"]);
  client.close();
});

Deno.test("a PV given back after its socket dropped is subscribed again by the next read, without waiting for the reconnect", async () => {
  await using fake = startFakeEpics();
  const timers = new ManualTimers();
  const client = clientOn(fake.pvws.url, { lingerMs: 1000, timers });
  await client.acquire(["SR:DCCT:CURRENT"], 1000);
  fake.pvws.dropAll();
  await waitFor(() => client.state("SR:DCCT:CURRENT") === undefined, 60_000, "the drop");
  client.release(["SR:DCCT:CURRENT"]);
  // The clock stands still: the background reconnect never runs, the read opens the socket.
  const reading = client.acquire(["SR:DCCT:CURRENT"], 1000);
  await waitFor(() => fake.pvws.stats.subscribes === 2, 60_000, "the subscribe on the new socket");
  const got = await reading;
  assert.equal((got.get("SR:DCCT:CURRENT") as Record<string, unknown>).value, 301.5);
  client.release(["SR:DCCT:CURRENT"]);
  client.close();
});

Deno.test("a write the monitor never confirms fails when the write deadline ends", async () => {
  await using fake = startFakeEpics();
  const timers = new ManualTimers();
  const cs = epicsOn(fake.pvws.url, { timers });
  const writing = cs.write("SR:COR:H02:SETPT", 1);
  await timers.armed(400);
  timers.advance(399);
  assert.equal(await hasSettled(writing), false, "still waiting 1 ms before the deadline");
  timers.advance(1);
  await assert.rejects(
    writing,
    /write of 1 to SR:COR:H02:SETPT not confirmed within 400 ms: the value is still 0/,
  );
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

Deno.test("a gateway slower than the read timeout gives per-PV errors when the timeout ends", async () => {
  // The gateway answers a minute late: only the read timeout can end the read.
  await using fake = startFakeEpics({ latencyMs: 60_000 });
  const timers = new ManualTimers();
  const cs = epicsOn(fake.pvws.url, { readTimeoutMs: 200, pvget: "off", timers });
  const reading = cs.read(["SR:BPM:01:X", "SR:BPM:02:X"]);
  await waitFor(() => fake.pvws.stats.messages === 1, 60_000, "the subscribe");
  timers.advance(199);
  assert.equal(await hasSettled(reading), false, "still waiting 1 ms before the timeout");
  timers.advance(1);
  for (const r of await reading) assert.match(r.error ?? "", /no value within 200 ms/);
  await cs.close();
});

Deno.test("an idle socket is kept alive with pings; a socket in use sends none", async () => {
  await using fake = startFakeEpics();
  const timers = new ManualTimers();
  const client = clientOn(fake.pvws.url, {
    reconnectMinMs: 50,
    reconnectMaxMs: 200,
    keepaliveMs: 40,
    lingerMs: 1000,
    timers,
  });
  await client.acquire(["SR:DCCT:CURRENT"], 1000);
  timers.advance(40);
  await waitFor(() => fake.pvws.stats.pings === 1, 60_000, "the first ping");
  timers.advance(40);
  await waitFor(() => fake.pvws.stats.pings === 2, 60_000, "the second ping");
  // A message sent meanwhile keeps the socket busy: the next tick sends no ping.
  timers.advance(20);
  await client.acquire(["SR:BPM:01:X"], 1000);
  const sent = client.stats.sent;
  timers.advance(20);
  assert.equal(client.stats.sent, sent, "no ping 20 ms after a subscribe");
  timers.advance(40);
  await waitFor(() => fake.pvws.stats.pings === 3, 60_000, "the third ping");
  client.release(["SR:DCCT:CURRENT", "SR:BPM:01:X"]);
  client.close();
});

Deno.test("writing the value a PV already holds is confirmed though the monitor posts nothing", async () => {
  await using fake = startFakeEpics();
  const timers = new ManualTimers();
  const cs = epicsOn(fake.pvws.url, { timers });
  const writing = cs.write("SR:COR:H01:SETPT", 0.5);
  // No update will come: a short grace for an error, then it counts as confirmed.
  await timers.armed(250);
  assert.equal(await hasSettled(writing), false, "waiting out the grace for an error");
  timers.advance(250);
  await writing;
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
  const timers = new ManualTimers();
  await using gateway = silentGateway({ readTimeoutMs: 400, timers });
  for (let i = 0; i < 2; i++) {
    const reading = gateway.cs.read(["SR:BPM:01:X"]);
    // Time moves only while the read waits on a timer (the pvget probe, the connection).
    let spent = 0;
    while (!await hasSettled(reading)) {
      await timers.armed();
      spent += timers.advanceToNext();
    }
    const [r] = await reading;
    assert.equal(r?.ok, false);
    assert.ok(spent <= 400, `read ${i + 1} took ${spent} ms against a 400 ms read timeout`);
  }
});

Deno.test("an abort stops a read still waiting for the gateway to accept the connection", async () => {
  // pvget off: the socket, not the HTTP path (whose fetch takes the signal itself).
  const timers = new ManualTimers();
  await using gateway = silentGateway({
    readTimeoutMs: 5_000,
    connectTimeoutMs: 5_000,
    pvget: "off",
    timers,
  });
  const { cs } = gateway;
  const stop = new AbortController();
  // The clock never moves, so no timeout can end the read: only the abort.
  const reading = cs.read(["SR:BPM:01:X"], stop.signal);
  await waitFor(() => gateway.held.length === 1, 60_000, "the gateway's connection");
  assert.equal(await hasSettled(reading), false, "the gateway never answers");
  stop.abort(new Error("cancelled by the operator"));
  await assert.rejects(reading, /cancelled by the operator/);
  // Closing the adapter ends the connection still opening in the background.
  await cs.close();
  const conn = gateway.held[0] as Deno.Conn;
  const buf = new Uint8Array(4096);
  while (await conn.read(buf) !== null) { /* the handshake request, then the end */ }
});

Deno.test("connecting counts against the read timeout: a gateway slow to accept costs one read timeout", async () => {
  const timers = new ManualTimers();
  await using gateway = silentGateway({
    readTimeoutMs: 300,
    connectTimeoutMs: 5_000,
    pvget: "off",
    timers,
  });
  const { cs } = gateway;
  const reading = cs.read(["SR:BPM:01:X"]);
  await waitFor(() => gateway.held.length === 1, 60_000, "the gateway's connection");
  timers.advance(299);
  assert.equal(await hasSettled(reading), false, "still waiting 1 ms before the read timeout");
  timers.advance(1);
  const [r] = await reading;
  assert.equal(r?.ok, false);
  assert.match(r?.error ?? "", /did not accept a connection within the read timeout \(300 ms\)/);
});

Deno.test("closing the adapter ends a read still waiting for a PV, with a message saying so", async () => {
  await using fake = startFakeEpics();
  const timers = new ManualTimers();
  const cs = epicsOn(fake.pvws.url, { readTimeoutMs: 3_000, pvget: "off", timers });
  // The clock never moves: only the close can end the read.
  const reading = cs.read(["SR:GHOST:PV"]);
  await waitFor(() => fake.pvws.subscribed() === 1, 60_000, "the subscribe");
  await cs.close();
  const [r] = await reading;
  assert.equal(r?.ok, false);
  assert.match(r?.error ?? "", /the EPICS adapter was closed/);
});
