/** The paths a configuration names are found by key name, so a new directory setting is granted too. */
import assert from "node:assert/strict";
import { type Config, ConfigSchema } from "../../src/config/schema.ts";
import {
  isWritableSetting,
  namedPaths,
  normalize,
  resolveConfigPath,
} from "../../src/config/paths.ts";

Deno.test("the default configuration's paths are each found, resolved and named by their setting", () => {
  const config = ConfigSchema.parse({ sandbox: { data_dirs: ["data", "/srv/more"] } });
  const found = namedPaths(config, "/etc/accel", "/home/op");
  assert.deepEqual(found, [
    { path: "/etc/accel/AGENT.md", setting: "[agent] agent_md" },
    { path: "/etc/accel/safety_limits.toml", setting: "[safety] limits_file" },
    { path: "/home/op/.local/state/accel-agent", setting: "[state] dir" },
    { path: "/etc/accel/data", setting: "[sandbox] data_dirs" },
    { path: "/srv/more", setting: "[sandbox] data_dirs" },
    { path: "/etc/scripts", setting: "[sandbox] scripts_dir" },
    { path: "/home/op/.local/state/accel-agent/work", setting: "[sandbox] work_dir" },
    { path: "/home/op/.cache/accel-agent", setting: "[sandbox] cache_dir" },
  ]);
});

Deno.test("a path setting added to any table later is found without a list to update", () => {
  const config = {
    ...ConfigSchema.parse({}),
    index: { cache_dir: "~/.cache/accel-index", refresh_s: 60 },
  } as unknown as Config;
  const found = namedPaths(config, "/etc/accel", "/home/op");
  assert.ok(
    found.some((p) =>
      p.setting === "[index] cache_dir" && p.path === "/home/op/.cache/accel-index"
    ),
  );
  assert.ok(isWritableSetting("[index] cache_dir"), "a cache is written");
  assert.ok(!isWritableSetting("[index] dir") && !isWritableSetting("[sandbox] data_dirs"));
});

Deno.test("every string setting that holds a path by default has a key the finder recognises", () => {
  // A default that looks like a path (has / or ~) under a key the finder misses would go ungranted.
  const walk = (v: unknown, key: string, out: string[]) => {
    if (typeof v === "string" && /[/~]/.test(v) && !/^https?:/.test(v)) out.push(key);
    else if (typeof v === "object" && v !== null && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v)) walk(x, k, out);
    }
  };
  const keys: string[] = [];
  walk(ConfigSchema.parse({}), "", keys);
  const found = new Set(
    namedPaths(ConfigSchema.parse({}), "/b", "/h").map((p) => p.setting.split(" ")[1]),
  );
  for (const k of keys) assert.ok(found.has(k), `${k} holds a path but is not found`);
});

Deno.test("paths resolve ~ and relative parts as the program does, and normalise . and ..", () => {
  assert.equal(resolveConfigPath("~/x", "/b", "/home/op"), "/home/op/x");
  assert.equal(resolveConfigPath("../scripts", "/opt/a/configs", "/h"), "/opt/a/scripts");
  assert.equal(resolveConfigPath("/srv/./d/", "/b", "/h"), "/srv/d");
  assert.equal(normalize("/a/b/../../.."), "/");
});
