import assert from "node:assert/strict";
import { z } from "zod";
import { ManualClock } from "../../src/adapters/clock.ts";
import { createSimulator } from "../../src/adapters/simulator/mod.ts";
import { defineTool, ToolRegistry } from "../../src/tools/mod.ts";
import { fileSaver, type TruncatedResult } from "../../src/tools/full_output.ts";
import { truncateMiddle } from "../../src/tools/truncate.ts";
import { validateArgs } from "../../src/tools/validate.ts";

import { tempDir } from "../support/temp.ts";

const clock = new ManualClock(Date.parse("2026-11-20T12:00:00Z"));
const deps = { cs: createSimulator({ seed: 1, clock }), now: () => clock.now() };
const never = new AbortController().signal;

const EchoArgs = z.strictObject({
  count: z.int().describe("a number"),
  flag: z.boolean().default(false).describe("a flag"),
  names: z.array(z.string()).default([]).describe("names"),
});

const echo = defineTool<typeof EchoArgs, z.output<typeof EchoArgs>>({
  name: "echo",
  description: "Returns its arguments",
  parameters: EchoArgs,
  readOnly: true,
  execute: (args) => Promise.resolve(args),
});

const slow = defineTool({
  name: "slow",
  description: "Never finishes and ignores its signal",
  parameters: z.object({}),
  readOnly: true,
  execute: () => new Promise<never>(() => {}),
});

const broken = defineTool({
  name: "broken",
  description: "Throws",
  parameters: z.object({}),
  readOnly: false,
  execute: () => Promise.reject(new Error("backend exploded")),
});

const big = defineTool<z.ZodObject, { status: string; text: string }>({
  name: "big",
  description: "Returns a lot",
  parameters: z.object({}),
  readOnly: true,
  execute: () => Promise.resolve({ status: "done", text: "a".repeat(10_000) + "END" }),
});

function registry(timeoutMs = 5_000) {
  return new ToolRegistry([echo, slow, broken, big], deps, { maxOutputChars: 1_000, timeoutMs });
}

Deno.test('arguments given as strings are coerced: "3" to 3, "true" to true, one name to a list', async () => {
  const out = await registry().execute(
    "echo",
    '{"count":"3","flag":"true","names":"LINAC:BPM:01:X"}',
    never,
  );
  assert.equal(out.ok, true);
  assert.deepEqual(out.result, { count: 3, flag: true, names: ["LINAC:BPM:01:X"] });
});

Deno.test("arguments that fail the schema come back as advice with the schema", async () => {
  const out = await registry().execute("echo", '{"count":"three","extra":1}', never);
  assert.equal(out.ok, false);
  assert.match(out.content, /echo: invalid arguments: count: expected number, got string/);
  assert.match(out.content, /unknown field extra/);
  assert.match(out.content, /Schema: /);
});

