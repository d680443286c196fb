/** Whole tool results are kept in the session's directory, named by the call, and only there. */
import assert from "node:assert/strict";
import { sessionResultWriter } from "../../src/tools/tool_results.ts";
import { tempDir } from "../support/temp.ts";
import { canMount, mountTmpfs } from "../support/full_disk.ts";

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

Deno.test("a call id used again (a later turn, or one that reads the same as a file name) never overwrites an earlier result", async () => {
  await using dir = await tempDir();
  const write = sessionResultWriter(() => `${dir.path}/sessions/s1`);
  const first = await write("call_0", "turn one");
  const second = await write("call_0", "turn two");
  const third = await write("call.0", "another id, the same file name");
  assert.deepEqual(
    [first, second, third].map((p) => p.slice(p.lastIndexOf("/") + 1)),
    ["call_0.txt", "call_0-2.txt", "call_0-3.txt"],
  );
  assert.equal(await Deno.readTextFile(first), "turn one");
  assert.equal(await Deno.readTextFile(second), "turn two");
  assert.equal(await Deno.readTextFile(third), "another id, the same file name");
});

Deno.test("a session keeps its newest whole results within a count and a size; one too large is not kept", async () => {
  await using dir = await tempDir();
  const write = sessionResultWriter(() => `${dir.path}/sessions/s1`, {
    files: 5,
    bytes: 700,
    fileBytes: 300,
  });
  for (let i = 0; i < 8; i++) await write(`c${i}`, "x".repeat(100));
  const names = () =>
    [...Deno.readDirSync(`${dir.path}/sessions/s1/tool-results`)].map((e) => e.name).sort();
  assert.deepEqual(names(), ["c3.txt", "c4.txt", "c5.txt", "c6.txt", "c7.txt"]);
  await write("big1", "y".repeat(290));
  await write("big2", "y".repeat(290));
  // 700 bytes at most: the oldest go first.
  assert.deepEqual(names(), ["big1.txt", "big2.txt", "c7.txt"]);
  await assert.rejects(() => write("huge", "z".repeat(301)), /larger than 300 bytes: not kept/);
  assert.ok(!names().includes("huge.txt"));
});

Deno.test({
  name: "on a full disk a whole result is not kept, and no part of it is left behind",
  ignore: !(await canMount()),
  fn: async () => {
    await using dir = await tempDir();
    const session = `${dir.path}/sessions/s1`;
    const unmount = await mountTmpfs(session, "64k");
    try {
      const write = sessionResultWriter(() => session);
      await assert.rejects(() => write("c1", "x".repeat(200_000)), /No space left on device/);
      const left = [...Deno.readDirSync(`${session}/tool-results`)].map((e) => e.name);
      assert.deepEqual(left, [], "a part of the result was left");
    } finally {
      await unmount();
    }
  },
});
