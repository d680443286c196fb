import assert from "node:assert/strict";
import {
  LimitsError,
  LimitsTable,
  loadLimits,
  nameMatchingFor,
  parseLimits,
} from "../../src/safety/limits.ts";
import { LIMITS_FILE } from "../plan/fixture.ts";

Deno.test("the most specific entry wins: exact name, then the most literal characters", () => {
  const t = parseLimits(
    `[limits."LINAC:*"]
min = 0
max = 1
max_step = 1
catch_all = true
[limits."LINAC:COR:*:SETPT"]
min = 0
max = 2
max_step = 1
[limits."LINAC:COR:H01:SETPT"]
min = 0
max = 3
max_step = 1
`,
    "l.toml",
  );
  assert.equal(t.lookup("LINAC:COR:H01:SETPT")?.max, 3);
  assert.equal(t.lookup("LINAC:COR:H02:SETPT")?.max, 2);
  assert.equal(t.lookup("LINAC:QUAD:01:CURRENT")?.max, 1);
  assert.equal(t.lookup("RING:Q1:CURRENT"), undefined);
  assert.equal(t.lookup("LINAC:COR:H02:SETPT")?.pattern, "LINAC:COR:*:SETPT");
});

Deno.test("bad limits files are refused with the file and key", () => {
  assert.throws(
    () => parseLimits('[limits."A"]\nmax = "high"\n', "l.toml"),
    (e: unknown) => e instanceof LimitsError && /^l\.toml:1: limits\."A"\.max: /.test(e.message),
  );
  assert.throws(
    () => parseLimits('[limits."A"]\nmin = 2\nmax = 1\nmax_step = 1\n', "l.toml"),
    /min 2 is above max 1/,
  );
  assert.throws(() => parseLimits('[limits."A"]\nmaxstep = 1\n', "l.toml"), /Unrecognized key/);
  assert.throws(
    () => parseLimits("[limits\n", "l.toml"),
    /^LimitsError: l\.toml:1:\d+: invalid TOML/,
  );
});

Deno.test("a missing limits file means nothing may be written", async () => {
  assert.equal((await loadLimits("/nonexistent/limits.toml")).size, 0);
});

