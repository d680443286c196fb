/**
 * The glance at the config that decides the early prompt: it reads what the
 * full load would, and says "don't know" (undefined) rather than guess on a
 * file it cannot read or parse.
 */
import assert from "node:assert/strict";
import { glanceConfig } from "../../src/config/glance.ts";
import { loadConfig, missingModelSetup, resolveModel } from "../../src/config/mod.ts";
import { tempDir } from "../support/temp.ts";

const env = (vars: Record<string, string>) => ({ get: (n: string) => vars[n] });

Deno.test("the glance and the full load agree on whether the model can be called", async () => {
  await using dir = await tempDir();
  const cases: [string, Record<string, string>, string | undefined][] = [
    ["", {}, undefined],
    ["", { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }, undefined],
    ["", { OPENAI_API_KEY: "k" }, undefined],
    ['[llm]\nbase_url = "http://127.0.0.1:9/v1"\n', {}, undefined],
    ['[llm]\napi_key_env = "MY_KEY"\n', { OPENAI_API_KEY: "k" }, undefined],
    ['[llm]\napi_key_env = "MY_KEY"\n', { MY_KEY: "k" }, undefined],
    [
      '[llm.models]\nmain = "gpt-4o"\nlocal = { model = "q", base_url = "http://127.0.0.1:9/v1" }\n',
      {},
      "local",
    ],
    [
      '[llm.models]\nmain = "gpt-4o"\nlocal = { model = "q", base_url = "http://127.0.0.1:9/v1" }\n',
      { ACCEL_AGENT_MODEL: "local" },
      undefined,
    ],
    ['[ui]\ncolor = "never"\n', {}, undefined],
  ];
  for (const [i, [toml, vars, model]] of cases.entries()) {
    const path = `${dir.path}/c${i}.toml`;
    await Deno.writeTextFile(path, toml);
    const opts = { path, env: env(vars), cwd: dir.path };
    const glance = await glanceConfig({ ...opts, model });
    const loaded = await loadConfig(opts);
    const info = resolveModel(loaded.config, model ?? loaded.config.llm.default);
    assert.equal(glance?.modelReady, !missingModelSetup(info, env(vars)), `${toml} ${vars}`);
    assert.equal(glance?.color, loaded.config.ui.color);
  }
});

Deno.test("a config the glance cannot read or parse gives no glance", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(`${dir.path}/bad.toml`, "[llm\nbase_url = 1\n");
  await Deno.writeTextFile(`${dir.path}/color.toml`, '[ui]\ncolor = "sometimes"\n');
  for (const path of ["bad.toml", "color.toml", "missing.toml"]) {
    assert.equal(await glanceConfig({ path, env: env({}), cwd: dir.path }), undefined, path);
  }
});
