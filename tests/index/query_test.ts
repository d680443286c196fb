import assert from "node:assert/strict";
import { buildIndex, type DeviceIndex, rankedSearch } from "../../src/index/mod.ts";
import { loadSynonyms } from "../../src/index/synonyms.ts";
import { simulatorIndexSource } from "../../src/adapters/simulator/index_source.ts";
import { defaultFacility } from "../../src/facility/facility.ts";
import { nearestFamilies } from "../../src/index/families.ts";
import { searchModeOf } from "../../src/index/mode.ts";

const index: DeviceIndex = await buildIndex(
  simulatorIndexSource(defaultFacility()),
  await loadSynonyms(),
);
const names = (q: string, limit = 50) =>
  rankedSearch(index, q, { limit }).devices.map((d) => d.name);

Deno.test("the words of the issue that found nothing now find the devices meant", () => {
  assert.ok(names("horizontal corrector linac").every((n) => /^LINAC:COR:H\d+:/.test(n)));
  assert.equal(rankedSearch(index, "horizontal corrector linac").total, 40);
  assert.ok(names("beam position").every((n) => n.includes(":BPM:")));
  assert.deepEqual(
    new Set(names("rf phase")),
    new Set([
      "RF:PHASE:RDBK",
      "RF:PHASE:SETPT",
      ...[1, 2, 3, 4].flatMap((i) => [`RF:STN:0${i}:PHASE:RDBK`, `RF:STN:0${i}:PHASE:SETPT`]),
    ]),
  );
});

Deno.test("a synonym, an abbreviation and the name segment meet as one term", () => {
  const a = names("steerers linac");
  assert.deepEqual(names("correctors linac"), a);
  assert.deepEqual(names("COR linac"), a);
  assert.ok(names("pickups ring sum").every((n) => /^RING:BPM:\d+:SUM$/.test(n)));
});

Deno.test("a cell or sector number picks the devices of that cell, not those numbered so", () => {
  assert.deepEqual(names("ion pump pressure cell 4"), [
    "RING:VAC:IP:019:PRES",
    "RING:VAC:IP:020:PRES",
    "RING:VAC:IP:021:PRES",
    "RING:VAC:IP:022:PRES",
    "RING:VAC:IP:023:PRES",
    "RING:VAC:IP:024:PRES",
  ]);
  assert.deepEqual(names("sector 4 ion gauges"), names("cell 4 ion gauges"));
});

Deno.test("a device number and a range of them are read as numbers of the device", () => {
  assert.deepEqual(names("bpm 11 turn by turn"), ["RING:BPM:11:TBT:X", "RING:BPM:11:TBT:Y"]);
  assert.deepEqual(names("linac klystrons 2-3 forward power"), [
    "LINAC:KLY:02:FWD:PWR",
    "LINAC:KLY:03:FWD:PWR",
  ]);
});

Deno.test("intent words choose setpoints or readbacks", () => {
  assert.ok(names("linac quadrupole setpoints").every((n) => /^LINAC:QUAD:\d+:CURRENT$/.test(n)));
  assert.ok(names("linac quadrupole readbacks").every((n) => /^LINAC:QUAD:\d+:RDBK$/.test(n)));
});

Deno.test("a misspelt word is corrected to the nearest known one and says so", () => {
  const page = rankedSearch(index, "klystorn refelcted power", { limit: 8 });
  assert.deepEqual(page.terms, ["klystorn≈klystron", "refelcted≈reflected", "power"]);
  assert.ok(page.devices.every((d) => /^LINAC:KLY:\d+:REFL:PWR$/.test(d.name)));
  assert.equal(page.total, 8);
});

Deno.test("every result says which terms it matched, where, and its score", () => {
  const [first] = rankedSearch(index, "ion pump pressure cell 4", { limit: 1 }).devices;
  assert.ok(first);
  assert.deepEqual(first.matched, ["ion pump (name)", "pressure (name)", "cell 4 (property)"]);
  assert.ok(first.score > 0);
});

Deno.test("everyday words no device is described by are set aside and named", () => {
  const page = rankedSearch(index, "horizontal corrector linac flux capacitor");
  assert.equal(page.total, 40);
  assert.deepEqual(page.ignored, ["flux", "capacitor"]);
  assert.deepEqual(page.unmatched, []);
});

Deno.test("paging ranked results gives every device once under a stable total", () => {
  const all = rankedSearch(index, "ring bpm", { limit: 1000 });
  const seen: string[] = [];
  for (let offset = 0; offset < all.total; offset += 37) {
    const page = rankedSearch(index, "ring bpm", { offset, limit: 37 });
    assert.equal(page.total, all.total);
    seen.push(...page.devices.map((d) => d.name));
  }
  assert.deepEqual(seen, all.devices.map((d) => d.name));
});

Deno.test("when nothing matches, the nearest families are suggested", () => {
  assert.equal(rankedSearch(index, "zzqx").total, 0);
  const near = nearestFamilies(index, "RING:BPMM:*:XX");
  assert.ok(
    near.length > 0 && near.some((f) => f.pattern.startsWith("RING:BPM:")),
    JSON.stringify(near),
  );
  assert.ok(near.every((f) => f.devices > 0 && f.example));
});

Deno.test("the text decides pattern or words: wildcards, /regex/ and a name piece are patterns", () => {
  assert.equal(searchModeOf("LINAC:BPM:*:X"), "pattern");
  assert.equal(searchModeOf("RING:BPM"), "pattern");
  assert.equal(searchModeOf("/^RING:BPM:0[1-3]:X$/"), "regex");
  assert.equal(searchModeOf("bpm?"), "pattern");
  assert.equal(searchModeOf("horizontal steerers"), "informal");
  assert.equal(searchModeOf("BPM"), "informal");
});

