/**
 * The packages directory's lock file as a hostile or damaged file: what is
 * not a Pyodide lock file is one line naming it, an entry of the wrong shape
 * is passed over, and a lock file past the cap is refused before it is read.
 */
import assert from "node:assert/strict";
import { LocalPackages, MAX_LOCK_BYTES } from "../../src/sandbox/packages.ts";
import { tempDir } from "../support/temp.ts";

async function scanned(lock: string | Uint8Array | number, wheels: string[] = []) {
  const dir = await tempDir();
  const path = `${dir.path}/pyodide-lock.json`;
  if (typeof lock === "number") {
    using f = await Deno.open(path, { create: true, write: true });
    await f.truncate(lock);
  } else if (typeof lock === "string") await Deno.writeTextFile(path, lock);
  else await Deno.writeFile(path, lock);
  for (const w of wheels) await Deno.writeFile(`${dir.path}/${w}`, new Uint8Array());
  return { dir, path };
}

Deno.test("a lock file that is not JSON, or not a lock file, is one line naming it", async () => {
  for (const text of ["not json", "null", "[]", '{"packages": 5}', "7"]) {
    const { dir, path } = await scanned(text);
    await using _ = dir;
    assert.throws(
      () => LocalPackages.scan(dir.path),
      (e: Error) =>
        e.message.startsWith(`${path}: not a Pyodide lock file (`) && !e.message.includes("\n"),
      text,
    );
  }
});

Deno.test("lock entries of the wrong shape are passed over, the good ones kept", async () => {
  const lock = {
    packages: {
      broken: null,
      odd: { file_name: 7, imports: "x", depends: [1, null] },
      good: { name: "good", file_name: "good-1.0-py3-none-any.whl", imports: ["good", 3] },
      deps: { file_name: "deps-1.0-py3-none-any.whl", imports: {}, depends: "good" },
    },
  };
  const { dir } = await scanned(JSON.stringify(lock), [
    "good-1.0-py3-none-any.whl",
    "deps-1.0-py3-none-any.whl",
  ]);
  await using _ = dir;
  assert.deepEqual(LocalPackages.scan(dir.path).names(), ["deps", "good"]);
});

Deno.test("a lock file past the cap is refused before it is read", async () => {
  const { dir, path } = await scanned(MAX_LOCK_BYTES + 1);
  await using _ = dir;
  let read = false;
  assert.throws(() =>
    LocalPackages.scan(dir.path, (p) => {
      read = true;
      return Deno.readTextFileSync(p);
    }), /./);
  assert.equal(read, true, "the injected reader decides");
  assert.throws(() => LocalPackages.scan(dir.path), new RegExp(`^Error: ${path}: larger than`));
});
