/** The site kill switch: each file can only take writes away. */
import assert from "node:assert/strict";
import {
  readConfigSwitch,
  readSiteSwitches,
  SITE_FILE,
  SITE_FILE_ENV,
} from "../../src/safety/site.ts";
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
      // A comma in a host would read as two hosts in the network grant.
      [
        '[audit_forward]\nhttp_url = "http://logs.example,other.example:8080/x"',
        /audit_forward\.http_url must be an http\(s\) URL/,
      ],
    ] as const
  ) {
    const [s] = await switches(text);
    assert.equal(s?.writesEnabled, false, String(text));
    assert.match(s?.error ?? "", why);
  }
});

Deno.test("a site file that is a FIFO, a device, a directory or over 64 KiB counts as off, at once and in one line", async () => {
  await using dir = await tempDir();
  const fifo = `${dir.path}/fifo.toml`;
  const mk = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.ok(mk.success, "mkfifo");
  const big = `${dir.path}/big.toml`;
  await Deno.writeTextFile(big, `reason = "${"x".repeat(70 * 1024)}"\nwrites_enabled = true\n`);
  for (
    const [file, why] of [
      [fifo, /cannot read the site file \(is a FIFO \(named pipe\), not a regular file\)/],
      ["/dev/zero", /cannot read the site file \(is a character device, not a regular file\)/],
      [dir.path, /cannot read the site file \(is a directory, not a regular file\)/],
      [big, /cannot read the site file \(larger than 64 KiB\)/],
    ] as const
  ) {
    const all = await readSiteSwitches((n) => n === SITE_FILE_ENV ? file : undefined);
    const s = all.at(-1);
    assert.equal(s?.file, file);
    assert.equal(s?.writesEnabled, false, file);
    assert.match(s?.error ?? "", why);
    assert.doesNotMatch(s?.error ?? "", /\n/);
  }
});

Deno.test("the config file's own switch is read again: turned off, gone or damaged, writes are off", async () => {
  await using dir = await tempDir();
  const config = `${dir.path}/config.toml`;
  await Deno.writeTextFile(config, "[safety]\nwrites_enabled = true\n");
  assert.deepEqual(await readConfigSwitch(config), { writesEnabled: true });
  await Deno.writeTextFile(config, "[safety]\nwrites_enabled = false\n");
  assert.deepEqual(await readConfigSwitch(config), { writesEnabled: false });
  await Deno.writeTextFile(config, "[safety\n");
  assert.match((await readConfigSwitch(config)).error ?? "", /config\.toml: no longer valid TOML/);
  await Deno.remove(config);
  const gone = await readConfigSwitch(config);
  assert.equal(gone.writesEnabled, false);
  assert.match(gone.error ?? "", /config\.toml: cannot read the config file \(it does not exist\)/);
  // No config file: built-in defaults, which allow writes.
  assert.deepEqual(await readConfigSwitch(undefined), { writesEnabled: true });
});

Deno.test("the switch is read again from every file of the chain: the highest that sets it decides, any one gone is off", async () => {
  await using dir = await tempDir();
  const site = `${dir.path}/site.toml`, own = `${dir.path}/own.toml`;
  await Deno.writeTextFile(site, "[safety]\nwrites_enabled = true\n");
  await Deno.writeTextFile(own, '[ui]\ncolor = "never"\n');
  assert.deepEqual(await readConfigSwitch([site, own]), { writesEnabled: true });
  await Deno.writeTextFile(site, "[safety]\nwrites_enabled = false\n");
  assert.deepEqual(await readConfigSwitch([site, own]), { writesEnabled: false });
  // As in the merged config: a file above that sets it decides.
  await Deno.writeTextFile(own, "[safety]\nwrites_enabled = true\n");
  assert.deepEqual(await readConfigSwitch([site, own]), { writesEnabled: true });
  await Deno.remove(site);
  const gone = await readConfigSwitch([site, own]);
  assert.equal(gone.writesEnabled, false);
  assert.match(gone.error ?? "", /site\.toml: cannot read the config file/);
});
