import assert from "node:assert/strict";
import { LimitsError, loadLimits, parseLimits } from "../../src/safety/limits.ts";
import { LIMITS_FILE } from "../plan/fixture.ts";

Deno.test("the most specific entry wins: exact name, then the most literal characters", () => {
  const t = parseLimits(
    `[limits."LINAC:*"]
max = 1
[limits."LINAC:COR:*:SETPT"]
max = 2
[limits."LINAC:COR:H01:SETPT"]
max = 3
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
    (e: unknown) => e instanceof LimitsError && /^l\.toml: limits\.A\.max: /.test(e.message),
  );
  assert.throws(
    () => parseLimits('[limits."A"]\nmin = 2\nmax = 1\n', "l.toml"),
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