Deno.test("a limits file any user may write is refused; one its group may write is read", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/limits.toml`;
    await Deno.writeTextFile(path, '[limits."A"]\nmin = 0\nmax = 1\nmax_step = 1\n');
    await Deno.chmod(path, 0o646);
    await assert.rejects(
      () => loadLimits(path),
      (e: Error) =>
        e instanceof LimitsError &&
        e.message === `${path}: any user may write it (mode 646), so it bounds nothing; ` +
            "make it writable by its owner only (chmod o-w)",
    );
    await Deno.chmod(path, 0o664);
    assert.equal((await loadLimits(path)).size, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the shipped limits file is valid and covers the seed examples", async () => {
  const t = await loadLimits(LIMITS_FILE);
  for (
    const d of [
      "LINAC:COR:H01:SETPT",
      "RF:PHASE:SETPT",
      "RING:Q1:CURRENT",
      "RING:Q5:CURRENT",
      "LINAC:QUAD:01:CURRENT",
    ]
  ) {
    assert.ok(t.lookup(d)?.max !== undefined, d);
  }
  assert.equal(t.lookup("RING:DIPOLE:CURRENT")?.writable, false);
});

const B = "min = -1\nmax = 1\nmax_step = 0.5\n";

/** The LimitsError a limits text raises (fails the test when it loads). */
function loadError(text: string): string {
  try {
    parseLimits(text, "l.toml");
  } catch (e) {
    if (e instanceof LimitsError) return e.message;
    throw e;
  }
  assert.fail(`loaded:\n${text}`);
}

Deno.test("entries differing only in letter case are refused with both lines, in every TOML form", () => {
  const forms: [string, string][] = [
    [`[limits."SR:MODE"]\nwritable = false\n\n[limits."sr:mode"]\n${B}`, "1.*line 4"],
    [
      `[limits]\n"SR:MODE" = { writable = false }\n\n"Sr:Mode" = { min = 0, max = 1, max_step = 1 }\n`,
      "2.*line 4",
    ],
    [
      `limits."SR:MODE".writable = false\n\nlimits.'sR:MODE' = { min = 0, max = 1, max_step = 1 }\n`,
      "1.*line 3",
    ],
    [
      `limits = { "SR:MODE" = { writable = false },\n  "\\u0073r:mode" = { values = ["On"] } }\n`,
      "1.*line 2",
    ],
  ];
  for (const [text, lines] of forms) {
    const m = loadError(text);
    assert.match(m, new RegExp(`line ${lines}\\).*differ only in letter case`), m);
  }
  assert.match(loadError(`[limits."A:B:*:X"]\n${B}[limits."a:b:*:x"]\n${B}`), /line 1\).*line 5\)/);
});

Deno.test("a deny is final: no entry of any specificity or order reopens it", () => {
  const deny = `[limits."RF:STN:*:VOLT:SETPT"]\nwritable = false\n`;
  const allows = [
    `[limits."RF:STN:?:VOLT:SETPT"]\n${B}`,
    `[limits."RF:STN:1*:VOLT:SETPT"]\n${B}`,
    `[limits."RF:STN:1:VOLT:SETPT"]\n${B}`,
  ];
  for (const allow of allows) {
    for (const text of [deny + allow, allow + deny]) {
      assert.equal(
        parseLimits(text, "l.toml").lookup("RF:STN:1:VOLT:SETPT")?.writable,
        false,
        text,
      );
    }
  }
});

Deno.test("equally specific allows intersect, whatever their order", () => {
  const a = `[limits."SR:COR:*:SETPT"]\nmin = -2\nmax = 1\nmax_step = 0.5\ntolerance = 0.1\n`;
  const b = `[limits."SR:*:H01:SETPT"]\nmin = -1\nmax = 2\nmax_step = 0.2\ncatch_all = true\n`;
  const looked = [a + b, b + a].map((t) => parseLimits(t, "l.toml").lookup("SR:COR:H01:SETPT"));
  assert.deepEqual(looked[0], looked[1]);
  assert.deepEqual(looked[0], {
    pattern: '"SR:*:H01:SETPT" and "SR:COR:*:SETPT"',
    min: -1,
    max: 1,
    max_step: 0.2,
    tolerance: 0.1,
  });
  const v1 = `[limits."T:A?"]\nvalues = ["X", "Y"]\n[limits."T:?B"]\nvalues = ["Y", "Z"]\n`;
  assert.deepEqual(parseLimits(v1, "l.toml").lookup("T:AB")?.values, ["Y"]);
});

Deno.test("an entry that makes devices writable must bound them, or say unbounded = true", () => {
  assert.match(
    loadError(`[limits."A:B"]\ntolerance = 0.1\n`),
    /^l\.toml:1: .*without min, max, max_step/,
  );
  assert.match(loadError(`[limits."A:B"]\nmin = 0\nmax = 1\n`), /without max_step; give min/);
  assert.match(loadError(`[limits."A:B"]\nwritable = true\n`), /unbounded = true on purpose/);
  assert.match(loadError(`[limits."A:B"]\n`), /without min, max, max_step/);
  assert.equal(
    parseLimits(`[limits."A:B"]\nunbounded = true\n`, "l.toml").lookup("A:B")?.unbounded,
    true,
  );
  assert.equal(parseLimits(`[limits."A:B"]\nwritable = false\n`, "l.toml").size, 1);
});

Deno.test("a catch-all pattern needs catch_all = true", () => {
  const wide = ["*", "*:SETPT", "?R:COR:H01", "SR*", "SR:*", "SR:*:*", "sr/*/*"];
  // A wildcard across the family, the part that tells a subsystem's devices apart.
  const families = ["BTS:*T", "SR:*:H01:SETPT", "RING:?:CURRENT", "RING:Q*:CURRENT", "sr/*/c01/x"];
  for (const p of [...wide, ...families]) {
    assert.match(loadError(`[limits."${p}"]\n${B}`), /catch_all = true on purpose/, p);
    assert.equal(parseLimits(`[limits."${p}"]\n${B}catch_all = true\n`, "l.toml").size, 1);
  }
  for (const p of ["SR:COR:*", "RING:Q?:CURRENT", "sr/cor/*", "LINAC:COR:*:SETPT", "SR:MOD?"]) {
    assert.equal(parseLimits(`[limits."${p}"]\n${B}`, "l.toml").size, 1, p);
  }
  assert.equal(parseLimits(`[limits."*"]\nwritable = false\n`, "l.toml").size, 1);
});

Deno.test("names match with the control system's case sensitivity, folding ASCII letters only", () => {
  const text = `[limits."SR:MODE"]\nvalues = ["On"]\n[limits."SR:COR:*:SETPT"]\n${B}`;
  const epics = parseLimits(text, "l.toml", nameMatchingFor("epics"));
  const tango = parseLimits(
    `[limits."SR/PS/Q1/Mode"]\nvalues = ["On"]\n[limits."SR/COR/*/SETPT"]\n${B}`,
    "l.toml",
    nameMatchingFor("tango"),
  );
  assert.equal(epics.lookup("sr:mode"), undefined);
  assert.equal(epics.lookup("SR:cor:H01:SETPT"), undefined);
  assert.equal(tango.lookup("sr/ps/q1/mode")?.pattern, "SR/PS/Q1/Mode");
  assert.equal(tango.lookup("sr/cor/h01/setpt")?.pattern, "SR/COR/*/SETPT");
  for (const d of ["ſR:MODE", "SR:MODE\u212a", "SR:COR:H01:SETPT\u0131", "ＳR:MODE"]) {
    assert.equal(epics.lookup(d), undefined, d);
  }
  for (const d of ["ſr/ps/q1/mode", "sr/ps/q1/mode\u212a", "ｓr/cor/h01/setpt"]) {
    assert.equal(tango.lookup(d), undefined, d);
  }
  assert.equal(nameMatchingFor("simulator").caseSensitive, true);
});

Deno.test("a name that is not printable ASCII is refused with its code point", () => {
  assert.match(loadError(`[limits."ſR:MODE"]\nwritable = false\n`), /^l\.toml:1: .*U\+017F/);
  assert.match(loadError(`[limits."SR:MODE\\u200b"]\n${B}`), /U\+200B/);
  assert.match(
    loadError(`\n[limits."A:B"]\nmin = -inf\nmax = 1\nmax_step = 1\n`),
    /^l\.toml:2: limits\."A:B"\.min: /,
  );
});

Deno.test("a table built directly refuses two exact entries for one device on a case-blind system", () => {
  assert.throws(
    () =>
      new LimitsTable({ "A:B": { writable: false }, "a:b": { unbounded: true } }, {
        caseSensitive: false,
      }),
    /limits\."A:B" and limits\."a:b" name one device/,
  );
});

Deno.test("collision lines skip comments, values and multi-line strings, and survive CRLF", () => {
  const text = [
    '# [limits."sr:mode"] is not here',
    '[limits."SR:MODE:LIST"]',
    'values = ["SR:MODE", "sr:mode"]',
    '[limits."sr:mode"]',
    "writable = false",
    "[limits.'SR:MODE']",
    'values = ["On"]',
  ].join("\r\n");
  assert.match(loadError(text), /limits\."sr:mode" \(line 4\) and limits\."SR:MODE" \(line 6\)/);
  const multi =
    `[limits."A:B"]\nvalues = ["""\n[limits."a:b"]\n"""]\n[limits."a:B"]\nvalues = ["x"]\n`;
  assert.match(loadError(multi), /limits\."A:B" \(line 1\) and limits\."a:B" \(line 5\)/);
});
