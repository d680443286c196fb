/**
 * The editor of a logbook draft: the grants run the program `[elog] editor`
 * names and nothing else (no editor from the environment is granted), and
 * which editor is used when the config names none.
 *
 * @module
 */
import assert from "node:assert/strict";
import { computeGrants } from "../../src/app/permissions.ts";
import { editorCommand } from "../../src/app/editor.ts";
import { loadConfig } from "../../src/config/mod.ts";
import { tempConfig } from "../support/run_agent.ts";

async function grantsOf(toml: string, env: Record<string, string>) {
  await using config = await tempConfig(toml);
  const loaded = await loadConfig({ path: config.path, env: { get: () => undefined }, cwd: "/" });
  return {
    loaded,
    grants: computeGrants(loaded, { env: (n) => env[n], cwd: "/", run: ["/usr/bin/deno"] }),
  };
}

Deno.test("the run grant adds the editor [elog] editor names, and no editor the environment names", async () => {
  const named = await grantsOf('[elog]\neditor = ["/opt/site/edit", "--wait"]\n', {});
  assert.deepEqual(named.grants.run, ["/usr/bin/deno", "/opt/site/edit"]);
  const fromEnv = await grantsOf("", { EDITOR: "/bin/sh", VISUAL: "/bin/sh -c" });
  assert.deepEqual(fromEnv.grants.run, ["/usr/bin/deno"]);
  assert.ok(!fromEnv.grants.env.includes("EDITOR") && !fromEnv.grants.env.includes("VISUAL"));
});

Deno.test("the editor: [elog] editor, else $VISUAL, else $EDITOR (split on spaces), else vi", async () => {
  const { loaded } = await grantsOf('[elog]\neditor = ["nano", "-R"]\n', {});
  assert.deepEqual(editorCommand(loaded.config, () => "emacs"), ["nano", "-R"]);
  const { loaded: plain } = await grantsOf("", {});
  const env = (vars: Record<string, string>) => (n: string) => vars[n];
  assert.deepEqual(editorCommand(plain.config, env({ VISUAL: "code --wait", EDITOR: "ed" })), [
    "code",
    "--wait",
  ]);
  assert.deepEqual(editorCommand(plain.config, env({ VISUAL: "  ", EDITOR: "ed" })), ["ed"]);
  assert.deepEqual(editorCommand(plain.config, env({})), ["vi"]);
});