Deno.test("when no device holds every term the answer is empty, naming the term, with near misses apart", () => {
  const page = rankedSearch(index, "klystron cavity temperature", { limit: 200 });
  assert.equal(page.total, 0);
  assert.deepEqual(page.devices, []);
  assert.equal(page.unmatched.length, 1, JSON.stringify(page.unmatched));
  assert.ok(page.note?.includes(page.unmatched[0] ?? "?"), page.note);
  assert.ok(page.suggestions.length > 0 && page.suggestions.length <= 5);
  for (const d of page.suggestions) assert.equal(d.matched.length, 2, d.name);
});

Deno.test("filters apply to ranked results: writability and subsystem", () => {
  const page = rankedSearch(index, "corrector", { writable: true, subsystem: "ring", limit: 200 });
  assert.equal(page.total, 80);
  assert.ok(page.devices.every((d) => d.writable && /^RING:COR:[HV]\d+:SETPT$/.test(d.name)));
});

Deno.test("a regular expression that repeats or chooses between alternatives more than once runs on the engine that never backtracks", async () => {
  const { nameRegex, repetitions } = await import("../../src/index/linear_regex.ts");
  const r = (variable: number, group: boolean, alternatives: number) => ({
    variable,
    group,
    alternatives,
  });
  assert.deepEqual(repetitions("^RING:(BPM|COR):0[1-3]"), r(0, false, 1));
  assert.deepEqual(repetitions("^SR:.*X$"), r(1, false, 0));
  assert.deepEqual(repetitions("^(A+)+$"), r(2, true, 0));
  assert.deepEqual(repetitions("(?:.|.){3}Z"), r(0, true, 1));
  assert.deepEqual(repetitions("^(?:(A|B)|[|]|\\|)Z|Y"), r(0, false, 3));
  assert.deepEqual(repetitions("[*+?]\\d{2}\\u{41}a*?"), r(1, false, 0));
  // Run on the built-in engine, which these cannot make backtrack.
  assert.ok((await nameRegex("/^RING:(BPM|COR):0[1-3]/")) instanceof RegExp);
  assert.equal((await nameRegex("/^SR:.*X$/")).test("sr:bpm:01:x"), true);
  // The rest on the linear-time one: the same answers.
  for (
    const [text, name, expected] of [
      ["/^(A+)+$/", "AAAA", true],
      ["/^(A+)+$/", "AAAAB", false],
      ["/^ring:.*:.*:x$/", "RING:BPM:01:X", true],
      ["/^RING:.*:.*:X$/s", "ring:bpm:01:x", false],
      [`/^${".*".repeat(12)}Z$/`, "RING:BPM:01:X", false],
      // No repetition at all, but eight ways to read each of 24 characters.
      [`/^${"(?:.|.|.|.|.|.|.|.)".repeat(24)}Z$/`, "RING:BPM:01:X", false],
      ["/^RING:(BPM|COR):.*X$/", "RING:BPM:01:X", true],
    ] as const
  ) {
    const re = await nameRegex(text);
    assert.ok(!(re instanceof RegExp), text);
    assert.equal(re.test(name), expected, `${text} ${name}`);
  }
  await assert.rejects(() => nameRegex("/^(A).*\\1.*$/"), /never backtracks/);
  await assert.rejects(() => nameRegex("/[unclosed/"), SyntaxError);
});

Deno.test("a regular expression with one repetition is tested against a facility's very long name in time bounded by its length", async () => {
  const { nameRegex, UnboundedRegex } = await import("../../src/index/linear_regex.ts");
  // The built-in engine takes the square of the length: half an hour for this one name.
  const long = "SR:" + "A".repeat(1_000_000);
  assert.equal((await nameRegex("/.*Z/")).test(long), false);
  assert.equal((await nameRegex("/.*Z/")).test(long + "Z"), true);
  assert.equal((await nameRegex("/SR:A+$/")).test(long), true);
  // What only the built-in engine runs is refused in words for such a name, not run.
  const ahead = await nameRegex("/(?=SR).*Z/");
  assert.equal(ahead.test("SR:BPM:Z"), true);
  assert.throws(() => ahead.test(long), UnboundedRegex);
  assert.throws(() => ahead.test(long), /1000003 characters.*write it without them/);
  // Without a repetition every attempt is short: the built-in engine runs it, even with lookaround.
  assert.equal((await nameRegex("/(?=A)AZ/")).test(long), false);
  // A counted repetition reads its count at each start: 27 s for .{20000}Z over 200,000
  // characters. Either engine takes the count times the length: over 1,000 it is refused.
  assert.equal((await nameRegex("/.{900}Z/")).test("SR:" + "A".repeat(5_000)), false);
  assert.equal((await nameRegex("/.{900}Z/")).test("SR:" + "A".repeat(5_000) + "Z"), true);
  assert.equal((await nameRegex("/A{2}Z/")).test("SR:AAZ"), true);
  const counted = await nameRegex("/.{100000}Z/");
  assert.throws(() => counted.test(long), UnboundedRegex);
});

Deno.test("a query of hundreds of words is cut to a bounded number of terms", () => {
  const page = rankedSearch(index, Array.from({ length: 400 }, (_, i) => `word${i} bpm`).join(" "));
  assert.ok(page.terms.length <= 32);
});
