/**
 * The JSON schemas the model sees are part of the product: a change to one
 * must be deliberate. Update the snapshot with
 * `deno test -A tests/tools/schema_snapshot_test.ts -- --update`.
 */
import assert from "node:assert/strict";
import { EVERY_TOOL as ALL_TOOLS } from "../../src/tools/mod.ts";

const SNAPSHOT = new URL("./__snapshots__/tool_schemas.json", import.meta.url);

Deno.test("the tool schemas shown to the model match the snapshot", async () => {
  const actual = ALL_TOOLS.map((t) => ({
    name: t.name,
    description: t.description,
    parameters: t.parameters,
  }));
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (Deno.args.includes("--update")) {
    await Deno.mkdir(new URL("./__snapshots__/", import.meta.url), { recursive: true });
    await Deno.writeTextFile(SNAPSHOT, text);
  }
  assert.equal(text, await Deno.readTextFile(SNAPSHOT));
});

Deno.test("every parameter of every tool has a description", () => {
  for (const tool of ALL_TOOLS) {
    const props = (tool.parameters.properties ?? {}) as Record<string, { description?: string }>;
    for (const [name, schema] of Object.entries(props)) {
      assert.ok(schema.description, `${tool.name}.${name} has no description`);
    }
  }
});
