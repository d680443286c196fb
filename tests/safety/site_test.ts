/** The site kill switch: each file can only take writes away. */
import assert from "node:assert/strict";
import { readSiteSwitches, SITE_FILE, SITE_FILE_ENV } from "../../src/safety/site.ts";
import { tempDir } from "../support/temp.ts";

async function switches(text: string | undefined) {
  await using dir = await tempDir();
  const file = `${dir.path}/site.toml`;
  if (text !== undefined) await Deno.writeTextFile(file, text);
  const all = await readSiteSwitches((n) => n === SITE_FILE_ENV ? file : undefined);
  // The machine's own /etc file, if any, comes first; the named one is last.
  return all.filter((s) => s.file !== SITE_FILE).map((s) => ({ ...s, file: "site.toml" }));
}

Deno.test("a site file's writes_enabled = false turns writes off, with its reason", async () => {
  assert.deepEqual(await switches('writes_enabled = false\nreason = "MD shift"\n'), [
    { file: "site.toml", writesEnabled: false, error: "writes_enabled = false: MD shift" },
  ]);
});

Deno.test("a site file that allows writes is recorded as allowing them", async () => {
  assert.deepEqual(await switches("writes_enabled = true\n"), [
    { file: "site.toml", writesEnabled: true },
  ]);
});

Deno.test("a site file named but missing, malformed, mistyped or with another key counts as off", async () => {
  for (
    const [text, why] of [
      [undefined, /cannot read the site file/],
      ["writes_enabled = ", /not valid TOML/],
      ['writes_enabled = "yes"', /writes_enabled must be true or false/],
      ["writes_enabled = true\nallow_all = true", /unknown key allow_all/],
    ] as const
  ) {
    const [s] = await switches(text);
    assert.equal(s?.writesEnabled, false, String(text));
    assert.match(s?.error ?? "", why);
  }
});
