/** The capped body reader: exact bytes, and JSON array pages read element by element. */
import assert from "node:assert/strict";
import { readCapped, readJsonArrayPrefix } from "../../src/adapters/capped_body.ts";
import type { HttpService } from "../../src/adapters/http.ts";

const SVC: HttpService = { label: "ChannelFinder", base: "http://cf", timeoutMs: 1000 };

/** A response whose body arrives in the given pieces. */
function inPieces(pieces: string[]): Response {
  const enc = new TextEncoder();
  let i = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(c) {
        const p = pieces[i++];
        if (p === undefined) c.close();
        else c.enqueue(enc.encode(p));
      },
    }),
  );
}

const TRICKY = [
  { name: "A", properties: [{ name: "d", value: 'a "quoted", ] } [ { value' }] },
  'a string with \\ backslash \\" and ,]',
  [1, [2, [3]], {}],
  { name: "é ünïcødé ✓", n: -1.5e3, t: true, x: null },
  42,
  "",
  { name: "last" },
];

Deno.test("array elements are found across every split of the body, strings and nesting included", async () => {
  const text = ` \n[ ${TRICKY.map((x) => JSON.stringify(x)).join(" ,\n ")} ]\n`;
  for (const max of [0, 1, 3, TRICKY.length, TRICKY.length + 5]) {
    for (let cut = 0; cut <= text.length; cut += 3) {
      const res = inPieces([text.slice(0, cut), text.slice(cut)].filter((p) => p));
      const got = await readJsonArrayPrefix(res, SVC, "http://cf/channels", max);
      assert.deepEqual(got.items, TRICKY.slice(0, max), `max ${max}, cut at ${cut}`);
      assert.equal(got.more, max < TRICKY.length, `max ${max}, cut at ${cut}`);
    }
  }
});

Deno.test("one character at a time is read the same as at once", async () => {
  const text = JSON.stringify(TRICKY);
  const got = await readJsonArrayPrefix(inPieces([...text]), SVC, "http://cf/x", 100);
  assert.deepEqual(got, { items: TRICKY, more: false });
});

Deno.test("an empty array, an object and an array that ends early", async () => {
  assert.deepEqual(await readJsonArrayPrefix(inPieces(["[", " ]"]), SVC, "u", 5), {
    items: [],
    more: false,
  });
  assert.deepEqual(await readJsonArrayPrefix(inPieces(['{"a"', ":1}"]), SVC, "u", 5), {
    items: [],
    more: false,
    whole: { a: 1 },
  });
  await assert.rejects(
    readJsonArrayPrefix(inPieces(['[{"a":1},', '{"b"']), SVC, "http://cf/channels?x=1", 5),
    /^SyntaxError: ChannelFinder at http:\/\/cf\/channels sent a JSON array that ends early$/,
  );
  await assert.rejects(readJsonArrayPrefix(inPieces(["<html>"]), SVC, "u", 5), SyntaxError);
});

Deno.test("the byte cap counts bytes, not characters", async () => {
  const svc = { ...SVC, maxBytes: 1024, maxBytesKey: "[epics] channelfinder_max_bytes" };
  const fits = "é".repeat(512); // 1024 bytes
  assert.equal(await readCapped(inPieces([fits]), svc, "http://cf/x"), fits);
  await assert.rejects(
    readCapped(inPieces([fits, "x"]), svc, "http://cf/x?q=1"),
    /^ResponseTooLargeError: ChannelFinder at http:\/\/cf\/x: the response exceeded 1 KiB \(\[epics\] channelfinder_max_bytes\)/,
  );
  await assert.rejects(
    readJsonArrayPrefix(inPieces([`["${"a".repeat(2000)}`]), svc, "http://cf/x", 5),
    /exceeded 1 KiB/,
  );
});
