/**
 * Layered configuration: a facility's file names what it changes and keeps
 * the rest from the site config it extends or the shipped defaults, each
 * path resolved beside the file that names it, each value's origin known.
 */
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config/mod.ts";
import { keyLines, mergeChain, readChain } from "../../src/config/layers.ts";
import { tempDir } from "../support/temp.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const env = (vars: Record<string, string> = {}) => ({ get: (n: string) => vars[n] });

async function write(path: string, text: string): Promise<string> {
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(path, text);
  return path;
}

Deno.test("a facility config of three lines keeps the shipped limits, AGENT.md and scripts", async () => {
  await using dir = await tempDir();
  const path = await write(
    `${dir.path}/etc/facility.toml`,
    'llm.base_url = "http://llm.ctrl.example:8000/v1"\nfacility.adapter = "epics"\n' +
      'epics.pvws_url = "http://pvws.ctrl.example:8080/pvws"\n',
  );
  const loaded = await loadConfig({ path, env: env(), cwd: dir.path });
  const c = loaded.config;
  assert.equal(c.safety.limits_file, `${ROOT}/configs/safety_limits.toml`);
  assert.equal(c.agent.agent_md, `${ROOT}/AGENT.md`);
  assert.equal(c.sandbox.scripts_dir, `${ROOT}/scripts`);
  // The shipped catalogue is the simulated facility's screens: none on EPICS.
  assert.deepEqual(c.displays, []);
  assert.match(
    loaded.origins.get("displays") ?? "",
    /the simulated facility's screens: none on epics$/,
  );
  // `~` is left for the home directory of whoever runs it.
  assert.equal(c.state.dir, "~/.local/state/accel-agent");
  assert.equal(c.epics.pvws_url, "http://pvws.ctrl.example:8080/pvws");
  assert.deepEqual(loaded.layers.map((l) => l.path), [`${ROOT}/configs/default.toml`, path]);
  assert.equal(loaded.origins.get("llm.base_url"), `${path}:1`);
  assert.equal(loaded.origins.get("epics.pvws_url"), `${path}:3`);
  assert.match(loaded.origins.get("safety.limits_file") ?? "", /configs\/default\.toml:\d+$/);
  assert.equal(loaded.origins.get("llm.temperature"), undefined, "never set: built in");
});

Deno.test("a user's config extends the site's, which extends the defaults; paths resolve beside each file", async () => {
  await using dir = await tempDir();
  await write(
    `${dir.path}/site/accel.toml`,
    '[safety]\nlimits_file = "limits.toml"\n[agent]\nagent_md = "FACILITY.md"\n' +
      '[llm.models]\nmain = "site-model"\nfast = "small"\n[index]\nsynonyms_file = "words.toml"\n' +
      '[sandbox]\ndata_dirs = ["data", "/srv/beam"]\n',
  );
  const user = await write(
    `${dir.path}/home/op/me.toml`,
    'extends = "../../site/accel.toml"\n[llm.models]\nmain = "mine"\n[sandbox]\ndata_dirs = ["mine"]\n',
  );
  const loaded = await loadConfig({ path: user, env: env(), cwd: "/" });
  const c = loaded.config;
  assert.equal(c.safety.limits_file, `${dir.path}/site/limits.toml`);
  assert.equal(c.agent.agent_md, `${dir.path}/site/FACILITY.md`);
  assert.equal(c.index.synonyms_file, `${dir.path}/site/words.toml`);
  // A list is replaced whole; a table merges key by key.
  assert.deepEqual(c.sandbox.data_dirs, [`${dir.path}/home/op/mine`]);
  assert.deepEqual(c.llm.models, { main: "mine", fast: "small" });
  assert.equal(c.sandbox.scripts_dir, `${ROOT}/scripts`);
  assert.deepEqual(loaded.layers.map((l) => l.shown), [
    `${ROOT}/configs/default.toml`,
    "../../site/accel.toml",
    user,
  ]);
  assert.equal(loaded.origins.get("sandbox.data_dirs"), `${user}:5`);
  assert.equal(loaded.origins.get("llm.models.fast"), "../../site/accel.toml:7");
  assert.equal(loaded.baseDir, `${dir.path}/home/op`);
});