Deno.test("invalid JSON arguments are reported with what was received", async () => {
  const out = await registry().execute("echo", '{"count": 3', never);
  assert.equal(out.ok, false);
  assert.match(out.content, /arguments are not valid JSON/);
  assert.match(out.content, /\{\\"count\\": 3/);
});

Deno.test("arguments nested deeper than a tool call's ever are refused as a result, not a crash", async () => {
  const depth = 1_000_000;
  for (
    const raw of [
      `{"count":1,"names":${"[".repeat(depth)}${"]".repeat(depth)}}`,
      `{"count":${'{"a":'.repeat(depth / 10)}1${"}".repeat(depth / 10)}}`,
      // Brackets inside strings are text, not nesting.
      `{"count":1,"names":[${JSON.stringify("[".repeat(depth))}]}`,
    ]
  ) {
    const out = await registry().execute("echo", raw, never);
    if (raw.includes('"[[[')) {
      assert.equal(out.ok, true, out.content.slice(0, 300));
      continue;
    }
    assert.equal(out.ok, false);
    assert.match(
      out.content,
      /echo: arguments are nested more than 64 levels deep; send one flat JSON object/,
    );
  }
  // The hooks' preview of the arguments does not throw either.
  assert.equal(typeof registry().previewArgs("echo", `[${"[".repeat(depth)}`), "string");
});

Deno.test("an unknown tool name lists the available tools", async () => {
  const out = await registry().execute("set_parameter", "{}", never);
  assert.equal(out.ok, false);
  assert.match(
    out.content,
    /unknown tool \\"set_parameter\\"; the available tools are echo, slow, broken, big/,
  );
});

Deno.test("an exception inside a tool becomes a readable result", async () => {
  const out = await registry().execute("broken", "", never);
  assert.deepEqual(out.result, { error: "broken failed: backend exploded" });
});

Deno.test("a tool that ignores its signal is abandoned at its timeout", async () => {
  const out = await registry(50).execute("slow", "{}", never);
  assert.equal(out.ok, false);
  assert.match(out.content, /slow timed out after 0.05 s/);
});

Deno.test("a tool that ignores its signal is abandoned when the operator cancels", async () => {
  const controller = new AbortController();
  const pending = registry().execute("slow", "{}", controller.signal);
  controller.abort(new Error("cancelled by Ctrl-C"));
  const out = await pending;
  assert.equal(out.ok, false);
  assert.match(out.content, /cancelled by Ctrl-C/);
});

Deno.test("large output is cut in the middle with a note, keeping head and tail", async () => {
  const out = await registry().execute("big", "{}", never);
  assert.ok(out.content.length <= 1_000, `length ${out.content.length}`);
  assert.ok(out.content.startsWith('{"status":"done","text":"aaa'));
  assert.ok(out.content.endsWith('END"}'));
  assert.match(out.content, /…\[\d+ of 10030 characters cut; ask for less\]…/);
  // Events and --json carry what the model read; the operator's own commands get the whole.
  assert.deepEqual(out.result, {
    status: "done",
    truncated: { chars: 10_030, full_output: null },
    excerpt: out.content,
  });
  assert.equal((out.fullResult as { text: string }).text.length, 10_003);
});

Deno.test("a cut result's whole text is saved to a file the result names", async () => {
  await using dir = await tempDir();
  const r = new ToolRegistry([big, echo], deps, {
    maxOutputChars: 1_000,
    timeoutMs: 5_000,
    saveFullOutput: fileSaver(`${dir.path}/tool-output`),
  });
  const out = await r.execute("big", "{}", never);
  const path = (out.result as TruncatedResult).truncated.full_output;
  assert.ok(path !== null && path.startsWith(`${dir.path}/tool-output/`), String(path));
  assert.match(path, /-big-[0-9a-f]{8}\.json$/);
  const saved = JSON.parse(await Deno.readTextFile(path));
  assert.equal(saved.text, "a".repeat(10_000) + "END");
  assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
  // A result that fits is passed on as it is, and nothing is saved.
  const small = await r.execute("echo", '{"count":1}', never);
  assert.deepEqual(small.result, { count: 1, flag: false, names: [] });
  assert.equal(small.fullResult, undefined);
  let files = 0;
  for await (const _ of Deno.readDir(`${dir.path}/tool-output`)) files++;
  assert.equal(files, 1);
});

Deno.test("truncateMiddle leaves short text alone", () => {
  assert.equal(truncateMiddle("abc", 10), "abc");
});

Deno.test("subset offers only the named tools and refuses unknown names", () => {
  const r = registry();
  assert.deepEqual(r.subset(["big", "echo"]).names(), ["big", "echo"]);
  assert.throws(() => r.subset(["echo", "nope"]), /unknown tools: nope/);
});

Deno.test("validateArgs does not change the caller's object", () => {
  const input = { count: "3" };
  const out = validateArgs(z.object({ count: z.number() }), input);
  assert.deepEqual(out, { ok: true, args: { count: 3 } });
  assert.deepEqual(input, { count: "3" });
});
