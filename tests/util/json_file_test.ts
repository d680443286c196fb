import assert from "node:assert/strict";
import { z } from "zod";
import { CorruptFileError, parseJsonFile, readJson } from "../../src/util/json_file.ts";

const Marker = z.object({ run: z.string(), originals: z.record(z.string(), z.number()) });

Deno.test("JSON of the schema comes back typed; anything else says why in one line", () => {
  assert.deepEqual(readJson(Marker, '{"run":"a","originals":{"X":1}}'), {
    ok: true,
    value: { run: "a", originals: { X: 1 } },
  });
  const notJson = readJson(Marker, "run=a\nmore");
  assert.equal(notJson.ok, false);
  assert.match(!notJson.ok ? notJson.why : "", /^not JSON: [^\n]+$/);
  assert.deepEqual(readJson(Marker, '{"run":"a","originals":{"X":"1"}}'), {
    ok: false,
    why: "originals.X: expected number, got string",
  });
  assert.deepEqual(readJson(Marker, "[]"), { ok: false, why: "expected object, got array" });
  assert.deepEqual(readJson(Marker, '{"originals":{}}'), {
    ok: false,
    why: "run: expected string, got nothing",
  });
});

Deno.test("a file that is not what the program wrote throws one line: where, what it is not, why, what to do", () => {
  assert.throws(
    () => parseJsonFile(Marker, "{}", { where: "x.json", what: "a marker", fix: "remove it" }),
    (e: unknown) =>
      e instanceof CorruptFileError &&
      e.message ===
        "x.json: not a marker (run: expected string, got nothing (and 1 more)); remove it",
  );
});
