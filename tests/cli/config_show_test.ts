/**
 * `config show`: the merged configuration, each value with where it was
 * set; its output is a config file that loads to the same configuration.
 */
import assert from "node:assert/strict";
import { parse } from "smol-toml";
import { loadConfig } from "../../src/config/mod.ts";
import { BUILT_IN, tomlLines } from "../../src/cli/commands/config_show.ts";
import { ROOT, runAgent } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";

const env = (vars: Record<string, string> = {}) => ({ get: (n: string) => vars[n] });

Deno.test("config show's output is a config that loads to the same configuration", async () => {
  await using dir = await tempDir();
  const site = `${dir.path}/site.toml`;
  await Deno.writeTextFile(site, '[agent]\nagent_md = "FACILITY.md"\n[ui]\ncolor = "never"\n');
  await Deno.writeTextFile(`${dir.path}/FACILITY.md`, "# facility\n");
  const user = `${dir.path}/user.toml`;
  await Deno.writeTextFile(user, 'extends = "site.toml"\n[llm.models]\nfast = "small"\n');
  const loaded = await loadConfig({
    path: user,
    env: env({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }),
    cwd: "/",
  });
  const lines = tomlLines(
    loaded.config as unknown as Record<string, unknown>,
    (k) => loaded.origins.get(k) ?? BUILT_IN,
    80,
  );
  const text = lines.map(([t, c]) => `${t}${c ?? ""}`).join("\n");
  for (const [t, c] of lines) assert.ok(`${t}${c ?? ""}`.length <= 80 || c === undefined, t);
  assert.match(text, new RegExp(`^agent_md = "${dir.path}/FACILITY.md"  # site.toml:2$`, "m"));
  assert.match(
    text,
    /^base_url = "http:\/\/127\.0\.0\.1:9\/v1" {2}# environment OPENAI_BASE_URL$/m,
  );
  assert.match(text, new RegExp(`^fast = "small"  # ${user}:3$`, "m"));
  assert.match(text, new RegExp(`^seed = 1  # ${ROOT}/configs/default\\.toml:\\d+$`, "m"));
  // Read back on its own, it is the same configuration.
  const again = `${dir.path}/shown.toml`;
  await Deno.writeTextFile(again, text);
  const reloaded = await loadConfig({ path: again, env: env(), cwd: "/" });
  assert.deepEqual(reloaded.config, loaded.config);
  assert.ok(parse(text));
});

Deno.test("config show lists what it can, then says which named file is missing, exit 2", async () => {
  await using dir = await tempDir();
  const config = `${dir.path}/c.toml`;
  await Deno.writeTextFile(config, '[index]\nsynonyms_file = "words.toml"\n');
  const r = await runAgent(["config", "show", "--config", config]);
  assert.equal(r.code, 2);
  assert.match(r.stdout, /^synonyms_file = ".*\/words\.toml" {2}# .*c\.toml:2$/m);
  assert.equal(
    r.stderr,
    `accel-agent: config error: [index] synonyms_file ${dir.path}/words.toml does not exist ` +
      `(set in ${config}:2); create it or change [index] synonyms_file\n`,
  );
  const json = await runAgent(["config", "show", "--config", config, "--json"]);
  const shown = JSON.parse(json.stdout.slice(0, json.stdout.lastIndexOf("}") + 1));
  assert.deepEqual(shown.values["index.synonyms_file"], {
    value: `${dir.path}/words.toml`,
    from: `${config}:2`,
  });
  assert.deepEqual(shown.files, [`${ROOT}/configs/default.toml`, config]);
});
