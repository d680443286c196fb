import assert from "node:assert/strict";
import { commandFiles, commandWrites } from "../../src/cli/args/command_files.ts";

Deno.test("the launcher grants reading the files a command names, and nothing for other commands", async () => {
  assert.deepEqual(await commandFiles(["plan", "show", "p.json"]), ["p.json"]);
  assert.deepEqual(await commandFiles(["exec", "-"]), []);
  assert.deepEqual(await commandFiles(["ask", "eval the plan"]), []);
  assert.deepEqual(await commandWrites(["get", "X"]), []);
});

Deno.test("eval is granted its --tasks-dir directories and compare's records for reading, --out for writing", async () => {
  const args = [
    "-c",
    "x.toml",
    "eval",
    "--tasks-dir",
    "site/tasks",
    "--tasks-dir=more",
    "--out",
    "r.json",
  ];
  assert.deepEqual(await commandFiles(args), ["site/tasks", "more", "r.json.tmp"]);
  assert.deepEqual(await commandWrites(args), ["r.json", "r.json.tmp"]);
  assert.deepEqual(await commandFiles(["eval", "compare", "a.json", "b.json", "--json"]), [
    "a.json",
    "b.json",
  ]);
  // A value that looks like a command is a value, not a file.
  assert.deepEqual(await commandFiles(["eval", "--tasks", "compare", "--model", "m"]), []);
});
