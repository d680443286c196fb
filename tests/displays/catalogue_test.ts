/**
 * The displays catalogue: which display a request means, which macros it may
 * carry, and the exact argv each kind of launcher gets.
 */
import assert from "node:assert/strict";
import { ConfigSchema } from "../../src/config/schema.ts";
import { buildArgv, DisplayCatalogue, DisplayError } from "../../src/displays/catalogue.ts";

function catalogue(toml: Record<string, unknown> = {}) {
  const config = ConfigSchema.parse({
    displays: [
      {
        name: "orbit",
        file: "displays/orbit.bob",
        description: "Ring orbit",
        keywords: ["bpm", "ring"],
        macros: { PLANE: { values: ["X", "Y"], default: "X" }, CELL: { pattern: "[0-9]{2}" } },
      },
      { name: "ring-vacuum", file: "vac.edl", keywords: ["vacuum", "ring"] },
      { name: "linac-vacuum", file: "lvac.ui", keywords: ["vacuum", "linac"] },
      { name: "archiver", url: "https://archiver.example/viewer", macros: { PV: {} } },
    ],
    ...toml,
  });
  return DisplayCatalogue.of(config, "/site/config", "/home/op");
}

Deno.test("a display is found by its name, or by keywords that match it alone", () => {
  const c = catalogue();
  assert.equal(c.find("orbit").name, "orbit");
  assert.equal(c.find("ORBIT").name, "orbit");
  assert.equal(c.find("bpm").name, "orbit");
  assert.equal(c.find("linac vacuum").name, "linac-vacuum");
});

Deno.test("an ambiguous keyword lists the displays it matches instead of picking one", () => {
  assert.throws(
    () => catalogue().find("vacuum"),
    (e: Error) =>
      e instanceof DisplayError && /matches 2 displays: ring-vacuum, linac-vacuum; give one name/
        .test(e.message),
  );
  assert.throws(() => catalogue().find("magnet"), /no display matches "magnet"; displays: orbit/);
});

Deno.test("the kind follows the file's extension or the URL, and files resolve beside the config", () => {
  const c = catalogue();
  assert.deepEqual(
    c.displays.map((d) => [d.kind, d.target]),
    [
      ["phoebus", "/site/config/displays/orbit.bob"],
      ["edm", "/site/config/vac.edl"],
      ["caqtdm", "/site/config/lvac.ui"],
      ["web", "https://archiver.example/viewer"],
    ],
  );
  assert.throws(() => ConfigSchema.parse({ displays: [{ name: "x", file: "x.txt" }] }), /kind/);
  assert.throws(() => ConfigSchema.parse({ displays: [{ name: "x" }] }), /file or url/);
});

Deno.test("each default launcher gets its documented command line, macros in its own form", () => {
  const c = catalogue();
  const [orbit, ringVac, linacVac, archiver] = c.displays;
  assert.deepEqual(c.plan(orbit!, { PLANE: "Y", CELL: "03" }).argv, [
    "phoebus",
    "-resource",
    "/site/config/displays/orbit.bob?PLANE=Y&CELL=03",
  ]);
  assert.deepEqual(c.plan(ringVac!, {}).argv, ["edm", "-x", "/site/config/vac.edl"]);
  assert.deepEqual(c.plan(linacVac!, {}).argv, ["caQtDM", "/site/config/lvac.ui"]);
  assert.deepEqual(c.plan(archiver!, { PV: "RF:AMPL:RDBK" }).argv, [
    "xdg-open",
    "https://archiver.example/viewer?PV=RF%3AAMPL%3ARDBK",
  ]);
  const edm = {
    command: ["edm", "-x", "-m", "{macros}", "{file}"],
    macro_format: "comma" as const,
  };
  assert.deepEqual(buildArgv(edm, "/d/v.edl", { S: "01", P: "X" }), [
    "edm",
    "-x",
    "-m",
    "S=01,P=X",
    "/d/v.edl",
  ]);
});

Deno.test("defaults fill macros the request leaves out; a required macro missing is named", () => {
  const c = catalogue();
  assert.throws(() => c.plan(c.find("orbit"), {}), /needs macro CELL \(matching \[0-9\]\{2\}\)/);
  assert.deepEqual(c.plan(c.find("orbit"), { CELL: "07" }).macros, { PLANE: "X", CELL: "07" });
});

Deno.test("a macro the catalogue does not list, or a value outside its values or pattern, is refused in one line", () => {
  const c = catalogue();
  const orbit = c.find("orbit");
  const refusals: [Record<string, string>, RegExp][] = [
    [{ CELL: "01", SECTOR: "3" }, /^display "orbit" has no macro SECTOR; its macros: PLANE, CELL$/],
    [{ CELL: "01", PLANE: "Z" }, /^macro PLANE="Z" is not allowed for "orbit" \(one of X, Y\)$/],
    [{ CELL: "1; rm -rf ~" }, /^macro CELL="1; rm -rf ~" is not allowed/],
    [{ CELL: "0\n1" }, /control character/],
    [{ CELL: "01", PLANE: "X\x1b[2J" }, /control character/],
  ];
  for (const [macros, re] of refusals) {
    assert.throws(() => c.plan(orbit, macros), (e: Error) => {
      assert.ok(e instanceof DisplayError);
      assert.match(e.message, re);
      assert.ok(!e.message.includes("\n"), "one line");
      return true;
    });
  }
  // The default pattern: names, numbers and PV-like text only.
  assert.throws(() => c.plan(c.find("archiver"), { PV: "$(reboot)" }), /not allowed/);
});

Deno.test("a value that would split an EDM-style macro list is refused", () => {
  const c = catalogue({
    displays: [{ name: "v", file: "v.edl", macros: { A: { pattern: ".*" } } }],
  });
  assert.throws(() => c.plan(c.find("v"), { A: "1,B=2" }), /holds , or =/);
});

Deno.test("a macro value that spells a placeholder is passed as written, not filled", () => {
  const launcher = { command: ["x", "{macros}", "{file}"], macro_format: "comma" as const };
  assert.deepEqual(buildArgv(launcher, "/f", { A: "{file}" }), ["x", "A={file}", "/f"]);
});
