import assert from "node:assert/strict";
import { buildIndex, rankedSearch } from "../../src/index/mod.ts";
import { loadSynonyms, parseSynonyms } from "../../src/index/synonyms.ts";
import { simulatorIndexSource } from "../../src/adapters/simulator/index_source.ts";
import { defaultFacility } from "../../src/facility/facility.ts";

Deno.test("a facility's synonym file adds its own words to the built-in table", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const site = `${dir}/site.toml`;
    await Deno.writeTextFile(
      site,
      '[terms]\nbpm = ["wobbler"]\n[related]\nhotspot = ["temp"]\n',
    );
    const source = simulatorIndexSource(defaultFacility());
    const plain = await buildIndex(source, await loadSynonyms());
    const extended = await buildIndex(source, await loadSynonyms(site));
    const page = rankedSearch(extended, "linac wobblers", { limit: 100 });
    // The 60 linac BPM signals first; the linac-to-booster line's BPMs may follow, ranked lower.
    assert.ok(page.total >= 60, String(page.total));
    assert.ok(page.devices.slice(0, 60).every((d) => d.name.startsWith("LINAC:BPM:")));
    assert.ok(page.devices.slice(60).every((d) => d.name.startsWith("LTB:BPM:")));
    const before = rankedSearch(plain, "linac wobblers", { limit: 100 });
    assert.ok(
      before.unmatched.length > 0 || before.total !== page.total,
      "the word means nothing without the site file",
    );
    assert.ok(
      rankedSearch(extended, "hotspot klystron").devices.every((d) => d.name.endsWith(":TEMP")),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a malformed synonym file is refused with its path and what to fix", () => {
  assert.throws(
    () => parseSynonyms("[terms]\nbpm = 3\n", "site.toml"),
    /^Error: site\.toml: terms\.bpm must be a list of strings$/,
  );
  assert.throws(() => parseSynonyms("[terms\n", "site.toml"), /site\.toml: not valid TOML/);
});
