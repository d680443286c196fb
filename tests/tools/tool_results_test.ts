/** Whole tool results are kept in the session's directory, named by the call, and only there. */
import assert from "node:assert/strict";
import { sessionResultWriter } from "../../src/tools/tool_results.ts";
import { tempDir } from "../support/temp.ts";

Deno.test("a whole result is written to <session dir>/tool-results/<call id>.txt, readable only by the operator", async () => {
  await using dir = await tempDir();
  const write = sessionResultWriter(() => `${dir.path}/sessions/s1`);
  const path = await write("call_7", '{"rows":[1,2,3]}');
  assert.equal(path, `${dir.path}/sessions/s1/tool-results/call_7.txt`);
  assert.equal(await Deno.readTextFile(path), '{"rows":[1,2,3]}');
  assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
});

Deno.test("a call id the model made up cannot lead the file out of the session's directory", async () => {
  await using dir = await tempDir();
  const write = sessionResultWriter(() => `${dir.path}/sessions/s1`);
  const path = await write("../../../escaped", "x");
  assert.equal(path, `${dir.path}/sessions/s1/tool-results/_________escaped.txt`);
  const left = [];
  for await (const e of Deno.readDir(dir.path)) left.push(e.name);
  assert.deepEqual(left, ["sessions"]);
  assert.equal(await write("", "y"), `${dir.path}/sessions/s1/tool-results/call.txt`);
});
