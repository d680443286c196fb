import assert from "node:assert/strict";
import { applyEnv, ConfigError, parseConfig, resolveModel } from "../../src/config/mod.ts";
import { locateKey } from "../../src/config/load.ts";
import { ConfigSchema } from "../../src/config/schema.ts";

const env = (vars: Record<string, string>) => ({ get: (n: string) => vars[n] });

Deno.test("the shipped default.toml is valid and matches the built-in defaults", async () => {
  const text = await Deno.readTextFile(new URL("../../configs/default.toml", import.meta.url));
  const config = parseConfig(text, "configs/default.toml");
  const defaults = ConfigSchema.parse({});
  // Only agent_md differs (the file points at the repository's AGENT.md), and the file
  // holds the simulated facility's demo displays where the built-in catalogue is empty.
  assert.ok(config.displays.length > 0);
  assert.deepEqual({ ...config, agent: { ...config.agent, agent_md: "" }, displays: [] }, {
    ...defaults,
    agent: { ...defaults.agent, agent_md: "" },
  });
});

const BAD: [string, string, RegExp][] = [
  [
    "a type error names file, line and key",
    '[llm]\nmax_retries = "three"\n',
    /^bad\.toml:2: key llm\.max_retries: expected number, got the string "three"$/,
  ],
  [
    "an unknown table is named with its line",
    "[llm]\nmax_retries = 3\n[agnt]\nx = 1\n",
    /^bad\.toml:3: unknown key "agnt"/,
  ],
  [
    "an unknown key inside a table",
    "[agent]\nmax_iteration = 3\n",
    /^bad\.toml:2: key agent: unknown key "max_iteration"/,
  ],
  [
    "broken TOML gives line and column",
    "[llm\nmax_retries = 3\n",
    /^bad\.toml:1:5: invalid TOML: /,
  ],
  [
    "a model entry of the wrong shape",
    "[llm.models]\nfast = 3\n",
    /^bad\.toml:2: key llm\.models\.fast: expected a model id string or a table/,
  ],
  [
    "an unknown adapter lists the known ones",
    '[facility]\nadapter = "epics2"\n',
    /key facility\.adapter: expected one of "simulator", "epics", "tango", got the string "epics2"/,
  ],
  [
    "the sandbox's optimize mode is one of two",
    '[sandbox]\noptimize = "fast"\n',
    /bad\.toml:2: key sandbox\.optimize: expected one of "eager", "hot", got the string "fast"/,
  ],
  [
    "a bound is stated",
    "[agent]\nmax_iterations = 0\n",
    /key agent\.max_iterations: must be greater than 0, got number 0/,
  ],
  [
    "a simulator smaller than the default facility is refused with its bound",
    "[simulator]\ndevices = 100\n",
    /^bad\.toml:2: key simulator\.devices: must be at least 3060, got number 100/,
  ],
  [
    "a simulator above a million devices is refused with its bound",
    "[simulator]\ndevices = 2000000\n",
    /key simulator\.devices: must be at most 1000000, got number 2000000/,
  ],
  [
    "several problems are counted",
    '[llm]\nmax_retries = "x"\nstream = 1\n',
    /\(and 1 more problem\)$/,
  ],
];

for (const [name, text, expected] of BAD) {
  Deno.test(`config error: ${name}`, () => {
    assert.throws(() => parseConfig(text, "bad.toml"), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, expected);
      assert.ok(!e.message.includes("\n"), "the message is one line");
      return true;
    });
  });
}

Deno.test("locateKey finds keys in tables and table headers", () => {
  const text = "a = 1\n[llm]\nx = 2\n[llm.models]\nfast = 'm'\n";
  assert.equal(locateKey(text, ["a"]), 1);
  assert.equal(locateKey(text, ["llm", "x"]), 3);
  assert.equal(locateKey(text, ["llm", "models", "fast"]), 5);
  assert.equal(locateKey(text, ["llm", "models"]), 4);
  assert.equal(locateKey(text, ["nope"]), undefined);
});

Deno.test("OPENAI_BASE_URL and ACCEL_AGENT_MODEL override the file", () => {
  const config = parseConfig(
    '[llm]\nbase_url = "http://a/v1"\n[llm.models]\nmain = "m1"\nfast = "m2"\n',
    "c.toml",
  );
  applyEnv(config, env({ OPENAI_BASE_URL: "http://b/v1", ACCEL_AGENT_MODEL: "fast" }));
  assert.equal(config.llm.base_url, "http://b/v1");
  assert.equal(resolveModel(config).model, "m2");
  // A model id that is not a configured name is used as is.
  applyEnv(config, env({ ACCEL_AGENT_MODEL: "llama3.1:8b" }));
  assert.equal(resolveModel(config).model, "llama3.1:8b");
});

Deno.test("a named model with its own endpoint resolves all its fields", () => {
  const config = parseConfig(
    '[llm.models]\nlocal = { model = "qwen", base_url = "http://127.0.0.1:11434/v1", api_key_env = "K", stream = false, context_window = 32000, price_in = 1, price_out = 2 }\n',
    "c.toml",
  );
  assert.deepEqual(resolveModel(config, "local"), {
    name: "local",
    model: "qwen",
    baseUrl: "http://127.0.0.1:11434/v1",
    apiKeyEnv: "K",
    stream: false,
    contextWindow: 32000,
    priceIn: 1,
    priceOut: 2,
  });
  assert.throws(
    () => resolveModel(config, "nope"),
    /model "nope" is not configured; known models: local \(\[llm\.models\]\)$/,
  );
});

Deno.test("the [epics] and [tango] tables default to no services and name credential variables", () => {
  const c = parseConfig('[facility]\nadapter = "tango"\n', "x.toml");
  assert.equal(c.epics.pvws_url, "");
  assert.equal(c.epics.read_timeout_ms, 5000);
  assert.equal(c.tango.api_version, "v11");
  assert.equal(c.tango.username_env, "TANGO_REST_USER");
  assert.throws(
    () => parseConfig('[epics]\narchiver_url = "ftp://x"\n', "x.toml"),
    /x\.toml:2: key epics\.archiver_url:/,
  );
});

Deno.test("a service URL with credentials in it is refused", () => {
  assert.throws(
    () =>
      parseConfig(
        '[facility]\nadapter = "epics"\n[epics]\npvws_url = "http://op:secret@gw:8080/pvws"\n',
        "c.toml",
      ),
    (e: unknown) =>
      e instanceof ConfigError && /^c\.toml:4: key epics\.pvws_url: /.test(e.message) &&
      !e.message.includes("secret"),
  );
});
