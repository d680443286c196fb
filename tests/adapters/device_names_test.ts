/**
 * One device, one name: each control system's canonical names, the aliases
 * rewritten to them and the names refused, as tables; and the TANGO path a
 * name becomes on the wire, decoded back as a server decodes it.
 */
import assert from "node:assert/strict";
import { createEpics } from "../../src/adapters/epics/mod.ts";
import { createSimulator } from "../../src/adapters/simulator/mod.ts";
import { createTango } from "../../src/adapters/tango/mod.ts";
import { startFakeEpics } from "../support/facility/fake_epics.ts";
import { FakeTangoRest } from "../support/facility/fake_tango_rest.ts";
import { namingFor, requireCanonical, tangoPath } from "../../src/adapters/device_names.ts";

const epics = namingFor("epics");
const tango = namingFor("tango", { tangoHost: "tg.example.org:10000" });

/** [name, canonical name] for names that are one channel's names. */
const EPICS_SAME: [string, string][] = [
  ["SR:COR:H01:SETPT", "SR:COR:H01:SETPT"],
  ["SR:COR:H01:SETPT.VAL", "SR:COR:H01:SETPT"],
  ["SR:COR:H01:SETPT.DRVH", "SR:COR:H01:SETPT.DRVH"],
  ["SR-RF{Cav:1}Volt-SP", "SR-RF{Cav:1}Volt-SP"],
  ["BL01I-AL-SLITS-01:X_GAP", "BL01I-AL-SLITS-01:X_GAP"],
];

/** [name, what the refusal must say] for names the gateway would resolve elsewhere. */
const EPICS_REFUSED: [string, RegExp][] = [
  ["pva://SR:COR:H01:SETPT", /protocol prefix "pva:\/\/" .* write SR:COR:H01:SETPT$/],
  ["ca://SR:COR:H01:SETPT", /protocol prefix "ca:\/\/"/],
  ["PVA://SR:COR:H01:SETPT", /protocol prefix "PVA:\/\/"/],
  ["loc://x(4)", /protocol prefix "loc:\/\/"/],
  ["sim://sine", /protocol prefix "sim:\/\/"/],
  ["SR:COR:H01:SETPT.val", /field names are upper case; write SR:COR:H01:SETPT$/],
  ["SR:COR:H01:SETPT.drvh", /write SR:COR:H01:SETPT\.DRVH$/],
  ["SR:COR:H01:SETPT.VAL$", /"\$" after the field is a channel filter .* write SR:COR:H01:SETPT$/],
  ["SR:COR:H01:SETPT.VAL[0:2]", /"\[0:2\]" after the field/],
  ['SR:COR:H01:SETPT.{"dbnd":{"d":1}}', /channel filter or modifier .* write SR:COR:H01:SETPT$/],
  ["SR:COR:H01:SETPT.", /has no field name after "\."/],
  ["SR:COR:H01:SETPT..VAL", /channel filter or modifier/],
  [".VAL", /names no record before its field/],
  ["SR:COR:H01:SETPT/value", /holds "\/", which is not in an EPICS record name/],
  ["SR:COR:H01:SETPT?request=field(value)", /holds "\?"/],
  ["=`SR:COR:H01:SETPT`*2", /holds "="/],
  ["SR:COR:*:SETPT", /holds "\*"/],
  ["SR:COR:H01:SETPT ", /holds U\+0020; device names are printable ASCII/],
  ["SR:COR:H01:SETPT\u0000", /"SR:COR:H01:SETPT\\u0000" holds U\+0000/],
  ["SR:COR:H01:SETPT\n", /holds U\+000A/],
  ["ЅR:COR:H01:SETPT", /holds U\+0405/],
  ["", /an empty device name/],
];

Deno.test("EPICS: a name and its .VAL are one channel; a field is a device of its own", () => {
  for (const [name, want] of EPICS_SAME) {
    assert.deepEqual(epics.canonical(name), { ok: true, name: want }, name);
  }
  assert.deepEqual(epics.fieldOf("SR:X.DRVH"), { record: "SR:X", field: "DRVH" });
  assert.equal(epics.fieldOf("SR:X"), undefined);
});

Deno.test("EPICS: prefixes, modifiers, filters and anything the gateway reads otherwise are refused, naming it", () => {
  for (const [name, why] of EPICS_REFUSED) {
    const c = epics.canonical(name);
    assert.ok(!c.ok, `${JSON.stringify(name)} was taken as ${JSON.stringify(c)}`);
    assert.match(c.error, why, name);
    assert.doesNotMatch(c.error, /\n/, "one line");
  }
});

