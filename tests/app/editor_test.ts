/**
 * The editor of a logbook draft: the grants run the program `[elog] editor`
 * names, or under the launcher the one `$VISUAL`/`$EDITOR` names, and no
 * other; and which editor is used when the config names none.
 *
 * @module
 */
import assert from "node:assert/strict";
import { computeGrants } from "../../src/app/permissions.ts";
import { editorCommand } from "../../src/app/editor.ts";
import { loadConfig } from "../../src/config/mod.ts";
import { tempConfig } from "../support/run_agent.ts";

async function grantsOf(toml: string, env: Record<string, string>, launcher = false) {
  await using config = await tempConfig(toml);
  const home = (n: string) => (n === "HOME" ? "/home/op" : undefined);
  const loaded = await loadConfig({ path: config.path, env: { get: home }, cwd: "/" });
  return {
    loaded,
    grants: computeGrants(loaded, {
      // The default state directory is under HOME; no display launcher of the shipped catalogue
      // is on this PATH (without one, the test runner's own grants would decide).
      env: (n) => ({ HOME: "/home/op", PATH: "/nonexistent", ...env })[n],
      cwd: "/",
      run: ["/usr/bin/deno"],
      editorFromEnvironment: launcher,
    }),
  };
}

Deno.test("the run grant adds the editor [elog] editor names; the environment's only for the launcher", async () => {
  const named = await grantsOf('[elog]\neditor = ["/opt/site/edit", "--wait"]\n', {
    EDITOR: "/bin/sh",
  }, true);
  assert.deepEqual(named.grants.run, ["/usr/bin/deno", "/opt/site/edit"]);
  assert.ok(!named.grants.env.includes("EDITOR"), "the configured editor needs no variable");
  // `accel-agent permissions` and deno task compile: no editor from the environment.
  const baked = await grantsOf("", { EDITOR: "/usr/bin/nano -w" });
  assert.deepEqual(baked.grants.run, ["/usr/bin/deno"]);
  assert.ok(!baked.grants.env.includes("EDITOR") && !baked.grants.env.includes("VISUAL"));
  // The launcher: the program $VISUAL (else $EDITOR) names, and the variables to find it.
  const launched = await grantsOf("", { EDITOR: "/usr/bin/nano -w", VISUAL: " " }, true);
  assert.deepEqual(launched.grants.run, ["/usr/bin/deno", "/usr/bin/nano"]);
  assert.ok(launched.grants.env.includes("EDITOR") && launched.grants.env.includes("VISUAL"));
  const none = await grantsOf("", {}, true);
  assert.deepEqual(none.grants.run, ["/usr/bin/deno"], "no editor named: none granted");
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
