import assert from "node:assert/strict";
import { narrowTools, parseAgentDefinition } from "../../../src/agent/subagents/definition.ts";
import { parseFrontMatter } from "../../../src/agent/subagents/frontmatter.ts";
import { parseSignature, validateSignature } from "../../../src/agent/subagents/signature.ts";
import { loadAgentDefinitions } from "../../../src/app/subagent_wiring.ts";
import { CliError } from "../../../src/app/exit.ts";
import { ALL_TOOLS } from "../../../src/tools/mod.ts";
import { AGENTS_DIR } from "./harness.ts";
import { tempDir } from "../../support/temp.ts";

const DEF = (fields: string) =>
  `---\nname: t\ndescription: a test\ntools: [search_device]\noutput: "{n: integer}"\n${fields}---\nPrompt.\n`;

Deno.test("front matter reads scalars, inline and block lists, and block text", () => {
  const { fields, body } = parseFrontMatter(
    `---\nname: x\nn: 3\nok: true\nq: "a: b"\ntools: [a, "b, c"]\ndeny:\n  - d\n  - e\nout: |\n  {\n    "x": 1\n  }\n---\nBody\n`,
    "f",
  );
  assert.deepEqual(fields, {
    name: "x",
    n: 3,
    ok: true,
    q: "a: b",
    tools: ["a", "b, c"],
    deny: ["d", "e"],
    out: '{\n  "x": 1\n}',
  });
  assert.equal(body, "Body");
  assert.throws(() => parseFrontMatter("name: x", "f"), /must start with a --- line/);
  assert.throws(() => parseFrontMatter("---\nname x\n---\n", "f"), /f:2: expected "key: value"/);
});

Deno.test("front matter is YAML: comments, folded text and quoted colons read as YAML says", () => {
  const { fields } = parseFrontMatter(
    `---\n# who\nname: 'rf-trip'  # trailing comment\ndescription: >\n  Reads the RF\n  alarm log.\nempty:\n---\n`,
    "f",
  );
  assert.deepEqual(fields, { name: "rf-trip", description: "Reads the RF alarm log.", empty: [] });
});

Deno.test("front matter refuses nested mappings and names the line of a YAML error", () => {
  assert.throws(
    () => parseFrontMatter("---\nname: x\nmodel:\n  id: a\n---\n", "a.md"),
    /a\.md: "model" must be text, a number, true\/false or a list of text, got a mapping/,
  );
  assert.throws(
    () => parseFrontMatter('---\nname: x\ntools: [a, "b\n---\n', "a.md"),
    /^SyntaxError: a\.md:3:\d+: /,
  );
});

Deno.test("signatures in compact form and JSON schema validate results with a path per error", () => {
  const compact = parseSignature(
    "{devices: string[], total: integer, note?: string, m: {a: number}[]}",
  );
  const cases: [unknown, string[]][] = [
    [{ devices: ["A"], total: 1, m: [] }, []],
    [{ devices: ["A"], total: 1, m: [{ a: 2 }], note: "x" }, []],
    [{ devices: "A", total: 1.5, m: [{ a: "2" }] }, [
      'result.devices must be an array, got string "A"',
      "result.total must be an integer, got number 1.5",
      'result.m[0].a must be a number, got string "2"',
    ]],
    [{ total: 1, m: [], extra: 1 }, [
      "result.devices is required",
      "result.extra is not a field of the signature",
    ]],
    [[1], ["result must be an object, got an array"]],
  ];
  for (const [value, errors] of cases) assert.deepEqual(validateSignature(compact, value), errors);
  const schema = parseSignature(
    '{"type":"object","properties":{"s":{"enum":["ok","fault"]}},"required":["s"]}',
  );
  assert.deepEqual(validateSignature(schema, { s: "ok" }), []);
  assert.deepEqual(validateSignature(schema, { s: "bad" }), [
    'result.s must be one of ["ok","fault"]',
  ]);
  assert.throws(() => parseSignature("{n: float}"), /expected a type/);
  assert.throws(() => parseSignature('{"type":"array"}'), /must be an object schema/);
});

Deno.test("definitions: fields, defaults, and what a sub-agent can never be given", () => {
  const d = parseAgentDefinition(
    DEF("model: fast\nmax_turns: 3\ntimeout: 2m\ndeny: [read_log]\n"),
    "t.md",
  );
  assert.equal(d.model, "fast");
  assert.equal(d.maxTurns, 3);
  assert.equal(d.timeoutMs, 120_000);
  assert.deepEqual(d.deny, ["read_log"]);
  const table: [string, RegExp][] = [
    ["tools: [propose_plan]\n", /propose_plan can never be given to a sub-agent/],
    ["tools: [spawn_subagent]\n", /spawn_subagent is added by level/],
    ["max_turns: 0\n", /max_turns must be a whole number/],
    ["timeout: soon\n", /timeout must be seconds/],
    ["timeout: 2147484\n", /timeout: 2147484 s is above the bound of 86400 s/],
    ["timeout: 100000m\n", /timeout: 6000000 s is above the bound/],
  ];
  for (const [extra, error] of table) {
    const text = DEF("").replace(
      "tools: [search_device]\n",
      extra.startsWith("tools") ? extra : `tools: [search_device]\n${extra}`,
    );
    assert.throws(() => parseAgentDefinition(text, "t.md"), error, extra);
  }
});

Deno.test("spawn-time tool lists narrow a definition and never widen it", () => {
  const d = parseAgentDefinition(
    DEF("").replace(
      "tools: [search_device]",
      "tools: [search_device, get_parameter, read_log]\ndeny: [read_log]",
    ),
    "t.md",
  );
  assert.deepEqual(narrowTools(d), ["search_device", "get_parameter"]);
  assert.deepEqual(narrowTools(d, ["get_parameter"]), ["get_parameter"]);
  assert.deepEqual(narrowTools(d, undefined, ["get_parameter"]), ["search_device"]);
  assert.deepEqual(narrowTools(d, ["read_log"]), [], "the definition's deny list still applies");
  assert.throws(() => narrowTools(d, ["propose_plan"]), /may only narrow/);
});

Deno.test("the built-in agents load, and a definition naming a write tool is refused at start-up", async () => {
  const defs = await loadAgentDefinitions([AGENTS_DIR], ALL_TOOLS);
  assert.deepEqual(defs.map((d) => d.name).sort(), [
    "device_search",
    "diagnostics",
    "log_analysis",
  ]);
  await using dir = await tempDir();
  await Deno.writeTextFile(
    `${dir.path}/bad.md`,
    DEF("").replace("[search_device]", "[nonexistent]"),
  );
  await assert.rejects(
    loadAgentDefinitions([dir.path], ALL_TOOLS),
    (e) => e instanceof CliError && /unknown tool nonexistent/.test(e.message),
  );
});
