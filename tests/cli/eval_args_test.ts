import assert from "node:assert/strict";
import { evalArgs } from "../../src/cli/args/eval_args.ts";

Deno.test("eval is found after global options, which it then receives", () => {
  assert.deepEqual(evalArgs(["eval", "--repeat", "3"]), ["--repeat", "3"]);
  assert.deepEqual(evalArgs(["-c", "x.toml", "--no-color", "eval", "--json"]), [
    "--json",
    "-c",
    "x.toml",
    "--no-color",
  ]);
  assert.deepEqual(evalArgs(["--model=fast", "eval"]), ["--model=fast"]);
  assert.equal(evalArgs(["ask", "eval"]), undefined);
  assert.equal(evalArgs(["get", "--json", "eval"]), undefined);
  assert.equal(evalArgs(["--resume", "eval"]), undefined);
  assert.equal(evalArgs([]), undefined);
});