Deno.test("the simulator names devices by EPICS' rules", () => {
  const sim = namingFor("simulator");
  assert.deepEqual(sim.canonical("RF:PHASE:SETPT.VAL"), { ok: true, name: "RF:PHASE:SETPT" });
  assert.equal(sim.canonical("pva://RF:PHASE:SETPT").ok, false);
});

const TANGO_SAME: [string, string][] = [
  ["sys/tg_test/1/ampli", "sys/tg_test/1/ampli"],
  ["SYS/TG_TEST/1/Ampli", "sys/tg_test/1/ampli"],
  ["sys/tg_test/1", "sys/tg_test/1"],
  ["sr/ps-hcor/c07-3/Current", "sr/ps-hcor/c07-3/current"],
  ["id10/mot/1.2/position", "id10/mot/1.2/position"],
  ["tango://tg.example.org:10000/sys/tg_test/1/ampli", "sys/tg_test/1/ampli"],
  ["TANGO://TG.EXAMPLE.ORG:10000/sys/tg_test/1/ampli", "sys/tg_test/1/ampli"],
  ["tango://tg.example.org/sys/tg_test/1/ampli", "sys/tg_test/1/ampli"],
];

const TANGO_REFUSED: [string, RegExp][] = [
  ["sys/tg_test/%31/ampli", /segment 3 .* holds "%", a percent escape/],
  ["sys/tg_test/1/%61mpli", /segment 4 .* holds "%"/],
  ["sys%2Ftg_test/1/ampli", /holds "%"/],
  ["sys/tg_test/1/ampli#dbase=no", /holds "#", a TANGO client suffix \(#dbase=no\)/],
  ["tango://tg.example.org:10000/sys/tg_test/1#dbase=no", /holds "#"/],
  ["tango://other.example.org:10000/sys/tg_test/1/ampli", /names the Tango host .* write sys/],
  ["tango://tg.example.org:10001/sys/tg_test/1/ampli", /names the Tango host/],
  ["http://tg.example.org/sys/tg_test/1/ampli", /a TANGO name is domain\/family\/member/],
  ["sys//tg_test/1", /segment 2 .* is empty/],
  ["sys/tg_test/1/", /segment 4 .* is empty/],
  ["sys/tg_test/./ampli", /segment 3 .* is "\.", which a URL resolves away/],
  ["sys/tg_test/../ampli", /is "\.\.", which a URL resolves away/],
  ["sys/tg_test/1./ampli", /starts or ends with a dot/],
  ["sys/tg_test/.1/ampli", /starts or ends with a dot/],
  ["sys/tg_test/1;x=y/ampli", /holds ";", a path parameter/],
  ["sys/tg_test/1/ampli?v=9", /holds "\?", the start of a query/],
  ["sys/tg_test/1/ampli/x", /5 segments given/],
  ["sys/tg_test", /2 segments given/],
  ["sys/tg_test/1/amp li", /holds U\+0020/],
  ["sys/tg_test/1/ampl\u0131", /holds U\+0131/],
  ["sys/tg_test/1/ampli\u0000", /holds U\+0000/],
];

Deno.test("TANGO: case, and a tango:// prefix naming the configured host, are one device", () => {
  for (const [name, want] of TANGO_SAME) {
    assert.deepEqual(tango.canonical(name), { ok: true, name: want }, name);
  }
  assert.equal(tango.caseSensitive, false);
});

Deno.test("TANGO: escapes, suffixes, other hosts and segments a URL resolves away are refused", () => {
  for (const [name, why] of TANGO_REFUSED) {
    const c = tango.canonical(name);
    assert.ok(!c.ok, `${JSON.stringify(name)} was taken as ${JSON.stringify(c)}`);
    assert.match(c.error, why, name);
  }
  // Without a configured host, no prefix can name it.
  assert.equal(namingFor("tango").canonical("tango://h:10000/a/b/c/d").ok, false);
});

Deno.test("TANGO: every canonical name survives the path round trip a server decodes", () => {
  const names = [...TANGO_SAME.map(([, c]) => c), "a-b/c_d/e.f/g-h"];
  for (const name of names) {
    const url = new URL(`http://h/devices/${tangoPath(name)}/x`);
    const segments = url.pathname.split("/").slice(2, -1).map(decodeURIComponent);
    assert.equal(segments.join("/"), name);
  }
  // A refused name, were it sent, would reach only itself: the escape is escaped.
  assert.equal(tangoPath("sys/tg_test/%31/ampli"), "sys/tg_test/%2531/ampli");
});

Deno.test("a write path refuses a name that is not canonical, in one line naming it", () => {
  assert.throws(
    () => requireCanonical(epics, "SR:X.VAL"),
    /^Error: write to "SR:X\.VAL" not sent: its canonical name is SR:X$/,
  );
  assert.throws(
    () => requireCanonical(tango, "sys/tg_test/%31/ampli"),
    /^Error: write to "sys\/tg_test\/%31\/ampli" not sent: segment 3 .* holds "%"/,
  );
  assert.throws(() => requireCanonical(tango, "SYS/TG_TEST/1/AMPLI"), /sys\/tg_test\/1\/ampli/);
  requireCanonical(epics, "SR:X");
  requireCanonical(tango, "sys/tg_test/1/ampli");
});

Deno.test("a limits entry must be able to match a canonical name", () => {
  assert.equal(epics.entryProblem("SR:COR:*:SETPT"), undefined);
  assert.equal(epics.entryProblem("SR:COR:*:SETPT.DRVH"), undefined);
  assert.match(
    epics.entryProblem("SR:COR:H01:SETPT.VAL") ?? "",
    /is the record itself; write SR:COR:H01:SETPT$/,
  );
  assert.match(epics.entryProblem("SR:*.VAL") ?? "", /write SR:\*$/);
  assert.match(epics.entryProblem("pva://SR:*") ?? "", /protocol prefix/);
  assert.equal(tango.entryProblem("SYS/TG_TEST/*/Ampli"), undefined);
  assert.equal(tango.entryProblem("sys/*"), undefined);
  assert.match(tango.entryProblem("sys/tg_test/%31/ampli") ?? "", /percent escape/);
  assert.match(
    tango.entryProblem("tango://tg.example.org:10000/sys/tg_test/1/ampli") ?? "",
    /names sys\/tg_test\/1\/ampli; write that/,
  );
});

Deno.test("the EPICS adapter's write refuses an alias before anything reaches the gateway", async () => {
  await using fake = startFakeEpics();
  const cs = createEpics({ pvwsUrl: fake.pvws.url, readTimeoutMs: 2000, writeTimeoutMs: 2000 });
  try {
    for (
      const alias of ["pva://SR:COR:H01:SETPT", "SR:COR:H01:SETPT.VAL", "SR:COR:H01:SETPT.VAL$"]
    ) {
      await assert.rejects(cs.write(alias, 0.7), /not sent: /, alias);
    }
    assert.deepEqual(fake.pvws.stats.writes, []);
    assert.deepEqual(fake.pvws.stats.subscribed, [], "not even subscribed");
  } finally {
    await cs.close();
  }
});

Deno.test("the simulator's write refuses an alias of its device", async () => {
  const sim = createSimulator();
  const [before] = await sim.read(["RF:PHASE:SETPT"]);
  await assert.rejects(
    sim.write("RF:PHASE:SETPT.VAL", 1),
    /^Error: write to "RF:PHASE:SETPT\.VAL" not sent: its canonical name is RF:PHASE:SETPT$/,
  );
  assert.deepEqual((await sim.read(["RF:PHASE:SETPT"]))[0]?.value, before?.value);
});

Deno.test("the TANGO adapter refuses an escaped name at write and read, and sends canonical ones encoded", async () => {
  await using server = new FakeTangoRest();
  const cs = createTango({ restUrl: server.restUrl, tangoHost: server.tangoHost });
  await assert.rejects(cs.write("sys/tg_test/%31/ampli", 2), /holds "%", a percent escape/);
  await assert.rejects(
    cs.write("SYS/TG_TEST/1/AMPLI", 2),
    /its canonical name is sys\/tg_test\/1\/ampli/,
  );
  const [r] = await cs.read(["sys/tg_test/%31/ampli"]);
  assert.equal(r?.ok, false);
  assert.match(r?.error ?? "", /percent escape/);
  assert.equal(server.http.requests.length, 0, "nothing was asked of the server");
  assert.equal(server.writes.length, 0);
  await cs.write("sys/tg_test/1/ampli", 2);
  assert.deepEqual(server.writes.map((w) => w.path), [
    "/tango/rest/v11/hosts/tango.test/devices/sys/tg_test/1/attributes/ampli/value",
  ]);
  // A name in the server's letter case is read as it is: TANGO ignores case.
  assert.equal((await cs.read(["SYS/TG_TEST/1/Ampli"]))[0]?.value, 2);
});
