/**
 * The limits see the name the wire writes: an alias gets exactly what its
 * canonical name gets (or nothing, when it is refused), an EPICS field is
 * opened only by an entry naming it and closed with its record, entries and
 * readbacks must be names the control system can write.
 */
import assert from "node:assert/strict";
import { LimitsError, nameMatchingFor, parseLimits } from "../../src/safety/limits.ts";

const B = "min = -2\nmax = 2\nmax_step = 0.5\n";
const EPICS = nameMatchingFor("epics");
const TANGO = nameMatchingFor("tango", { tangoHost: "tg:10000" });

function loadError(text: string, matching = EPICS): string {
  try {
    parseLimits(text, "l.toml", matching);
  } catch (e) {
    if (e instanceof LimitsError) return e.message;
    throw e;
  }
  assert.fail(`loaded:\n${text}`);
}

Deno.test("an alias gets what its canonical name gets, and a refused name gets nothing", () => {
  const limits = parseLimits(
    `[limits."*"]\n${B}catch_all = true\n[limits."SR:COR:H01:SETPT"]\nwritable = false\n`,
    "l.toml",
    EPICS,
  );
  assert.equal(limits.lookup("SR:COR:H01:SETPT")?.writable, false);
  assert.equal(limits.lookup("SR:COR:H01:SETPT.VAL")?.writable, false);
  for (
    const alias of ["pva://SR:COR:H01:SETPT", "ca://SR:COR:H01:SETPT", "SR:COR:H01:SETPT.VAL$"]
  ) {
    assert.equal(limits.lookup(alias), undefined, alias);
  }
  assert.equal(limits.lookup("SR:COR:H02:SETPT")?.pattern, "*");
});

Deno.test("an EPICS field is opened only by an entry that names it, and closed with its record", () => {
  const limits = parseLimits(
    `[limits."*"]\n${B}catch_all = true\n` +
      `[limits."RING:DIPOLE:CURRENT"]\nwritable = false\n` +
      `[limits."RING:Q1:CURRENT.DRVH"]\nmin = 0\nmax = 500\nmax_step = 10\n` +
      `[limits."RING:Q?:CURRENT.HIHI"]\nmin = 0\nmax = 500\nmax_step = 10\n`,
    "l.toml",
    EPICS,
  );
  // The catch-all opens the records it matches, never their fields.
  assert.equal(limits.lookup("RING:Q2:CURRENT")?.pattern, "*");
  assert.equal(limits.lookup("RING:Q2:CURRENT.PROC"), undefined);
  assert.equal(limits.lookup("RING:Q2:CURRENT.DRVH"), undefined);
  assert.equal(limits.lookup("RING:Q1:CURRENT.DRVH")?.pattern, "RING:Q1:CURRENT.DRVH");
  assert.equal(limits.lookup("RING:Q3:CURRENT.HIHI")?.pattern, "RING:Q?:CURRENT.HIHI");
  // A denied record's fields are denied, whatever names them.
  for (const f of ["DRVH", "PROC", "DISV", "SIMM"]) {
    assert.equal(limits.lookup(`RING:DIPOLE:CURRENT.${f}`)?.writable, false, f);
  }
});

Deno.test("a limits entry or readback that no canonical name can be is a load error naming it", () => {
  assert.match(
    loadError(`[limits."SR:COR:H01:SETPT.VAL"]\nwritable = false\n`),
    /^l\.toml:1: limits\."SR:COR:H01:SETPT\.VAL": .* is the record itself; write SR:COR:H01:SETPT$/,
  );
  assert.match(
    loadError(`[limits."pva://SR:COR:H01:SETPT"]\nwritable = false\n`),
    /protocol prefix/,
  );
  assert.match(
    loadError(`[limits."sys/tg_test/%31/ampli"]\nwritable = false\n`, TANGO),
    /percent escape/,
  );
  // A readback that is the setpoint by another name is the setpoint.
  assert.match(
    loadError(`[limits."SR:COR:H01:SETPT"]\n${B}readback = "SR:COR:H01:SETPT.VAL"\n`),
    /readback: a device cannot be its own readback/,
  );
  assert.match(
    loadError(`[limits."SR:COR:H01:SETPT"]\n${B}readback = "pva://SR:COR:H01:RDBK"\n`),
    /readback: "pva:\/\/SR:COR:H01:RDBK": the protocol prefix/,
  );
  for (const rb of ["SYS/TG_TEST/1/AMPLI", "tango://tg:10000/sys/tg_test/1/ampli"]) {
    assert.match(
      loadError(`[limits."sys/tg_test/1/ampli"]\n${B}readback = "${rb}"\n`, TANGO),
      /readback: a device cannot be its own readback/,
      rb,
    );
  }
});

Deno.test("a readback is kept as the control system reads it", () => {
  const limits = parseLimits(
    `[limits."sys/tg_test/1/ampli"]\n${B}readback = "SYS/TG_TEST/1/Wave"\n`,
    "l.toml",
    TANGO,
  );
  assert.equal(limits.lookup("sys/tg_test/1/ampli")?.readback, "sys/tg_test/1/wave");
});