Deno.test("a config for the simulator keeps the shipped display catalogue, resolved where it is", async () => {
  await using dir = await tempDir();
  const path = await write(`${dir.path}/sim.toml`, "[simulator]\nseed = 3\n");
  const { config } = await loadConfig({ path, env: env(), cwd: dir.path });
  assert.equal(config.displays[0]?.file, `${ROOT}/configs/displays/orbit.bob`);
});

Deno.test("the config's hash changes when any file of the chain changes", async () => {
  await using dir = await tempDir();
  const site = await write(`${dir.path}/site.toml`, "[agent]\nmax_iterations = 5\n");
  const user = await write(`${dir.path}/user.toml`, 'extends = "site.toml"\n');
  const before = (await loadConfig({ path: user, env: env(), cwd: dir.path })).hash;
  await Deno.writeTextFile(site, "[agent]\nmax_iterations = 6\n");
  const after = await loadConfig({ path: user, env: env(), cwd: dir.path });
  assert.notEqual(after.hash, before);
  assert.equal(after.config.agent.max_iterations, 6);
});

Deno.test("an environment override is the value's origin", async () => {
  const loaded = await loadConfig({
    env: env({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1", ACCEL_AGENT_MODEL: "qwen" }),
    cwd: "/",
  });
  assert.equal(loaded.origins.get("llm.base_url"), "environment OPENAI_BASE_URL");
  assert.equal(loaded.origins.get("llm.default"), "environment ACCEL_AGENT_MODEL");
  assert.deepEqual(loaded.layers.map((l) => l.path), [`${ROOT}/configs/default.toml`]);
});

const CHAIN_ERRORS: [string, Record<string, string>, string, RegExp][] = [
  [
    "a site config that is not there names the file, line and path",
    { "user.toml": '# a site config\nextends = "nowhere.toml"\n[agent]\nmax_iterations = 3\n' },
    "user.toml",
    /^user\.toml:2: extends: \/.*\/nowhere\.toml does not exist; name an existing config file$/,
  ],
  [
    "files that extend each other are refused",
    { "a.toml": 'extends = "b.toml"\n', "b.toml": 'extends = "a.toml"\n' },
    "a.toml",
    /^b\.toml:1: extends a\.toml, which is already in the chain \(b\.toml ← a\.toml\); break the loop$/,
  ],
  [
    "extends must be a path",
    { "user.toml": "extends = 3\n" },
    "user.toml",
    /^user\.toml:1: key extends: expected the path of a config file$/,
  ],
  [
    "a bad value in the site config is reported in the site config, with its line",
    {
      "site.toml": '[llm]\nstream = true\nmax_retries = "three"\n',
      "user.toml": 'extends = "site.toml"\n[agent]\nmax_iterations = 4\n',
    },
    "user.toml",
    /^site\.toml:3: key llm\.max_retries: expected number, got the string "three"$/,
  ],
  [
    "broken TOML in the site config gives its line and column",
    { "site.toml": "[llm\n", "user.toml": 'extends = "site.toml"\n' },
    "user.toml",
    /^site\.toml:1:5: invalid TOML: /,
  ],
  [
    "a bad value is reported where it stands, not a wrong type a file above overrides",
    {
      "site.toml": "[ui]\ncolor = 7\n",
      "team.toml": 'extends = "site.toml"\n[agent]\nmax_iterations = "many"\n',
      "user.toml": 'extends = "team.toml"\n[agent]\nmax_iterations = 5\n',
    },
    "user.toml",
    /^site\.toml:2: key ui\.color: expected one of "auto", "always", "never", got number 7$/,
  ],
  [
    "a path in another user's home (~user/) is refused where it is written, not resolved elsewhere",
    {
      "site/site.toml": '[safety]\nlimits_file = "~root/limits.toml"\n',
      "user.toml": 'extends = "site/site.toml"\n',
    },
    "user.toml",
    /^site\/site\.toml:2: key safety\.limits_file: "~root\/limits\.toml" names another user's home, which is not supported; write the absolute path$/,
  ],
  [
    "a ~user program of a hook is refused too",
    {
      "user.toml": '[[hooks.before_tool]]\ncommand = ["~ops/bin/check"]\n',
    },
    "user.toml",
    /^user\.toml:1: key hooks\.before_tool: "~ops\/bin\/check" names another user's home/,
  ],
];

for (const [name, files, start, expected] of CHAIN_ERRORS) {
  Deno.test(`config chain: ${name}`, async () => {
    await using dir = await tempDir();
    for (const [f, text] of Object.entries(files)) await write(`${dir.path}/${f}`, text);
    await assert.rejects(
      () => loadConfig({ path: start, env: env(), cwd: dir.path }),
      (e) => e instanceof ConfigError && expected.test(e.message),
    );
  });
}

Deno.test("more than eight files extending each other are refused", async () => {
  await using dir = await tempDir();
  for (let i = 0; i < 10; i++) {
    await write(`${dir.path}/c${i}.toml`, `extends = "c${i + 1}.toml"\n`);
  }
  await write(`${dir.path}/c10.toml`, "");
  await assert.rejects(
    () => loadConfig({ path: "c0.toml", env: env(), cwd: dir.path }),
    /more than 8 config files extend each other/,
  );
});

Deno.test("display files, launcher and hook programs resolve beside the file that names them", async () => {
  await using dir = await tempDir();
  const text = '[[displays]]\nname = "x"\nfile = "screens/x.bob"\n' +
    '[launchers.phoebus]\ncommand = ["bin/phoebus", "{file}"]\n' +
    '[[hooks.before_tool]]\ncommand = ["hooks/check", "--x"]\n[[hooks.after_tool]]\ncommand = ["logger"]\n';
  const path = await write(`${dir.path}/site/c.toml`, text);
  const chain = await readChain(
    { path, shown: "c.toml", explicit: true },
    undefined,
    (p) => Deno.readTextFile(p),
    "/home/op",
  );
  const { raw } = mergeChain(chain);
  const site = `${dir.path}/site`;
  assert.deepEqual(raw.displays, [{ name: "x", file: `${site}/screens/x.bob` }]);
  assert.deepEqual(raw.launchers, { phoebus: { command: [`${site}/bin/phoebus`, "{file}"] } });
  assert.deepEqual(raw.hooks, {
    before_tool: [{ command: [`${site}/hooks/check`, "--x"] }],
    after_tool: [{ command: ["logger"] }],
  });
});

Deno.test("keyLines finds tables, dotted keys, quoted keys and lists of tables", () => {
  const lines = keyLines(
    'a = 1\nllm.base_url = "x"\n[epics]\n"pvws_url" = "y"\n[[displays]]\nname = "d"\n' +
      "[[displays]]\nname = \"e\"\n[llm.models]\nfast = 'f'\n",
  );
  assert.equal(lines.get("a"), 1);
  assert.equal(lines.get("llm.base_url"), 2);
  assert.equal(lines.get("epics"), 3);
  assert.equal(lines.get("epics.pvws_url"), 4);
  assert.equal(lines.get("displays"), 5);
  assert.equal(lines.get("llm.models.fast"), 10);
});

Deno.test("extends naming a FIFO, a device or a directory is one line naming the file and line of the extends", async () => {
  await using dir = await tempDir();
  const fifo = `${dir.path}/fifo.toml`;
  assert.ok((await new Deno.Command("mkfifo", { args: [fifo] }).output()).success);
  for (
    const [target, what] of [
      [fifo, /is a FIFO \(named pipe\), not a regular file; name a config file$/],
      ["/dev/zero", /is a character device, not a regular file; name a config file$/],
      [dir.path, /is a directory, not a regular file; name a config file$/],
    ] as const
  ) {
    await write(`${dir.path}/user.toml`, `# mine\nextends = "${target}"\n`);
    await assert.rejects(
      () => loadConfig({ path: "user.toml", env: env(), cwd: dir.path }),
      (e) =>
        e instanceof ConfigError && /^user\.toml:2: extends: /.test(e.message) &&
        what.test(e.message),
    );
  }
});
